"""Launching the driver JVM: which `java`, where its console output goes, and which settings
only take effect when the JVM is launched (a change in them means a relaunch, not a new
SparkContext in the running JVM).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any


def java_executable() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def java_feature_version(java: str) -> int | None:
    """The JDK's feature version (17 for 17.0.15), read from its `release` file, not by running
    it; None when the file is missing (a JDK laid out otherwise: Spark itself will tell)."""
    release = Path(java).resolve().parent.parent / "release"
    try:
        text = release.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            version = line.split("=", 1)[1].strip().strip('"')
            parts = version.split(".")
            number = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
            return int(number) if number.isdigit() else None
    return None


def spark_log_path() -> Path:
    """Where the JVM's console output goes: `$LAKEHOUSE_SPARK_LOG`, else `spark.log` beside
    the running dbt command's own log."""
    configured = os.environ.get("LAKEHOUSE_SPARK_LOG")
    if configured:
        return Path(configured).expanduser()
    base = running_dbt_log_path() or os.environ.get("DBT_LOG_PATH") or "logs"
    return Path(base).absolute() / "spark.log"


def running_dbt_log_path() -> str | None:
    """The folder dbt writes dbt.log to in this command: `--log-path`, `$DBT_LOG_PATH`, or the
    project's `logs/` (dbt-core resolves them into its LOG_PATH flag). Not the working folder:
    `dbt run --project-dir other/` must leave nothing where the user stood. None outside dbt's
    CLI (`dbt-lakehouse history`), whose flags are not set up."""
    try:
        from dbt.flags import get_flags

        log_path = getattr(get_flags(), "LOG_PATH", None)
    except Exception:  # dbt-core's flags are not set up outside its CLI
        return None
    return str(log_path) if log_path else None


# Settings Spark applies when it launches the driver JVM (spark-submit: classpath, packages
# resolved by Ivy, JVM options and heap), and never again for a new SparkContext in that JVM.
LAUNCH_ONLY_KEYS = (
    "spark.jars",
    "spark.jars.packages",
    "spark.jars.repositories",
    "spark.jars.ivySettings",
    "spark.jars.excludes",
    "spark.driver.extraClassPath",
    "spark.driver.extraJavaOptions",
    "spark.driver.memory",
)


def launch_settings(conf: Any) -> tuple[tuple[str, str], ...]:
    """The launch-only part of a spec's conf: when it differs, the JVM must be relaunched."""
    given = dict(conf)
    return tuple((key, given[key]) for key in LAUNCH_ONLY_KEYS if key in given)


def process_running(pid: int) -> bool:
    """Whether process `pid` runs: a killed child not yet reaped (a zombie) runs nothing."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return " (zombie)" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:  # no /proc (macOS): kill(0) said enough
        return True


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a process's output, for a message saying why it did not start."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output captured)"


def usable_java() -> str:
    """The `java` Spark starts with, refused (naming the fix) when missing or of a version the
    engine's Spark line does not run on."""
    from dbt.adapters.lakehouse.engine.jars.lines import check_supported
    from dbt.adapters.lakehouse.exceptions import EngineSetupError

    java = java_executable()
    if java is None:
        raise EngineSetupError(
            "Spark needs Java 17 (11 and 21 work too), and no `java` was found on PATH or "
            "in JAVA_HOME. Fix: install a JDK/JRE (Debian/Ubuntu: `apt-get install "
            "openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) or set JAVA_HOME."
        )
    line = check_supported()
    java_version = java_feature_version(java)
    if java_version is not None and java_version < line.java_min:
        raise EngineSetupError(
            f"{line.name} needs Java {line.java_min} or newer, and {java} is Java "
            f"{java_version}. Fix: point JAVA_HOME at a JDK {line.java_min}+ (Debian/Ubuntu: "
            "`apt-get install openjdk-17-jre-headless`), or use the Spark 3.5 line "
            '(`pip install "pyspark==3.5.*"`).'
        )
    if java_version is not None and java_version > line.java_max:
        raise EngineSetupError(
            f"{line.name} does not start on Java {java_version} ({java}): its Hadoop client "
            "calls Subject.getSubject, which Java 23 and newer refuse. Fix: point JAVA_HOME "
            f"at a JDK {line.java_min} to {line.java_max} (17 or 21, the long-term releases; "
            "Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`)."
        )
    return java
