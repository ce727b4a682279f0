"""The engine lines the adapter runs on, and which one the installed PySpark selects.

A line is a Spark minor version with the Scala and Hadoop builds inside its PySpark wheel: the
jars a session loads must match all three (docs/engine-lines.md). The installed PySpark decides,
so one Python environment serves one line, and a machine may keep one environment per line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from dbt.adapters.lakehouse.exceptions import EngineSetupError


@dataclass(frozen=True)
class EngineLine:
    spark: str  # Spark's binary version, as in Iceberg's runtime artifact name
    scala: str  # the Scala binary version of PySpark's jars
    hadoop: str  # the Hadoop client inside PySpark's wheel (hadoop-client-api-<x>.jar)
    java_min: int  # the oldest Java this Spark runs on
    # The newest Java it starts on: its Hadoop client calls Subject.getSubject, which Java 23+
    # refuses (23 unless the Security Manager is allowed, 24+ always).
    java_max: int = 22

    @property
    def name(self) -> str:
        return f"Spark {self.spark} (Scala {self.scala})"


# The Iceberg release on every line (its runtime jar is per line: sets.py).
ICEBERG_VERSION = "1.12.0"
# Apache DataFusion Comet, native execution (engine/native.py): on the 4.1 line only.
COMET_VERSION = "1.2.0"
COMET_LINES = ("4.1",)
DEFAULT_LINE = "4.1"
LINES: dict[str, EngineLine] = {
    "3.5": EngineLine(spark="3.5", scala="2.12", hadoop="3.3.4", java_min=11),
    "4.1": EngineLine(spark="4.1", scala="2.13", hadoop="3.4.2", java_min=17),
}


@cache
def pyspark_version() -> str:
    """PySpark's version from its installed metadata ("" without PySpark): importing PySpark
    to read it costs a tenth of a second, which a command deciding whether to attach to an
    engine at all does not spend."""
    # Cached: dbt renders `target` (connection_info, whose engine label reads this) for every
    # node and macro context, hundreds of times a build, and each metadata lookup scans
    # site-packages (0.3 ms).
    try:
        return version("pyspark")
    except PackageNotFoundError:  # a source tree on the path, without its metadata
        try:
            import pyspark
        except ImportError:
            return ""
        return str(pyspark.__version__)


def line_of(pyspark: str) -> EngineLine | None:
    """The line a PySpark version belongs to, or None for a version the adapter does not run on."""
    return LINES.get(".".join(pyspark.split(".")[:2]))


@cache
def installed_line() -> EngineLine:
    """The installed PySpark's line; the default line's jars when PySpark is missing or of
    another line (check_supported says so when a session starts)."""
    return line_of(pyspark_version()) or LINES[DEFAULT_LINE]


def check_supported() -> EngineLine:
    """The installed line, or an error naming the supported ones and how to install one."""
    installed = pyspark_version()
    line = line_of(installed)
    if line is None:
        raise EngineSetupError(
            f"PySpark {installed or '(not installed)'} is not an engine line dbt-lakehouse runs "
            f"on. Fix: install one of {', '.join(sorted(LINES))}: "
            '`pip install "pyspark==4.1.*"` (the default; Java 17 or newer) or '
            '`pip install "pyspark==3.5.*"`.'
        )
    return line


def engine_label() -> str:
    """What `dbt debug` prints as the engine: the installed PySpark, its line and Iceberg."""
    installed = pyspark_version()
    line = line_of(installed)
    if line is None:
        return f"PySpark {installed or '(not installed)'}: not a supported line (3.5, 4.1)"
    return f"Spark {installed} (line {line.spark}, Scala {line.scala}), Iceberg {ICEBERG_VERSION}"
