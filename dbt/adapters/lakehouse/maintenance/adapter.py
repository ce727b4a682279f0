"""The adapter's maintenance methods (impl.py delegates here): a model's `maintenance` config
checked before its build, its `after_run` operations after it, and `lakehouse_maintain` over
many tables, each on the thread's Spark session with a Delta log following where there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.delta_mirror import adapter as delta_adapter
from dbt.adapters.lakehouse.delta_mirror import log as deltalog
from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.lineage import recorded_step
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.maintenance.config import (
    COMPACTION,
    MaintenanceConfigError,
    MaintenanceError,
    parse_config,
    parse_operations,
    parse_overrides,
    sort_order,
    with_overrides,
)
from dbt.adapters.lakehouse.maintenance.report import failure_summary
from dbt.adapters.lakehouse.maintenance.run import hadoop_file_sizes, maintain, select_targets
from dbt.adapters.lakehouse.maintenance.target import DeltaLog, Target
from dbt.adapters.lakehouse.time_travel import adapter as time_travel_adapter

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


def maintenance_plan(config: Any, model_name: str, write_order_by: Any) -> list[str]:
    """Check a model's `maintenance` config before anything is written (a compile error
    listing what is accepted); the operations to run after its build, in the safe order."""
    owner = f"model '{model_name}'"
    plan = parse_config(config, owner)
    if COMPACTION in plan.operations:
        compaction = plan.options[COMPACTION]
        sort_order(str(compaction["strategy"]), write_order_by, owner)
    return list(plan.operations)


def maintain_after_run(
    adapter: LakehouseAdapter,
    relation: BaseRelation,
    config: Any,
    model_name: str,
    write_order_by: Any,
) -> str:
    """A model's `maintenance.after_run`, after its write and post-hooks. A table an
    audited run writes holds the run's rows on its branch until the run publishes, so
    nothing runs on it then (run lakehouse_maintain after the publish)."""
    plan = parse_config(config, f"model '{model_name}'")
    if not plan.operations:
        return ""
    run = audit.current_run()
    if run is not None and TableName.of(relation) in run.tables:
        logger.info(
            f"{relation} maintenance after_run skipped: this audited run's rows are on "
            f"branch {run.branch} until the run publishes, and compaction or manifest "
            "rewrites on main would stop that publish. Run `dbt run-operation "
            "lakehouse_maintain` after the publish."
        )
        return ""
    from dbt_common.invocation import get_invocation_id

    with adapter._spark_session(f"maintain {relation}") as spark:
        # compaction `scope: run`: the partitions this invocation wrote. Under Spark
        # Connect commits do not name their run (no lineage): the whole table, saying so.
        invocation = None if runtime.is_connect(spark) else get_invocation_id()
        target = maintenance_target(relation, config, write_order_by, invocation)
        node = adapter.connections.get_thread_connection().name
        with recorded_step(spark, relation.render(), "rewrite", node):
            _, failed = maintain(
                adapter._metadata_rows,
                hadoop_file_sizes(spark),
                [target],
                plan.operations,
                dry_run=False,
                report=logger.info,
                delta=delta_log(adapter, spark),
            )
    if failed:
        raise MaintenanceError(
            f"Model '{model_name}' was built and its rows are committed, but its "
            "maintenance after_run failed:\n"
            + "\n".join(f"  - {op}: {reason}" for _, op, reason in failed)
            + "\nFix the cause, then run `dbt run-operation lakehouse_maintain` for it, "
            "or remove the operation from after_run."
        )
    return ""


def maintain_tables(
    adapter: LakehouseAdapter,
    tables: list[dict[str, Any]],
    operations: Any,
    dry_run: Any,
    overrides: Any = None,
) -> str:
    """`lakehouse_maintain`: the operations on each table (each a dict of `relation`,
    `config` (its maintenance config) and `write_order_by`), one line per table and
    operation; a failure does not stop the others, and raises at the end. `overrides`: the
    call's options per operation, laid over each table's own."""
    names = parse_operations(operations)
    options = parse_overrides(overrides or {}, names)
    if not isinstance(dry_run, bool):
        raise MaintenanceConfigError(
            f"lakehouse_maintain: dry_run must be true or false, got {dry_run!r}. Nothing "
            "was changed."
        )
    targets, failed = select_targets(
        tables,
        lambda t: str(TableName.of(t["relation"])),
        lambda t: maintenance_target(
            t["relation"], with_overrides(t.get("config"), options), t.get("write_order_by")
        ),
        logger.info,
    )
    if targets:
        with adapter._spark_session("lakehouse_maintain") as spark:
            _, operations_failed = maintain(
                adapter._metadata_rows,
                hadoop_file_sizes(spark),
                targets,
                names,
                dry_run=dry_run,
                report=logger.info,
                delta=delta_log(adapter, spark),
            )
        failed += operations_failed
    if failed:
        raise MaintenanceError(failure_summary(failed, len(tables)))
    return ""


def maintenance_target(
    relation: BaseRelation, config: Any, write_order_by: Any, run_invocation: str | None = None
) -> Target:
    plan = parse_config(config, f"table {relation}")
    return Target(
        str(relation.database),
        str(relation.schema),
        str(relation.identifier),
        plan.options,
        write_order_by,
        run_invocation,
    )


def delta_log(adapter: LakehouseAdapter, spark: Any) -> DeltaLog:
    """Maintenance's view of dual-format tables' Delta logs on this session."""

    def checkpoint(table: TableName) -> int:
        uri = time_travel_adapter.logged_delta_uri(adapter, spark, table)
        if uri is None:
            raise deltalog.DeltaMirrorError(f"{table} has no Delta log to checkpoint")
        version, _ = deltasync.checkpoint(uri, delta_adapter.delta_options(adapter, table))
        return version

    return DeltaLog(
        exists=lambda table: (
            time_travel_adapter.logged_delta_uri(adapter, spark, table) is not None
        ),
        follow=lambda table: delta_adapter.mirror(adapter, spark, table, table.name),
        checkpoint=checkpoint,
    )
