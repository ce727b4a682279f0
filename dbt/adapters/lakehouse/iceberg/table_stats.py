"""Table stats for the docs catalog, and source freshness, from Iceberg metadata alone.

Everything is read from the table's current metadata, loaded once through the catalog: the
current snapshot (its id, commit time, and the summary's totals: total-records,
total-position-deletes, total-equality-deletes, total-data-files, total-files-size), the
format version, the partition spec and the sort
order. No manifest or data file is opened, so a table of a billion rows costs what an empty one
does. The alternatives cost more: DESCRIBE TABLE EXTENDED (which the catalog runs anyway) shows
neither the totals nor the commit time, and a `<t>.snapshots` query is a Spark job per table
(bench/RESULTS.md, "Docs catalog stats").

The reader (`read_table_stats`, `read_last_commit`) is the only part that touches the JVM (under
Spark Connect it reads the same through SQL: table properties, DESCRIBE, `<t>.snapshots`);
what the stats are and how dbt's catalog receives them are pure functions of `TableStats`.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.contracts.metadata import StatsItem
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.exceptions import RelationMissingError

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
NO_SNAPSHOT = "none (no snapshot yet)"


class MetadataFreshnessError(DbtRuntimeError):
    """A source's freshness cannot come from metadata: its table is missing, or a view."""

    CODE = 10107
    MESSAGE = "Lakehouse freshness error"


@dataclass(frozen=True)
class TableStats:
    # None: the table has no snapshot yet (created empty); it then holds no rows.
    snapshot_id: int | None
    committed_at: dt.datetime | None  # UTC
    # None when the summary lacks the total: Iceberg stops keeping a total once a commit by
    # some other writer left it out. Never guessed by scanning. Also None when equality
    # deletes make it unknowable from metadata; `row_count_at_most` then bounds it.
    row_count: int | None
    data_files: int | None
    total_bytes: int | None
    format_version: int
    # Spark's spelling, as `partition_by` takes it: ('days(ts)', 'bucket(16, id)').
    partition_spec: tuple[str, ...]
    sort_order: str  # '' when unsorted, else e.g. 'id DESC NULLS LAST'
    # Set only when equality deletes exist: live rows are at most this many.
    row_count_at_most: int | None = None


def committed_at(timestamp_millis: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=int(timestamp_millis))


def _total(summary: Mapping[str, str | None], key: str) -> int | None:
    value = summary.get(key)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def live_rows(summary: Mapping[str, str | None]) -> tuple[int | None, int | None]:
    """(rows, None) when the summary says how many rows are live; (None, at most) when
    equality deletes (or delete totals the summary lacks) leave that to a scan; (None, None)
    when total-records is missing.

    total-records counts the rows of the live data files, deleted or not. A position delete
    names one row of one data file, so each removes exactly one row: subtract them. An
    equality delete removes every row (of older data files in its partition) whose key
    matches, anything from none to many, so the count is only bounded above then.
    One case still overstates the deletes: position deletes left dangling by a rewrite that
    did not drop them (another engine's compaction without rewrite_position_delete_files)."""
    records = _total(summary, "total-records")
    positions = _total(summary, "total-position-deletes")
    equalities = _total(summary, "total-equality-deletes")
    if records is None:
        return None, None
    # Iceberg writes the delete totals (0 when there are none) unless a commit by some other
    # writer left them out: a missing one means unknown, never none.
    rows = max(records - (positions or 0), 0)
    if equalities is None or positions is None:
        return (0, None) if records == 0 else (None, rows)
    if equalities:
        return None, rows
    return rows, None


def partition_field(transform: str) -> str:
    """A Spark partition transform as `partition_by` writes it: `identity(c)` is just `c`."""
    if transform.startswith("identity(") and transform.endswith(")"):
        return transform[len("identity(") : -1]
    return transform


def table_stats(
    snapshot_id: int | None,
    timestamp_millis: int | None,
    summary: Mapping[str, str | None],
    format_version: int,
    transforms: Iterable[str],
    sort_order: str,
) -> TableStats:
    """The stats of a table's current metadata as the reader found it."""
    spec = tuple(partition_field(str(t)) for t in transforms)
    if snapshot_id is None:
        return TableStats(None, None, 0, 0, 0, int(format_version), spec, sort_order.strip())
    rows, at_most = live_rows(summary)
    return TableStats(
        snapshot_id=int(snapshot_id),
        committed_at=None if timestamp_millis is None else committed_at(timestamp_millis),
        row_count=rows,
        row_count_at_most=at_most,
        data_files=_total(summary, "total-data-files"),
        total_bytes=_total(summary, "total-files-size"),
        format_version=int(format_version),
        partition_spec=spec,
        sort_order=sort_order.strip(),
    )


# ---- the docs catalog -------------------------------------------------------------------------
# dbt's catalog takes a table's stats from its first row of the catalog table, as columns
# `stats:<id>:label|value|description|include` (dbt-core's format_stats). dbt-docs formats
# `row_count` as a number and `bytes` as a size, so those two keep Snowflake's ids.


@dataclass(frozen=True)
class Stat:
    id: str
    label: str
    description: str
    numeric: bool = False


STATS: tuple[Stat, ...] = (
    Stat(
        "row_count",
        "Row count",
        "Rows in the current snapshot, from its summary (total-records less "
        "total-position-deletes); no data is scanned. A position delete left dangling by a "
        "compaction that did not remove it still counts, so the count can then fall short.",
        numeric=True,
    ),
    Stat(
        "row_count_at_most",
        "Row count (at most)",
        "The exact row count is not in the metadata: the table has equality deletes, which "
        "remove an unknown number of rows until a compaction applies them (or its snapshot "
        "summary lacks the delete totals). At most this many rows (total-records less "
        "total-position-deletes); the exact count needs a scan.",
        numeric=True,
    ),
    Stat(
        "data_files",
        "Data files",
        "Data files in the current snapshot (total-data-files).",
        numeric=True,
    ),
    Stat(
        "bytes",
        "Total size",
        "Bytes of the current snapshot's data and delete files (total-files-size).",
        numeric=True,
    ),
    Stat("snapshot_id", "Current snapshot", "The id of the table's current Iceberg snapshot."),
    Stat("last_modified", "Last commit", "When the current snapshot was committed (UTC)."),
    Stat("format_version", "Iceberg format version", "The table's Iceberg format version."),
    Stat(
        "partition_spec",
        "Partition spec",
        "The table's current partition spec, in partition_by form.",
    ),
    Stat("sort_order", "Sort order", "The table's write sort order (write_order_by)."),
)
_PARTS = ("label", "value", "description", "include")


def format_commit_time(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def stat_values(stats: TableStats) -> dict[str, int | str | None]:
    """Each stat's value; None where the metadata does not say (the stat is then left out)."""
    no_snapshot = stats.snapshot_id is None
    return {
        "row_count": stats.row_count,
        "row_count_at_most": stats.row_count_at_most,
        "data_files": stats.data_files,
        "bytes": stats.total_bytes,
        # Text: an id above 2**53 would lose digits as a JSON number.
        "snapshot_id": NO_SNAPSHOT if no_snapshot else str(stats.snapshot_id),
        "last_modified": (
            NO_SNAPSHOT
            if no_snapshot
            else None
            if stats.committed_at is None
            else format_commit_time(stats.committed_at)
        ),
        "format_version": str(stats.format_version),
        "partition_spec": ", ".join(stats.partition_spec) or "unpartitioned",
        "sort_order": stats.sort_order or "unsorted",
    }


def column_name(stat_id: str, part: str) -> str:
    return f"stats:{stat_id}:{part}"


# Catalog columns agate must keep as text: a snapshot id or format version would otherwise be
# read as a number, a commit time as a datetime, and dbt's StatsItem takes neither.
TEXT_COLUMNS: tuple[str, ...] = tuple(
    column_name(stat.id, part)
    for stat in STATS
    for part in ("label", "description", *(() if stat.numeric else ("value",)))
)


def catalog_columns(stats: TableStats | None) -> dict[str, Any]:
    """The `stats:...` columns of a table's catalog rows; all None for a view (no stats)."""
    if stats is None:
        return {column_name(stat.id, part): None for stat in STATS for part in _PARTS}
    values = stat_values(stats)
    columns: dict[str, Any] = {}
    for stat in STATS:
        value = values[stat.id]
        columns[column_name(stat.id, "label")] = stat.label
        columns[column_name(stat.id, "value")] = value
        columns[column_name(stat.id, "description")] = stat.description
        columns[column_name(stat.id, "include")] = value is not None
    return columns


def stats_items(stats: TableStats | None) -> dict[str, StatsItem]:
    """A table's stats as dbt's catalog builds them from the columns, `has_stats` included;
    none at all for a view (as other adapters give a relation without stats)."""
    if stats is None:
        return {}
    items: dict[str, StatsItem] = {}
    for stat_id, value in stat_values(stats).items():
        if value is None:
            continue
        stat = next(s for s in STATS if s.id == stat_id)
        items[stat_id] = StatsItem(
            id=stat_id,
            label=stat.label,
            value=value,
            include=True,
            description=stat.description,
        )
    items["has_stats"] = StatsItem(
        id="has_stats",
        label="Has Stats?",
        value=bool(items),
        include=False,
        description="Indicates whether there are statistics for this table",
    )
    return items


# ---- reading the metadata --------------------------------------------------------------------


@dataclass
class _Jvm:
    """The static methods the reader calls, looked up once per SparkContext: each lookup
    through py4j's JVM view is a round trip of its own."""

    context: Any
    load_table: Any
    format_version: Any
    to_transforms: Any
    describe: Any


_LOCK = threading.Lock()
_jvm: _Jvm | None = None


def _methods(spark: Any) -> _Jvm:
    global _jvm
    context = spark.sparkContext
    found = _jvm
    if found is not None and found.context is context:
        return found
    with _LOCK:
        if _jvm is None or _jvm.context is not context:
            jvm = context._jvm
            util = jvm.org.apache.iceberg.spark.Spark3Util
            _jvm = _Jvm(
                context=context,
                load_table=util.loadIcebergTable,
                format_version=jvm.org.apache.iceberg.TableUtil.formatVersion,
                to_transforms=util.toTransforms,
                describe=util.describe,
            )
        return _jvm


def _load(spark: Any, table: str) -> tuple[_Jvm, Any]:
    methods = _methods(spark)
    # Without the catalog cache (the default) this reads the table's metadata afresh.
    return methods, methods.load_table(spark._jsparkSession, table)


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
    if engine.is_connect(spark):
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
    if engine.is_connect(spark):
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
