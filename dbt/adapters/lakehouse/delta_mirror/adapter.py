"""The adapter's side of dual-format tables (`table_formats: [iceberg, delta]`): the checks
before a write, the mirror after it, and `lakehouse_sync_delta`. impl.py keeps the methods the
macros call (dbt collects `@available` from the class body) and delegates here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.delta_mirror import formats, iceberg_files, schema, storage, sync
from dbt.adapters.lakehouse.delta_mirror.log import DeltaMirrorError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.tables import java_tables, load_table
from dbt.adapters.lakehouse.profile.depot.table_defaults import (
    DeltaConfigError,
    parse_table_formats,
)
from dbt.adapters.lakehouse.report import work

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


def table_formats(
    adapter: LakehouseAdapter, value: Any, owner: str, database: str | None = None
) -> list[str]:
    if value is None:
        value = adapter._resolved().depot_of(database).table_formats
    return list(parse_table_formats(value, f"'{owner}'"))


def delta_table_properties(
    adapter: LakehouseAdapter, configured: dict[str, Any], model_name: str
) -> dict[str, str]:
    with adapter._spark_session(f"create the dual-format table of {model_name}") as spark:
        java_tables(spark)  # refused under Spark Connect, before anything is written
    keys = formats.merge_on_read_keys(configured)
    if keys:
        raise DeltaConfigError(
            formats.merge_on_read_refusal(
                f"Model '{model_name}'", keys, "its table_properties config"
            )
        )
    return dict(formats.COPY_ON_WRITE)


def check_delta_table(adapter: LakehouseAdapter, relation: BaseRelation, model_name: str) -> None:
    """Before writing to an existing dual-format table: it must be copy-on-write, and its
    schema one the Delta log can follow (no column renamed outside dbt)."""
    table = TableName.of(relation)
    with adapter._spark_session(f"check {relation} for its Delta log") as spark:
        loaded = load_table(spark, table)
        if loaded is None:
            return
        properties = dict(loaded.properties())
        hazards = sync.pending_hazards(spark, table, delta_options(adapter, table))
    if hazards:
        raise DeltaConfigError(
            f"Model '{model_name}' is a dual-format table (table_formats [iceberg, delta]) "
            f"whose schema changed in a way its Delta log cannot follow: "
            + "; ".join(h.reason for h in hazards)
            + ". Nothing was written. Fix: rebuild it with --full-refresh (every file is "
            "then written anew), or undo the change."
        )
    keys = formats.merge_on_read_keys(properties)
    if keys:
        raise DeltaConfigError(
            formats.merge_on_read_refusal(
                f"Model '{model_name}'", keys, f"the existing table {relation}"
            )
            + f" (ALTER TABLE {relation} SET TBLPROPERTIES for each to copy-on-write, "
            "or --full-refresh)"
        )


def check_delta_schema_change(
    adapter: LakehouseAdapter,
    relation: BaseRelation,
    added: list[str],
    retyped: list[str],
    model_name: str,
) -> None:
    """Before an in-place schema change of a dual-format table: a type change, or a name
    added again while files written with the dropped column are live, is refused."""
    owner = f"Model '{model_name}'"
    if retyped:
        raise DeltaConfigError(schema.type_change_refusal(owner, retyped))
    if not added:
        return
    table = TableName.of(relation)
    with adapter._spark_session(f"check schema change of {relation}") as spark:
        loaded = load_table(spark, table)
        snapshot = None if loaded is None else loaded.currentSnapshot()
        if snapshot is None:
            return
        writing = iceberg_files.writing_schemas(spark, table, loaded, int(snapshot.snapshotId()))
    held = {name for found in writing for name in found.values()}
    again = [name for name in added if name in held]
    if again:
        raise DeltaConfigError(schema.readd_refusal(owner, again))


def mirror_delta(adapter: LakehouseAdapter, relation: BaseRelation, model_name: str) -> str:
    """After a node's commits: the Delta log follows `main`. An audited run's writes are
    on its branch until the publish, which mirrors them then."""
    table = TableName.of(relation)
    run = audit.current_run()
    if run is not None and table in run.tables:
        adapter._delta_after_publish.add(table)
        return ""
    with adapter._spark_session(f"mirror {relation} to its Delta log") as spark:
        mirror(adapter, spark, table, model_name)
    return ""


def sync_delta(adapter: LakehouseAdapter, relations: list[BaseRelation]) -> str:
    """`lakehouse_sync_delta`: each table's Delta log brought to its current snapshot,
    one line per table; tables not built yet are skipped, failures raise at the end."""
    failed: list[str] = []
    with adapter._spark_session("lakehouse_sync_delta") as spark:
        for relation in relations:
            table = TableName.of(relation)
            if load_table(spark, table) is None:
                logger.info(f"{table}: skipped: the table does not exist yet (build it first)")
                continue
            try:
                report_mirror(sync.mirror(spark, table, delta_options(adapter, table)))
            except Exception as exc:
                reason = (str(getattr(exc, "msg", "") or exc).strip().splitlines() or ["?"])[0]
                logger.info(f"{table}: FAILED: {adapter._scrubbed(reason)}")
                failed.append(str(table))
    if failed:
        raise DeltaMirrorError(
            f"lakehouse_sync_delta: {len(failed)} of {len(relations)} table(s) failed: "
            f"{', '.join(failed)}. The others are in sync."
        )
    return ""


def mirror(adapter: LakehouseAdapter, spark: Any, table: TableName, owner: str) -> None:
    """The table's Delta log brought to `main`; a failure is a warning (sync.mirror_or_warn)."""
    result = sync.mirror_or_warn(
        spark,
        table,
        delta_options(adapter, table),
        lambda message: logger.warning(adapter._scrubbed(message)),
        f"`dbt run-operation lakehouse_sync_delta --args '{{select: [{owner}]}}'`",
    )
    if result is not None:
        report_mirror(result)
        if result.kind != "noop" and result.snapshot_id is not None:
            _record(adapter, str(table), result)


def _record(adapter: LakehouseAdapter, table: str, result: sync.MirrorResult) -> None:
    """The Delta commit in the node's report (report/work.py): it changes no row."""
    from dbt_common.invocation import get_invocation_id

    node = adapter.connections.get_thread_connection().name
    operation = f"delta {result.kind} version {result.version}"
    commit = work.Commit(table, int(result.snapshot_id or 0), operation, "mirror", {})
    work.record(get_invocation_id(), str(node), commit)


def report_mirror(result: sync.MirrorResult) -> None:
    if result.kind == "noop":
        logger.info(f"{result.table}: Delta log already at Iceberg snapshot {result.snapshot_id}")
        return
    logger.info(
        f"{result.table}: Delta log version {result.version} ({result.kind}) mirrors Iceberg "
        f"snapshot {result.snapshot_id}: {result.adds} file(s) added, {result.removes} "
        f"removed, {result.seconds:.2f}s"
    )


def delta_options(adapter: LakehouseAdapter, table: TableName) -> dict[str, str]:
    """delta-rs options for the storage of the depot holding the table's catalog."""
    resolved = adapter._resolved()
    if table.catalog == adapter.config.credentials.database:
        return storage.storage_options(resolved.depot)
    mounted = resolved.mounted_depot(table.catalog)
    return {} if mounted is None else storage.storage_options(mounted)
