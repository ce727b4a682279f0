"""The adapter's side of audited runs: preparing each table an audited node writes, the
branch-replace plan the materializations ask for, `lakehouse_publish` / `lakehouse_discard`,
and the publish at the end of the invocation. impl.py keeps the methods (dbt collects
`@available` from the class body) and delegates here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.audit import branches, replace
from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.delta_mirror import adapter as delta_adapter
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.tables import table_property
from dbt.adapters.lakehouse.models.partitioning import (
    parse_partition_by,
    validate_partition_columns,
)

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")

End = Callable[[Any, list[branches.BranchState], str], list[str]]


def prepare_audited_write(
    adapter: LakehouseAdapter,
    relation: BaseRelation,
    model_config: Any,
    node_id: str,
    resource_type: str,
) -> str | None:
    """Before a node's first write to a table: the run's audit branch when the write goes
    there (the table then takes branch writes), else None (the table takes none).

    Outside an audited run nothing is done. Tests never audit: their failure tables are
    the audit's output. A model opts out with config `write_audit_publish: false`."""
    if model_config is not None and not isinstance(model_config, bool):
        raise audit.AuditError(
            f"Config write_audit_publish of {node_id} must be true or false; got "
            f"{model_config!r}. Fix: write_audit_publish=false (no quotes) to keep the "
            "table out of audited runs, or remove the config."
        )
    run = audit.current_run()
    if run is None:
        return None
    audited = model_config is not False and resource_type != "test"
    table = TableName.of(relation)
    if audited and not run.record(table, node_id):
        return run.branch  # prepared earlier in this run
    with adapter._spark_session(f"prepare {table} for an audited run") as spark:
        exists, enabled = table_property(spark, table, audit.WAP_ENABLED)
    wanted = "true" if audited else "false"
    if exists and (enabled or "false").lower() != wanted:
        adapter.execute(
            f"alter table {table.sql_name} set tblproperties ('{audit.WAP_ENABLED}' = '{wanted}')"
        )
    return run.branch if audited else None


def plan_branch_replace(
    adapter: LakehouseAdapter,
    relation: BaseRelation,
    columns: list[Any],
    partition_by: Any,
    model_name: str,
) -> dict[str, list[Any]]:
    described = adapter.describe_relation(relation)
    if described is None:
        raise audit.AuditError(f"Table {relation} disappeared during the run.")
    new_columns = [(c.name, c.dtype) for c in columns]
    fields = parse_partition_by(partition_by, model_name)
    validate_partition_columns(fields, [name for name, _ in new_columns], model_name)
    plan = replace.plan_branch_replace(
        model_name,
        str(relation),
        new_columns,
        [(c.name, c.dtype) for c in described.columns],
        [f.render() for f in fields],
        described.partitioning,
    )
    return {
        "add": [{"name": n, "data_type": t} for n, t in plan.add],
        "drop": plan.drop,
        "widen": [{"column_name": n, "new_type": t} for n, t in plan.widen],
        "partition_drop": plan.partition_drop,
        "partition_add": plan.partition_add,
    }


def publish_audit_branch(
    adapter: LakehouseAdapter,
    branch: str,
    relations: list[BaseRelation],
    dual_format: list[BaseRelation] | None = None,
) -> str:
    """`lakehouse_publish`: fast-forward `main` of every given table holding the branch;
    the Delta logs of the `dual_format` ones follow."""
    dual = {TableName.of(r) for r in dual_format or []}

    def publish(spark: Any, states: list[branches.BranchState], name: str) -> list[str]:
        published = branches.publish(spark, branches.ordered_by_branch_time(states), name)
        for state in states:
            if state.table in dual:
                delta_adapter.mirror(adapter, spark, state.table, state.table.name)
        return published

    branch, published = end_branch(adapter, branch, relations, "publish", publish)
    message = f"Published {branch}: main of {', '.join(published)} moved; branch dropped."
    logger.info(message)
    return message


def discard_audit_branch(
    adapter: LakehouseAdapter, branch: str, relations: list[BaseRelation]
) -> str:
    branch, dropped = end_branch(adapter, branch, relations, "discard", branches.discard)
    message = f"Discarded {branch}; main unchanged on: {', '.join(dropped)}."
    logger.info(message)
    return message


def end_branch(
    adapter: LakehouseAdapter,
    branch: str,
    relations: list[BaseRelation],
    action: str,
    end: End,
) -> tuple[str, list[str]]:
    """Publish or discard: the branch checked, the given tables holding it found (on main's
    session, outside any audited run's branch), then `end` applied to them."""
    branch = audit.checked_branch(branch)
    with adapter._spark_session(f"{action} {branch}") as spark:
        audit.point_session(spark, None)
        tables = [TableName.of(r) for r in relations]
        states = branches.states_with_branch(spark, tables, branch)
        if not states:
            raise audit.AuditError(no_branch_message(branch, tables))
        return branch, end(spark, states, branch)


def no_branch_message(branch: str, tables: list[TableName]) -> str:
    return (
        f"No table of this project holds branch {branch} ({len(tables)} tables looked at). "
        "It was published or discarded already, or the name is not the one the run printed."
    )


def finish_audited_run(adapter: LakehouseAdapter) -> None:
    """The end of an audited invocation: publish when every node passed, else say why not."""
    run = audit.end_run()
    if run is None:
        return
    with adapter.connection_named("lakehouse_audit_publish"):
        with adapter._spark_session(f"publish {run.branch}") as spark:
            audit.point_session(spark, None)
            if not run.tables:
                return
            problems = run.problems()
            if problems:
                logger.warning(branches.unpublished_message(run.branch, problems, run.tables))
                return
            states = branches.states_with_branch(spark, list(run.tables), run.branch)
            published = branches.publish(spark, states, run.branch)
            for table in sorted(adapter._delta_after_publish & set(run.tables), key=str):
                delta_adapter.mirror(adapter, spark, table, table.name)
    logger.info(
        f"Audited run published: main of {len(published)} table(s) moved to branch "
        f"{run.branch} ({', '.join(published)}); the branch is dropped."
    )
