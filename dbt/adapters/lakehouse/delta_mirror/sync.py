"""Write the Delta log beside an Iceberg table: read the snapshot on `main` (iceberg_files.py),
commit its files.

The mirror is a diff, not a replay: the files of Iceberg's current snapshot on `main` against
the files the Delta log lists, committed once with the snapshot id as the log's app
transaction. Running it twice is a no-op; a snapshot it missed (a failed mirror, a write from
outside dbt) is caught up by the next one. Iceberg stays primary: a mirror that fails is
retried once and then reported as a warning, never failing the write it follows.

Concurrency: delta-rs writes each log entry with a conditional put (on S3, `If-None-Match`),
so two writers can never both create one version. Every mirror commit sets the same app
transaction, so of two racing mirror commits delta-rs fails the loser ("Concurrent
transaction failed", or a concurrent delete of files it read), and this module's one retry
redoes it from a fresh diff. Within a process, one table mirrors at a time.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.delta_mirror import iceberg_files
from dbt.adapters.lakehouse.delta_mirror import log as deltalog
from dbt.adapters.lakehouse.delta_mirror.file_stats import delta_partition_columns
from dbt.adapters.lakehouse.delta_mirror.schema import (
    SchemaHazard,
    reassigned_names,
    schema_hazards,
    with_field_ids,
)
from dbt.adapters.lakehouse.iceberg.table_name import TableName

Warn = Callable[[str], None]

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass
class MirrorResult:
    table: str
    snapshot_id: int | None
    kind: str
    version: int | None
    adds: int
    removes: int
    seconds: float


# ---- writing Delta ------------------------------------------------------------------------


def delta_uri(root: str) -> str:
    return deltalog.normalise_uri(root).rstrip("/")


def has_log(uri: str, options: dict[str, str]) -> bool:
    from deltalake import DeltaTable

    return bool(DeltaTable.is_deltatable(uri, storage_options=options))


def read_state(uri: str, options: dict[str, str]) -> tuple[Any, deltalog.DeltaState | None]:
    import pyarrow as pa
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(uri, storage_options=options):
        return None, None
    handle = DeltaTable(uri, storage_options=options)
    actions = pa.table(handle.get_add_actions(flatten=True))
    metadata = handle.metadata()
    return handle, deltalog.DeltaState(
        paths=frozenset(str(p) for p in actions.column("path").to_pylist()),
        schema_fields=json.loads(handle.schema().to_json())["fields"],
        partition_columns=list(metadata.partition_columns),
        mirrored_snapshot=handle.transaction_version(deltalog.APP_ID),
    )


def commit(
    uri: str,
    options: dict[str, str],
    handle: Any,
    plan: deltalog.MirrorPlan,
    schema_fields: list[dict[str, Any]],
    partition_columns: list[str],
    snapshot_id: int,
    commit_millis: int,
) -> int:
    """One Delta commit of the plan; returns the log's new version."""
    from deltalake import Field, Schema
    from deltalake.transaction import (
        AddAction,
        CommitProperties,
        RemoveAction,
        Transaction,
        create_table_with_add_actions,
    )

    properties = CommitProperties(
        custom_metadata={deltalog.SNAPSHOT_KEY: str(snapshot_id)},
        app_transactions=[Transaction(deltalog.APP_ID, snapshot_id)],
    )
    adds = [
        AddAction(f.path, f.size, dict(f.partition_values), commit_millis, True, f.stats)
        for f in plan.adds
    ]
    schema = Schema.from_json(json.dumps({"type": "struct", "fields": schema_fields}))
    if plan.kind in ("create", "redeclare"):
        create_table_with_add_actions(
            uri,
            schema,
            adds,
            mode="error" if plan.kind == "create" else "overwrite",
            partition_by=partition_columns or None,
            storage_options=options,
            commit_properties=properties,
        )
        return _version(uri, options)
    if plan.add_columns:
        handle.alter.add_columns([Field.from_json(json.dumps(f)) for f in plan.add_columns])
    now = int(time.time() * 1000)
    removes = [RemoveAction(path, True, now) for path in plan.removes]
    handle.create_write_transaction(
        [*adds, *removes],
        mode="append",
        schema=schema,
        partition_by=partition_columns or None,
        commit_properties=properties,
    )
    return _version(uri, options)


def _version(uri: str, options: dict[str, str]) -> int:
    from deltalake import DeltaTable

    return int(DeltaTable(uri, storage_options=options).version())


def _lock(uri: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(uri, threading.Lock())


def mirror(spark: Any, table: TableName, options: dict[str, str]) -> MirrorResult:
    """Make the Delta log at the table root describe the current snapshot on `main`."""
    started = time.monotonic()
    root = str(iceberg_files.load(spark, table).location())
    uri = delta_uri(root)
    with _lock(uri):
        handle, state = read_state(uri, options)
        # The snapshot is read after the log: whatever the log holds was committed before,
        # so another process's mirror of a newer snapshot is never described back to an
        # older one (the lock above covers this process only; delta-rs's conflict check
        # covers two processes committing at once).
        loaded = iceberg_files.load(spark, table)
        snapshot = loaded.currentSnapshot()
        if snapshot is None:
            raise deltalog.DeltaMirrorError(f"Table {table} has no snapshot yet to describe.")
        snapshot_id = int(snapshot.snapshotId())
        # Before the no-op: a schema changed outside dbt without a new snapshot (a column
        # dropped and added again) leaves the log at this snapshot yet describing it wrong.
        hazards = _hazards(spark, table, loaded, snapshot_id, state)
        if hazards:
            raise deltalog.DeltaMirrorError(
                f"The Delta log of {table} cannot describe Iceberg snapshot {snapshot_id}: "
                + "; ".join(h.reason for h in hazards)
                + ". Rebuild the table (--full-refresh) to write every file anew."
            )
        if state is not None and state.mirrored_snapshot == snapshot_id:
            return MirrorResult(str(table), snapshot_id, "noop", None, 0, 0, _since(started))
        fields = with_field_ids(
            iceberg_files.spark_fields(spark, loaded), iceberg_files.top_level_ids(loaded.schema())
        )
        types = {str(f["name"]): iceberg_files.type_name(f["type"]) for f in fields}
        partition_columns = delta_partition_columns(iceberg_files.identity_fields(loaded), types)
        files = iceberg_files.read_files(spark, table, snapshot_id, root, types, partition_columns)
        plan = deltalog.plan_mirror(files, fields, partition_columns, state)
        version = commit(
            uri,
            options,
            handle,
            plan,
            fields,
            partition_columns,
            snapshot_id,
            int(snapshot.timestampMillis()),
        )
    return MirrorResult(
        str(table),
        snapshot_id,
        plan.kind,
        version,
        len(plan.adds),
        len(plan.removes),
        _since(started),
    )


def _hazards(
    spark: Any,
    table: TableName,
    loaded: Any,
    snapshot_id: int,
    state: deltalog.DeltaState | None,
) -> list[SchemaHazard]:
    """Columns the Delta log would show wrong: names new to it (a rename), and names it holds
    under another Iceberg field id (dropped and added again outside dbt). The live files'
    writing schemas, a metadata query, are read only when there is such a name."""
    if state is None:
        return []
    current = iceberg_files.top_level_ids(loaded.schema())
    held = {str(f["name"]) for f in state.schema_fields}
    suspects = [name for name in current.values() if name not in held]
    suspects += reassigned_names(
        state.schema_fields, current, iceberg_files.snapshot_schema(loaded, state.mirrored_snapshot)
    )
    if not suspects:
        return []
    return schema_hazards(
        current, suspects, iceberg_files.writing_schemas(spark, table, loaded, snapshot_id)
    )


def pending_hazards(spark: Any, table: TableName, options: dict[str, str]) -> list[SchemaHazard]:
    """Before a write: schema changes made outside dbt (a column renamed, or dropped and added
    again, with ALTER TABLE) that the table's Delta log could not follow."""
    loaded = iceberg_files.load(spark, table)
    snapshot = loaded.currentSnapshot()
    uri = delta_uri(str(loaded.location()))
    if snapshot is None or not has_log(uri, options):
        return []
    _, state = read_state(uri, options)
    return _hazards(spark, table, loaded, int(snapshot.snapshotId()), state)


def _since(started: float) -> float:
    return time.monotonic() - started


def mirror_or_warn(
    spark: Any, table: TableName, options: dict[str, str], warn: Warn, hint: str
) -> MirrorResult | None:
    """Iceberg-primary: the mirror, retried once from a fresh read; a second failure is a
    warning naming the table and snapshot (the next mirror catches the log up)."""
    failure: Exception | None = None
    for _ in range(2):
        try:
            return mirror(spark, table, options)
        except Exception as exc:  # any failure: Iceberg's commit stands either way
            failure = exc
    snapshot = _current_snapshot_id(spark, table)
    reason = (str(getattr(failure, "msg", "") or failure).strip().splitlines() or ["?"])[0]
    warn(
        f"Delta log of {table} not updated for Iceberg snapshot {snapshot} after 2 attempts: "
        f"{reason}. The Iceberg commit stands and the run goes on; the next commit to this "
        f"table catches the Delta log up, or run {hint}."
    )
    return None


def _current_snapshot_id(spark: Any, table: TableName) -> str:
    try:
        snapshot = iceberg_files.load(spark, table).currentSnapshot()
        return "none" if snapshot is None else str(snapshot.snapshotId())
    except Exception:
        return "unknown"


def checkpoint(uri: str, options: dict[str, str]) -> tuple[int, float]:
    """A Delta checkpoint of the log's current version (readers then skip replaying JSON
    entries); never VACUUM: Iceberg owns the files."""
    from deltalake import DeltaTable

    started = time.monotonic()
    handle = DeltaTable(uri, storage_options=options)
    handle.create_checkpoint()
    return int(handle.version()), _since(started)
