"""Reading a table's stats and last commit from its current Iceberg metadata, loaded once
through the catalog: the only part of the stats that touches the JVM (iceberg/java.py). Under
Spark Connect it reads the same through SQL: table properties, DESCRIBE, `<t>.snapshots`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.exceptions import RelationMissingError
from dbt.adapters.lakehouse.iceberg import java
from dbt.adapters.lakehouse.iceberg.table_stats import TableStats, committed_at, table_stats

# Never shown: under Spark Connect the reader takes the SQL path before asking for the JVM.
_FEATURE = "Table stats from Iceberg's Java metadata"
_INSTEAD = "read them through SQL (Spark Connect does)."


def _load(spark: Any, table: str) -> tuple[java.Bridge, Any]:
    iceberg = java.bridge(spark, _FEATURE, _INSTEAD)
    # Without the catalog cache (the default) this reads the table's metadata afresh.
    return iceberg, iceberg.load(spark, table)


_SUMMARY_KEYS = (
    "total-records",
    "total-position-deletes",
    "total-equality-deletes",
    "total-data-files",
    "total-files-size",
)


def read_table_stats(spark: Any, table: str) -> TableStats:
    """The stats of `table` (`catalog`.`ns`.`t`, Spark's syntax). Raises the engine's error
    when it cannot be loaded (missing, a view)."""
    if runtime.is_connect(spark):
        return _read_stats_by_sql(spark, table)
    methods, iceberg = _load(spark, table)
    snapshot = iceberg.currentSnapshot()
    snapshot_id = timestamp = None
    summary: dict[str, str | None] = {}
    if snapshot is not None:
        snapshot_id, timestamp = snapshot.snapshotId(), snapshot.timestampMillis()
        java_summary = snapshot.summary()
        summary = {key: java_summary.get(key) for key in _SUMMARY_KEYS}
    return table_stats(
        snapshot_id,
        timestamp,
        summary,
        methods.format_version(iceberg),
        [str(t.toString()) for t in methods.to_transforms(iceberg.spec())],
        str(methods.describe(iceberg.sortOrder()) or ""),
    )


def read_last_commit(spark: Any, table: str) -> dt.datetime | None:
    """When the current snapshot of `table` was committed; None when it has none yet."""
    if runtime.is_connect(spark):
        current = _current_snapshot_by_sql(spark, table, _table_properties(spark, table))
        return None if current is None else committed_at(current[1])
    _, iceberg = _load(spark, table)
    snapshot = iceberg.currentSnapshot()
    return None if snapshot is None else committed_at(snapshot.timestampMillis())


# ---- the same through SQL, for a Spark Connect session (no JVM in this process) ---------------
# Iceberg's Spark table shows its current snapshot id, format version and sort order as table
# properties and its partition spec in DESCRIBE; the snapshot's summary and commit time come
# from the `snapshots` metadata table, filtered to that one snapshot.


def _table_properties(spark: Any, table: str) -> dict[str, str]:
    """The table's properties; an object without Iceberg's snapshot pointer (a view) is not a
    table here, as it is not to the Java reader."""
    rows = spark.sql(f"show tblproperties {table}").collect()
    properties = {str(row[0]): str(row[1]) for row in rows}
    if "current-snapshot-id" not in properties:
        raise RelationMissingError(f"{table} is not an Iceberg table (a view has no snapshots)")
    return properties


def _current_snapshot_by_sql(
    spark: Any, table: str, properties: Mapping[str, str]
) -> tuple[int, int, dict[str, str | None]] | None:
    """(id, commit millis, summary) of the table's current snapshot; None before the first."""
    current = properties.get("current-snapshot-id", "none")
    if not current.isdigit():
        return None
    rows = spark.sql(
        "select unix_millis(committed_at) as committed_millis, summary "
        f"from {table}.snapshots where snapshot_id = {int(current)}"
    ).collect()
    if not rows:  # expired meanwhile: the table moved on under us
        return None
    summary = dict(rows[0]["summary"] or {})
    return int(current), int(rows[0]["committed_millis"]), summary


def _partition_transforms(spark: Any, table: str) -> list[str]:
    """DESCRIBE's `# Partitioning` section: one `Part <n>` row per transform."""
    transforms: list[str] = []
    in_section = False
    for row in spark.sql(f"describe table {table}").collect():
        name = str(row[0] or "").strip()
        if name.startswith("#"):
            in_section = name == "# Partitioning"
        elif in_section and name.startswith("Part "):
            transforms.append(str(row[1]))
    return transforms


def _read_stats_by_sql(spark: Any, table: str) -> TableStats:
    properties = _table_properties(spark, table)
    current = _current_snapshot_by_sql(spark, table, properties)
    snapshot_id, timestamp, summary = current if current is not None else (None, None, {})
    return table_stats(
        snapshot_id,
        timestamp,
        {key: summary.get(key) for key in _SUMMARY_KEYS},
        int(properties.get("format-version", "2")),
        _partition_transforms(spark, table),
        properties.get("sort-order", ""),
    )
