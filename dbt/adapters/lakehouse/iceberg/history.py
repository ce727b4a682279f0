"""A table's commit history as `dbt-lakehouse history` prints it: newest first, each snapshot
with its counts, the dbt invocation and node that wrote it (iceberg/lineage.py), and whether it is
an
ancestor of `main` (a snapshot left on an unpublished branch, or replaced away, is not)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.iceberg.lineage import INVOCATION_KEY, NODE_KEY

HEADER = (
    "committed (UTC)",
    "snapshot id",
    "operation",
    "rows +/-",
    "files +/-",
    "main",
    "dbt invocation",
    "dbt node",
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_PART = r"`(?:[^`]|``)+`|[^.`\s]+"
_NAME_PART = re.compile(r"`((?:[^`]|``)+)`|([^.`\s]+)")
_NAME = re.compile(rf"(?:{_PART})(?:\.(?:{_PART}))*")


@dataclass(frozen=True)
class Commit:
    committed_at: dt.datetime
    snapshot_id: int
    parent_id: int | None
    operation: str
    summary: Mapping[str, str]


def table_name(given: str, default_catalog: str) -> str:
    """`catalog.schema.table` (or `schema.table`, in the profile's catalog) as Spark SQL."""
    return ".".join(
        "`" + part.replace("`", "``") + "`" for part in name_parts(given, default_catalog)
    )


def name_parts(given: str, default_catalog: str) -> list[str]:
    """[catalog, schema, table] of `catalog.schema.table` (or `schema.table`), unquoted."""
    text = given.strip()
    parts = [
        m.group(1).replace("``", "`") if m.group(1) else m.group(2)
        for m in _NAME_PART.finditer(text)
    ]
    if not _NAME.fullmatch(text) or len(parts) not in (2, 3):
        raise ValueError(
            f"Table name {given!r} is not catalog.schema.table (or schema.table, in catalog "
            f"'{default_catalog}'); quote a part holding dots with backticks."
        )
    if len(parts) == 2:
        parts.insert(0, default_catalog)
    return parts


def line_of(parents: Mapping[int, int | None], head: int | None) -> Iterator[int]:
    """Snapshot ids from `head` back through parent links (id -> parent id), newest first."""
    seen: set[int] = set()
    current = head
    while current is not None and current not in seen:
        seen.add(current)
        yield current
        current = parents.get(current)


def ancestors(parents: Mapping[int, int | None], head: int | None) -> set[int]:
    return set(line_of(parents, head))


def main_ancestors(commits: Sequence[Commit], main_head: int | None) -> set[int]:
    """The snapshot ids reachable from main's head through parent links."""
    return ancestors({c.snapshot_id: c.parent_id for c in commits}, main_head)


def _count(summary: Mapping[str, str], *keys: str) -> int:
    total = 0
    for key in keys:
        try:
            total += int(summary.get(key) or 0)
        except ValueError:
            continue
    return total


def history_rows(
    commits: Sequence[Commit], main: set[int], limit: int | None = None
) -> list[tuple[str, ...]]:
    """One printable row per commit, newest first (`limit` newest; None or 0: all)."""
    ordered = sorted(commits, key=lambda c: (c.committed_at, c.snapshot_id), reverse=True)
    rows: list[tuple[str, ...]] = []
    for commit in ordered[:limit] if limit else ordered:
        summary = commit.summary
        # Position deletes are rows deleted too (merge-on-read); copy-on-write reports rows.
        rows_added = _count(summary, "added-records")
        rows_deleted = _count(summary, "deleted-records", "added-position-deletes")
        files_added = _count(summary, "added-data-files", "added-delete-files")
        files_removed = _count(summary, "deleted-data-files", "removed-delete-files")
        rows.append(
            (
                commit.committed_at.strftime("%Y-%m-%d %H:%M:%S"),
                str(commit.snapshot_id),
                commit.operation,
                f"+{rows_added}/-{rows_deleted}",
                f"+{files_added}/-{files_removed}",
                "yes" if commit.snapshot_id in main else "no",
                summary.get(INVOCATION_KEY) or "-",
                summary.get(NODE_KEY) or "-",
            )
        )
    return rows


def render_table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )


def read_commits(spark: Any, table: str) -> tuple[list[Commit], int | None]:
    """Every snapshot of `table` and the snapshot `main` points at (None: no main yet)."""
    # Epoch microseconds: PySpark would turn a timestamp into the Python process's local time.
    found = spark.sql(
        "select unix_micros(committed_at) as committed_us, snapshot_id, parent_id, operation, "
        f"summary from {table}.snapshots"
    ).collect()
    commits = [
        Commit(
            committed_at=_EPOCH + dt.timedelta(microseconds=row["committed_us"]),
            snapshot_id=int(row["snapshot_id"]),
            parent_id=None if row["parent_id"] is None else int(row["parent_id"]),
            operation=str(row["operation"] or ""),
            summary=dict(row["summary"] or {}),
        )
        for row in found
    ]
    heads = spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()
    return commits, (int(heads[0]["snapshot_id"]) if heads else None)


def table_commits(table: Any) -> tuple[list[Commit], int | None]:
    """What read_commits gives, from a pyiceberg Table's metadata (no query engine): its
    snapshots, with the summary Spark's `snapshots` table shows (without `operation`)."""
    metadata = table.metadata
    commits = [
        Commit(
            committed_at=_EPOCH + dt.timedelta(milliseconds=snapshot.timestamp_ms),
            snapshot_id=snapshot.snapshot_id,
            parent_id=snapshot.parent_snapshot_id,
            operation=str(snapshot.summary.operation.value) if snapshot.summary else "",
            # Not the Summary's own mapping: pyiceberg 0.12 iterates it as (key, value) pairs.
            summary=dict(snapshot.summary.additional_properties) if snapshot.summary else {},
        )
        for snapshot in metadata.snapshots
    ]
    main = metadata.refs.get("main")
    return commits, (main.snapshot_id if main is not None else None)
