"""Write the Delta log beside an Iceberg table: read the snapshot on `main`, commit its files.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.delta_mirror import log as deltalog
from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.iceberg.table_name import TableName, quote
from dbt.adapters.lakehouse.profile.depot.model import Depot, S3Storage
from dbt.adapters.lakehouse.profile.secrets import MASK

Warn = Callable[[str], None]

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


_SECRET_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class StorageOptions(dict[str, str]):
    """delta-rs options whose repr masks the keys: options end up in tracebacks and debug
    output, the credentials must not."""

    def __repr__(self) -> str:
        shown = {k: (MASK if k in _SECRET_OPTIONS else v) for k, v in self.items()}
        return f"StorageOptions({shown!r})"

    __str__ = __repr__


def storage_options(depot: Depot | None) -> dict[str, str]:
    """delta-rs (object_store) options for the depot's storage: its own endpoint, region and
    keys, so the log lands where the catalog's files are, with the same credentials."""
    if depot is None or not isinstance(depot.storage, S3Storage):
        return StorageOptions()
    storage = depot.storage
    options = StorageOptions(AWS_REGION=storage.region)
    if storage.endpoint:
        options["AWS_ENDPOINT_URL"] = storage.endpoint
        if storage.endpoint.lower().startswith("http://"):
            options["AWS_ALLOW_HTTP"] = "true"
    for key, secret in zip(
        _SECRET_OPTIONS,
        (
            depot.secrets.aws_access_key,
            depot.secrets.aws_secret_key,
            depot.secrets.aws_session_token,
        ),
        strict=True,
    ):
        if secret:
            options[key] = secret.reveal()
    return options


@dataclass
class MirrorResult:
    table: str
    snapshot_id: int | None
    kind: str
    version: int | None
    adds: int
    removes: int
    seconds: float


# ---- reading Iceberg ---------------------------------------------------------------------


def _load(spark: Any, table: TableName) -> Any:
    from dbt.adapters.lakehouse.audit.run import load_table

    loaded = load_table(spark, table)
    if loaded is None:
        raise deltalog.DeltaMirrorError(f"Table {table} does not exist.")
    return loaded


def _top_level_ids(schema: Any) -> dict[int, str]:
    return {int(c.fieldId()): str(c.name()) for c in schema.columns()}


def _snapshot_schema(loaded: Any, snapshot_id: int | None) -> dict[int, str] | None:
    """The top-level schema a snapshot was committed with; None when it is unknown (expired)."""
    snapshot = None if snapshot_id is None else loaded.snapshot(snapshot_id)
    schema_id = None if snapshot is None else snapshot.schemaId()
    schema = None if schema_id is None else loaded.schemas().get(schema_id)
    return None if schema is None else _top_level_ids(schema)


def _spark_fields(spark: Any, loaded: Any) -> list[dict[str, Any]]:
    jvm = engine.driver_jvm(spark, audit.JAVA_TABLE_FEATURES, audit.WITHOUT_CONNECT)
    struct = jvm.org.apache.iceberg.spark.SparkSchemaUtil.convert(loaded.schema())
    return list(json.loads(struct.json())["fields"])


def _type_name(spark_type: Any) -> str:
    return spark_type if isinstance(spark_type, str) else "nested"


def _identity_fields(loaded: Any) -> list[str]:
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
) -> list[deltalog.DataFile]:
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
    files: list[deltalog.DataFile] = []
    deletes = 0
    for row in rows:
        if int(row[0]) != 0:
            deletes += 1
            continue
        at = 4
        partition: dict[str, str | None] = {}
        for name in partition_columns:
            partition[name] = deltalog.partition_value(types[name], row[at])
            at += 1
        columns: dict[str, deltalog.ColumnStats] = {}
        for name in stats_columns:
            lower, upper, nulls, nans = row[at : at + 4]
            at += 4
            columns[name] = deltalog.ColumnStats(lower, upper, nulls, nans)
        files.append(
            deltalog.DataFile(
                path=deltalog.relative_path(str(row[1]), root),
                size=int(row[2]),
                stats=deltalog.stats_json(int(row[3]), columns, types),
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
    hit = {deltalog.relative_path(str(r[0]), root) for r in referenced} & set(live)
    equality = spark.sql(
        f"select count(*) from {table.sql_name}.files VERSION AS OF {snapshot_id} where content = 2"
    ).collect()[0][0]
    if hit or int(equality):
        raise deltalog.DeltaMirrorError(
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
            return [_top_level_ids(s) for s in schemas.values()]
        found[int(schema_id)] = _top_level_ids(schemas.get(schema_id))
    return list(found.values())


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
    root = str(_load(spark, table).location())
    uri = delta_uri(root)
    with _lock(uri):
        handle, state = read_state(uri, options)
        # The snapshot is read after the log: whatever the log holds was committed before,
        # so another process's mirror of a newer snapshot is never described back to an
        # older one (the lock above covers this process only; delta-rs's conflict check
        # covers two processes committing at once).
        loaded = _load(spark, table)
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
        fields = deltalog.with_field_ids(
            _spark_fields(spark, loaded), _top_level_ids(loaded.schema())
        )
        types = {str(f["name"]): _type_name(f["type"]) for f in fields}
        partition_columns = deltalog.delta_partition_columns(_identity_fields(loaded), types)
        files = read_files(spark, table, snapshot_id, root, types, partition_columns)
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
) -> list[deltalog.SchemaHazard]:
    """Columns the Delta log would show wrong: names new to it (a rename), and names it holds
    under another Iceberg field id (dropped and added again outside dbt). The live files'
    writing schemas, a metadata query, are read only when there is such a name."""
    if state is None:
        return []
    current = _top_level_ids(loaded.schema())
    held = {str(f["name"]) for f in state.schema_fields}
    suspects = [name for name in current.values() if name not in held]
    suspects += deltalog.reassigned_names(
        state.schema_fields, current, _snapshot_schema(loaded, state.mirrored_snapshot)
    )
    if not suspects:
        return []
    return deltalog.schema_hazards(
        current, suspects, writing_schemas(spark, table, loaded, snapshot_id)
    )


def pending_hazards(
    spark: Any, table: TableName, options: dict[str, str]
) -> list[deltalog.SchemaHazard]:
    """Before a write: schema changes made outside dbt (a column renamed, or dropped and added
    again, with ALTER TABLE) that the table's Delta log could not follow."""
    loaded = _load(spark, table)
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
        snapshot = _load(spark, table).currentSnapshot()
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
