"""The one way into Iceberg's Java side (py4j): the driver's JVM for a feature, Iceberg's static
methods looked up once per SparkContext, and loading a table's Java object.

Under Spark Connect there is no JVM in this process: `bridge` refuses with the caller's feature
and what to do instead (engine.runtime.driver_jvm), so each feature keeps its own wording.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.runtime import PerContext

_SPARK3_UTIL = "org.apache.iceberg.spark.Spark3Util"


class _Static:
    """A static Java method, as a Bridge attribute: looked up on first use and kept."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __get__(self, bridge: Bridge, owner: type | None = None) -> Any:
        return bridge._static(self.path)


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
            class_name, method = path.rsplit(".", 1)
            found = getattr(runtime.java_class(self.jvm, class_name), method)
            self._handles[path] = found
        return found

    load_table = _Static(f"{_SPARK3_UTIL}.loadIcebergTable")  # (java session, name)
    to_transforms = _Static(f"{_SPARK3_UTIL}.toTransforms")
    describe = _Static(f"{_SPARK3_UTIL}.describe")
    format_version = _Static("org.apache.iceberg.TableUtil.formatVersion")
    is_ancestor_of = _Static("org.apache.iceberg.util.SnapshotUtil.isAncestorOf")
    spark_schema = _Static("org.apache.iceberg.spark.SparkSchemaUtil.convert")  # a StructType
    map_of = _Static("java.util.Map.of")
    metadata_json = _Static("org.apache.iceberg.TableMetadataParser.toJson")  # a TableMetadata

    def load(self, spark: Any, name: str) -> Any:
        """The Iceberg table (Java) `name` (Spark's syntax) names. Not refreshed: without the
        catalog cache (the default) the load reads the table's metadata afresh."""
        return self.load_table(spark._jsparkSession, name)

    def private_static(self, class_name: str, field_name: str) -> Any:
        """The value of a private static field of an Iceberg class."""
        # Plain Class.forName uses py4j's own loader, which cannot see the jars of spark.jars.
        loader = runtime.java_class(self.jvm, "java.lang.Thread").currentThread()
        holder = runtime.java_class(self.jvm, "java.lang.Class").forName(
            class_name, True, loader.getContextClassLoader()
        )
        declared = holder.getDeclaredField(field_name)
        declared.setAccessible(True)
        return declared.get(None)


_BRIDGES: PerContext[Bridge] = PerContext()


def bridge(spark: Any, feature: str, instead: str) -> Bridge:
    """The bridge of the session's SparkContext; under Spark Connect, `feature` refused with
    the fix `instead` (engine.runtime.driver_jvm)."""
    jvm = runtime.driver_jvm(spark, feature, instead)
    context = spark.sparkContext
    return _BRIDGES.get(context, lambda: Bridge(context, jvm))
