"""A table's stats as Iceberg's current metadata states them: the current snapshot (its id,
commit time, and the summary's totals: total-records, total-position-deletes,
total-equality-deletes, total-data-files, total-files-size), the format version, the partition
spec and the sort order. No manifest or data file is opened, so a table of a billion rows costs
what an empty one does. The alternatives cost more: DESCRIBE TABLE EXTENDED (which the catalog
runs anyway) shows neither the totals nor the commit time, and a `<t>.snapshots` query is a
Spark job per table (bench/RESULTS.md, "Docs catalog stats").

Pure: iceberg/stats_reader.py reads the metadata, iceberg/catalog_stats.py gives the stats to
dbt's docs catalog.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


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
