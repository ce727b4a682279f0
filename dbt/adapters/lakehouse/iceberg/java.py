"""The one way into Iceberg's Java side (py4j): the driver's JVM for a feature, Iceberg's static
methods looked up once per SparkContext, and loading a table's Java object.

Under Spark Connect there is no JVM in this process: `bridge` refuses with the caller's feature
and what to do instead (engine.runtime.driver_jvm), so each feature keeps its own wording.
"""

from __future__ import annotations

import threading
from typing import Any

from dbt.adapters.lakehouse.engine import runtime

_SPARK3_UTIL = "org.apache.iceberg.spark.Spark3Util"


class Bridge:
    """One SparkContext's Iceberg handles. Each is looked up on first use and kept: a py4j
    attribute lookup is a round trip of its own, and these are called per table."""

    def __init__(self, context: Any, jvm: Any) -> None:
        self.context = context  # a restarted session has a new one, and so a new bridge
        self.jvm = jvm
        self._handles: dict[str, Any] = {}

    def _static(self, path: str) -> Any:
        found = self._handles.get(path)
        if found is None:
            found = self.jvm
            for part in path.split("."):
                found = getattr(found, part)
            self._handles[path] = found
        return found

    @property
    def load_table(self) -> Any:
        """Spark3Util.loadIcebergTable(java session, name)."""
        return self._static(f"{_SPARK3_UTIL}.loadIcebergTable")

    @property
    def to_transforms(self) -> Any:
        return self._static(f"{_SPARK3_UTIL}.toTransforms")

    @property
    def describe(self) -> Any:
        return self._static(f"{_SPARK3_UTIL}.describe")

    @property
    def format_version(self) -> Any:
        return self._static("org.apache.iceberg.TableUtil.formatVersion")

    @property
    def is_ancestor_of(self) -> Any:
        return self._static("org.apache.iceberg.util.SnapshotUtil.isAncestorOf")

    @property
    def spark_schema(self) -> Any:
        """SparkSchemaUtil.convert: an Iceberg schema as Spark's StructType."""
        return self._static("org.apache.iceberg.spark.SparkSchemaUtil.convert")

    @property
    def map_of(self) -> Any:
        return self._static("java.util.Map.of")

    def load(self, spark: Any, name: str) -> Any:
        """The Iceberg table (Java) `name` (Spark's syntax) names. Not refreshed: without the
        catalog cache (the default) the load reads the table's metadata afresh."""
        return self.load_table(spark._jsparkSession, name)

    def private_static(self, class_name: str, field_name: str) -> Any:
        """The value of a private static field of an Iceberg class."""
        # Plain Class.forName uses py4j's own loader, which cannot see the jars of spark.jars.
        loader = self.jvm.java.lang.Thread.currentThread().getContextClassLoader()
        holder = self.jvm.java.lang.Class.forName(class_name, True, loader)
        declared = holder.getDeclaredField(field_name)
        declared.setAccessible(True)
        return declared.get(None)


_LOCK = threading.Lock()
_current: Bridge | None = None


def bridge(spark: Any, feature: str, instead: str) -> Bridge:
    """The bridge of the session's SparkContext; under Spark Connect, `feature` refused with
    the fix `instead` (engine.runtime.driver_jvm)."""
    global _current
    jvm = runtime.driver_jvm(spark, feature, instead)
    context = spark.sparkContext
    found = _current
    if found is not None and found.context is context:
        return found
    with _LOCK:
        if _current is None or _current.context is not context:
            _current = Bridge(context, jvm)
        return _current
