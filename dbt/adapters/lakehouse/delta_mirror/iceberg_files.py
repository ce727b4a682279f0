"""What the Delta log describes, read from Iceberg: the snapshot's live data files with their
Delta stats and partition values, the schemas those files were written with, and the table's
top-level columns by field id. Metadata only: no data file is read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.delta_mirror.file_stats import (
    ColumnStats,
    partition_value,
    stats_json,
)
from dbt.adapters.lakehouse.delta_mirror.log import DataFile, DeltaMirrorError, relative_path
from dbt.adapters.lakehouse.iceberg.table_name import TableName, quote
from dbt.adapters.lakehouse.iceberg.tables import java_tables, load_table


def load(spark: Any, table: TableName) -> Any:
    loaded = load_table(spark, table)
    if loaded is None:
        raise DeltaMirrorError(f"Table {table} does not exist.")
    return loaded


def top_level_ids(schema: Any) -> dict[int, str]:
    return {int(c.fieldId()): str(c.name()) for c in schema.columns()}


def snapshot_schema(loaded: Any, snapshot_id: int | None) -> dict[int, str] | None:
    """The top-level schema a snapshot was committed with; None when it is unknown (expired)."""
    snapshot = None if snapshot_id is None else loaded.snapshot(snapshot_id)
    schema_id = None if snapshot is None else snapshot.schemaId()
    schema = None if schema_id is None else loaded.schemas().get(schema_id)
    return None if schema is None else top_level_ids(schema)


def spark_fields(spark: Any, loaded: Any) -> list[dict[str, Any]]:
    struct = java_tables(spark).spark_schema(loaded.schema())
    return list(json.loads(struct.json())["fields"])


def type_name(spark_type: Any) -> str:
    return spark_type if isinstance(spark_type, str) else "nested"


def identity_fields(loaded: Any) -> list[str]:
    schema = loaded.schema()
    return [
        str(schema.findColumnName(f.sourceId()))
        for f in loaded.spec().fields()
        if f.transform().isIdentity()
    ]


def _metric(column: str, spark_type: str, bound: str) -> str:
    value = f"readable_metrics.{quote(column)}.{bound}"
    if spark_type == "timestamp":
        return f"unix_micros({value})"
    if spark_type in ("timestamp_ntz", "date") or spark_type.startswith("decimal"):
        return f"cast({value} as string)"
    return value


def read_files(
    spark: Any,
    table: TableName,
    snapshot_id: int,
    root: str,
    types: Mapping[str, str],
    partition_columns: list[str],
) -> list[DataFile]:
    """The snapshot's live data files with Delta stats and partition values, from Iceberg's
    `files` metadata table (its manifests; no data file is read). Delete files that still
    apply to live data make the table unmirrorable (merge-on-read)."""
    # Partition columns carry their values in partitionValues; Delta writers leave them out
    # of the stats.
    stats_columns = [
        c for c in types if types[c] not in ("nested", "binary") and c not in partition_columns
    ]
    selects = ["content", "file_path", "file_size_in_bytes", "record_count"]
    for name in partition_columns:
        selects.append(f"cast(partition.{quote(name)} as string)")
    for name in stats_columns:
        spark_type = types[name]
        selects += [
            _metric(name, spark_type, "lower_bound"),
            _metric(name, spark_type, "upper_bound"),
            f"readable_metrics.{quote(name)}.null_value_count",
            f"readable_metrics.{quote(name)}.nan_value_count",
        ]
    rows = spark.sql(
        f"select {', '.join(selects)} from {table.sql_name}.files VERSION AS OF {snapshot_id}"
    ).collect()
    files: list[DataFile] = []
    deletes = 0
    for row in rows:
        if int(row[0]) != 0:
            deletes += 1
            continue
        at = 4
        partition: dict[str, str | None] = {}
        for name in partition_columns:
            partition[name] = partition_value(types[name], row[at])
            at += 1
        columns: dict[str, ColumnStats] = {}
        for name in stats_columns:
            lower, upper, nulls, nans = row[at : at + 4]
            at += 4
            columns[name] = ColumnStats(lower, upper, nulls, nans)
        files.append(
            DataFile(
                path=relative_path(str(row[1]), root),
                size=int(row[2]),
                stats=stats_json(int(row[3]), columns, types),
                partition_values=partition,
            )
        )
    if deletes:
        _check_deletes(spark, table, snapshot_id, [f.path for f in files], root)
    return files


def _check_deletes(
    spark: Any, table: TableName, snapshot_id: int, live: list[str], root: str
) -> None:
    referenced = spark.sql(
        f"select distinct file_path from {table.sql_name}.position_deletes "
        f"VERSION AS OF {snapshot_id}"
    ).collect()
    hit = {relative_path(str(r[0]), root) for r in referenced} & set(live)
    equality = spark.sql(
        f"select count(*) from {table.sql_name}.files VERSION AS OF {snapshot_id} where content = 2"
    ).collect()[0][0]
    if hit or int(equality):
        raise DeltaMirrorError(
            f"Iceberg snapshot {snapshot_id} of {table} has delete files applying to "
            f"{len(hit)} live data file(s) (merge-on-read): Delta readers cannot apply them "
            "and would return deleted rows. Rewrite them away (`lakehouse_maintain` with "
            "compaction, or a --full-refresh) and keep the table copy-on-write."
        )


def writing_schemas(
    spark: Any, table: TableName, loaded: Any, snapshot_id: int
) -> list[dict[int, str]]:
    """The top-level schemas the snapshot's live data files were written with (every schema
    the table had, when a writing snapshot has been expired)."""
    rows = spark.sql(
        f"select distinct snapshot_id from {table.sql_name}.entries VERSION AS OF {snapshot_id} "
        "where status <> 2 and data_file.content = 0"
    ).collect()
    schemas = loaded.schemas()
    found: dict[int, dict[int, str]] = {}
    for row in rows:
        snapshot = loaded.snapshot(int(row[0]))
        schema_id = None if snapshot is None else snapshot.schemaId()
        if schema_id is None:
            return [top_level_ids(s) for s in schemas.values()]
        found[int(schema_id)] = top_level_ids(schemas.get(schema_id))
    return list(found.values())
