"""An Iceberg table's Java object as audited runs and dual-format tables read it: loaded afresh
from its catalog (None when missing), its location and its properties."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg import java
from dbt.adapters.lakehouse.iceberg.table_name import TableName

# What reads a table's Java object (refs, properties, schema ids) and so needs the driver here.
JAVA_TABLE_FEATURES = "Audited publishing (write_audit_publish) and dual-format tables"
WITHOUT_CONNECT = (
    "run audited or dual-format (table_formats: [iceberg, delta]) work with a local or "
    "cluster spark.master, or drop write_audit_publish / table_formats for this target."
)


def java_tables(spark: Any) -> java.Bridge:
    """The Iceberg bridge for these features; refused under Spark Connect."""
    return java.bridge(spark, JAVA_TABLE_FEATURES, WITHOUT_CONNECT)


def load_table(spark: Any, table: TableName) -> Any | None:
    """The Iceberg table (Java), freshly read from its catalog; None when it does not exist."""
    iceberg = java_tables(spark)
    try:
        loaded = iceberg.load(spark, table.sql_name)
    except Exception as exc:
        if any(sign in str(exc) for sign in ("NoSuchTable", "TABLE_OR_VIEW_NOT_FOUND")):
            return None
        raise
    loaded.refresh()
    return loaded


def table_location(spark: Any, table: TableName) -> str | None:
    """The table's root folder; None when it does not exist. Under Spark Connect from
    DESCRIBE (no Java table there), so maintenance and rollback can look for a Delta log."""
    if not runtime.is_connect(spark):
        loaded = load_table(spark, table)
        return None if loaded is None else str(loaded.location())
    try:
        rows = spark.sql(f"describe table extended {table.sql_name}").collect()
    except Exception as exc:
        if any(sign in str(exc) for sign in ("NoSuchTable", "TABLE_OR_VIEW_NOT_FOUND")):
            return None
        raise
    return next((str(row[1]) for row in rows if str(row[0]).strip() == "Location"), None)


def table_property(spark: Any, table: TableName, key: str) -> tuple[bool, str | None]:
    """(exists, the table property's value)."""
    loaded = load_table(spark, table)
    if loaded is None:
        return False, None
    value = loaded.properties().get(key)
    return True, None if value is None else str(value)
