"""Table stats in dbt's docs catalog: each stat's label, description and value, as the
catalog's `stats:<id>:...` columns and as dbt's StatsItems (iceberg/table_stats.py has the
stats themselves)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from dbt_common.contracts.metadata import StatsItem

from dbt.adapters.lakehouse.iceberg.table_stats import TableStats

NO_SNAPSHOT = "none (no snapshot yet)"

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
    return at.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


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
