"""A materialized view's record and its upstreams' `main`, read from Iceberg metadata only.

Every read is a table's metadata (`metadata`: a metadata.Reader, the JVM's copy of it or the
metadata tables), its properties or DESCRIBE: a refresh that finds nothing changed runs no
Spark job over data files. `query` runs one SQL statement and returns its rows, so dbt (the
node's connection) and the `dbt-lakehouse mv status` command (a session of its own) share these
readers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dbt.adapters.lakehouse.iceberg.metadata import format_millis
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.metadata import Reader, SqlMetadata, TableMetadata
from dbt.adapters.lakehouse.mv.state import (
    REFRESHED_AT,
    Recorded,
    UpstreamState,
    UpstreamStatus,
    built_entries,
    recorded_of,
    rows_commit,
    schema_hash,
    upstream_status,
)

Query = Callable[[str], Sequence[Sequence[Any]]]


def upstream_state(query: Query, metadata: Reader, table: TableName) -> UpstreamState:
    """The snapshot `main` points at (never an audited run's branch) and the current columns."""
    found = metadata(table)
    snapshot = found.main
    # The metadata file read from the JVM holds the current schema: its columns' digest costs
    # nothing more (a DESCRIBE is a statement: most of a reused node's decision).
    current = getattr(found, "schema_columns", {}).get(getattr(found, "current_schema_id", None))
    if current is not None:
        return UpstreamState(str(table), snapshot, current)
    # Else (Spark Connect) DESCRIBE reads the table's current schema from its metadata (no
    # Spark job); the column rows end where its partitioning section starts. The two digests
    # differ: a record written on one path and read on the other builds once.
    columns: list[tuple[str, str]] = []
    for row in query(f"describe table {table.sql_name}"):
        name = str(row[0] or "").strip()
        if not name or name.startswith("#"):
            break
        columns.append((name, str(row[1])))
    return UpstreamState(str(table), snapshot, schema_hash(columns))


def view_properties(query: Query, table: TableName) -> dict[str, str]:
    """The table's `lakehouse.mv.*` properties (empty: not a materialized view of ours)."""
    return dict(SqlMetadata(query, table).properties)


def recorded(query: Query, table: TableName) -> Recorded:
    return recorded_of(view_properties(query, table))


def build_of_main(metadata: Reader, table: TableName) -> dict[str, str] | None:
    """The record in the summary of the build the view's `main` holds (state.built_entries)."""
    found = metadata(table)
    entries = built_entries(_history(found), found.main)
    return None if entries is None else dict(entries)


def _history(found: TableMetadata) -> dict[int, tuple[int | None, str, Mapping[str, str]]]:
    # The shape state.py's pure functions read: snapshot -> (parent, operation, record entries).
    return {
        snapshot_id: (s.parent, s.operation, s.entries)
        for snapshot_id, s in found.snapshots.items()
    }


def view_record(metadata: Reader, table: TableName) -> tuple[Recorded, Recorded]:
    """(the record of the build `main` holds, the properties' mirror of it). The first is
    empty when `main` holds no build (rolled onto another writer's commit, or a table). A
    view built before its commits carried the whole record (only `refreshed_at`): its
    properties, when they name that build."""
    mirror = recorded_of(metadata(table).properties)
    if not mirror.is_view:
        return Recorded(), mirror
    entries = build_of_main(metadata, table) or {}
    summary = recorded_of(entries)
    if summary.is_view:
        return summary, mirror
    built = entries.get(REFRESHED_AT)
    return (mirror if built and built == mirror.refreshed_at else Recorded()), mirror


def holds_build(metadata: Reader, table: TableName) -> bool:
    """Whether `main` of the table holds a materialized view's build. Iceberg's CREATE OR
    REPLACE keeps earlier properties, so a table rebuilt by a `table` model keeps a former
    view's properties, but its commits carry no record."""
    return view_record(metadata, table)[0].is_view


def foreign_writer(metadata: Reader, table: TableName) -> str | None:
    """The dbt node whose commit `main` of the table stands on, when that commit carries no
    view's record: the rows are another model's (rolled back onto, or the model built as another
    materialization: Iceberg's CREATE OR REPLACE keeps a former view's properties). None: a
    view's build, or a writer that records no lineage (Spark Connect, other engines)."""
    found = metadata(table)
    commit = rows_commit(_history(found), found.main)
    if commit is None or found.snapshots[commit].entries.get(REFRESHED_AT):
        return None
    return found.snapshots[commit].writer


def view_status(
    query: Query, metadata: Reader, table: TableName
) -> tuple[Recorded, list[UpstreamStatus]]:
    """The view's record, and per upstream how far its `main` moved since (histories read
    from each upstream's snapshots). First, a row for the view itself when its rows are another
    model's (foreign_writer): stale whatever its upstreams did, as its next refresh rebuilds."""
    built, mirror = view_record(metadata, table)
    # The properties when no build's record is found (a view built under Spark Connect, whose
    # commits carry none): what they claim is all there is.
    record = built if built.is_view else mirror
    found: list[UpstreamStatus] = []
    writer = foreign_writer(metadata, table) if mirror.is_view and not built.is_view else None
    if writer is not None:
        note = (
            f"its rows were last written by {writer}, not by a refresh of this view (rolled "
            "back onto them, or built as another materialization): its next refresh rebuilds it"
        )
        found.append(UpstreamStatus(str(table), None, metadata(table).main, None, None, note))
    for name, snapshot in sorted(record.upstreams.items()):
        upstream = TableName(*_split(name))
        now = upstream_state(query, metadata, upstream)
        history = metadata(upstream).snapshots
        parents = {snapshot_id: s.parent for snapshot_id, s in history.items()}
        millis = {snapshot_id: s.committed_ms for snapshot_id, s in history.items()}
        committed = {snapshot_id: format_millis(ms) for snapshot_id, ms in millis.items()}
        status = upstream_status(name, snapshot, now.snapshot_id, parents, committed, millis)
        if status.fresh and record.schemas.get(name) != now.schema:
            status = UpstreamStatus(
                name, snapshot, now.snapshot_id, 0, None, "its schema changed since the build"
            )
        found.append(status)
    return record, found


def _split(name: str) -> tuple[str, str, str]:
    # Recorded as catalog.schema.table; a catalog name holds no dot, a table name may not either
    # (Iceberg namespaces may: the middle takes what is left).
    catalog, _, rest = name.partition(".")
    namespace, _, table = rest.rpartition(".")
    return catalog, namespace, table
