"""Resolving a profile's jar needs to paths, and `dbt-lakehouse install`'s fetch of every set.

A need the profile covers itself (its `spark.jars` or `spark.jars.packages`) is left to it;
the others come from the cache, fetched on demand, and every one missing is named in one error
with the command that installs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars.cache import CachedJarSet, cache_dir, jar_names
from dbt.adapters.lakehouse.engine.jars.sets import (
    CACHED_JARS,
    ICEBERG_JARS,
    PACKAGES_REPLACING,
    packages_cover,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError


def iceberg_runtime_jar(env: Mapping[str, str] | None = None) -> Path:
    """The Iceberg Spark runtime jar (override, cached, or fetched into the cache now)."""
    located = ICEBERG_JARS.locate(env)
    if located is not None:
        return located[0]
    return ICEBERG_JARS.install(env)[0]


def resolve_jars(
    needs: Iterable[str],
    extra: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
    packages: Iterable[str] = (),
) -> list[Path]:
    """Paths of every jar the session needs; fetches cached ones on demand.

    `extra` is the profile's `spark.jars`, `packages` its `spark.jars.packages` coordinates: a
    set they provide is not added. Raises one EngineSetupError naming each missing jar and the
    command that installs it.
    """
    env = os.environ if env is None else env
    extra = list(extra)
    packages = list(packages)
    paths: list[Path] = []
    problems: list[str] = []
    for need in sorted(set(needs)):
        if packages_cover(need, packages):
            continue  # Spark resolves the user's coordinates, dependencies included
        if need in ("aws-sdk-v2", "azure-sdk") and extra:
            continue  # user-supplied: we cannot know which of their jars carries the SDK
        if need == "s3a" and user_supplies_hadoop_aws(extra):
            continue  # the user's hadoop-aws comes with the SDK it was built against
        if need == "abfs" and any(Path(str(p)).name.startswith("hadoop-azure-") for p in extra):
            continue
        jar_set = CACHED_JARS.get(need)
        if jar_set is None:
            problems.append(f"no source is known for the jar set '{need}'")
            continue
        located = jar_set.locate(env)
        if located is None and fetch_missing:
            try:
                located = jar_set.install(env)
            except EngineSetupError as exc:
                problems.append(
                    f"{jar_names(jar_set)} ({jar_set.origin}) not in "
                    f"{cache_dir(env) / 'jars'}, and fetching failed: {exc.msg}. "
                    f"Fix: {_fix(jar_set)}"
                )
                continue
        if located is None:
            problems.append(
                f"{jar_names(jar_set)} ({jar_set.origin}) missing. Fix: {_fix(jar_set)}"
            )
            continue
        paths.extend(located)
    paths.extend(Path(p).expanduser() for p in extra)
    paths = list(dict.fromkeys(paths))  # a jar two sets share (the AWS SDK v2) loads once
    missing_files = [p for p in paths if not p.is_file()]
    problems.extend(f"jar file not found: {p}" for p in missing_files)
    if problems:
        raise EngineSetupError(
            "Spark cannot start, jars are missing:\n  - " + "\n  - ".join(problems)
        )
    return paths


def _fix(jar_set: CachedJarSet) -> str:
    fix = f"run `dbt-lakehouse install`, or set {_overrides(jar_set)} to the jars' paths"
    if jar_set.need in ("aws-sdk-v2", "azure-sdk"):
        # No registry but Maven Central ships the SDK v2 unshaded.
        fix += ", or list the bundle under `spark: {jars: [...]}` in the profile"
    coordinates = " / ".join(p.rstrip(":") for p in PACKAGES_REPLACING.get(jar_set.need, ()))
    return f"{fix}, or name {coordinates} in `spark.jars.packages`."


def user_supplies_hadoop_aws(extra: Iterable[str]) -> bool:
    """True when the profile's `spark.jars` already carries a hadoop-aws jar."""
    return any(Path(str(p)).name.startswith("hadoop-aws-") for p in extra)


def _overrides(jar_set: CachedJarSet) -> str:
    return " / ".join(jar.env_override for jar in jar_set.jars)


@dataclass(frozen=True)
class InstallReport:
    cached: list[Path]
    skipped: dict[str, str]  # an optional set no source delivered -> why


def install_all(
    env: Mapping[str, str] | None = None, needs: Iterable[str] | None = None
) -> InstallReport:
    """Fetch jar sets into the cache (the `dbt-lakehouse install` step): every one, or those
    named by `needs`.

    The sets download side by side: one stream rarely fills the line, and a first install is
    mostly waiting on the network. A required set that no source delivers raises; an optional
    one is reported as skipped.
    """
    names = list(CACHED_JARS) if needs is None else list(dict.fromkeys(needs))
    unknown = [n for n in names if n not in CACHED_JARS]
    if unknown:
        raise EngineSetupError(
            f"no jar set named {', '.join(unknown)}; the sets are {', '.join(CACHED_JARS)}"
        )
    sets = [CACHED_JARS[n] for n in names]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(jar_set.install, env) for jar_set in sets]
    report = InstallReport(cached=[], skipped={})
    for jar_set, future in zip(sets, futures, strict=True):
        try:
            report.cached.extend(future.result())
        except EngineSetupError as exc:
            if jar_set.required:
                raise
            report.skipped[jar_set.need] = exc.msg
    return report
