"""A built view's checkpoint: decided from its plan's size (plan.py), made as a temporary view
over the view's query computed once, lazily, by its first reader (engine/runtime.py
compute_once), and recorded for the run's later statements (registry.py)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.checkpoints import registry
from dbt.adapters.lakehouse.checkpoints.catalog_views import as_stored
from dbt.adapters.lakehouse.checkpoints.plan import (
    leaves,
    normalized,
    setting_problem,
    should_checkpoint,
    temp_view_name,
)
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.report.statements import StatementClock

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


def after_view(adapter: LakehouseAdapter, relation: Any, sql: str, model: Any) -> None:
    """Record the view built (or reused) as `relation` from `sql`, and what stands in for it in
    the run's later statements: a checkpoint when its `checkpoint` config says so (`auto`: when
    its inlined plan is large); else, when it reads checkpoints, a temporary view of its query
    over them (a reader of the view itself would expand its stored query down to the tables).

    The checkpoint's rows are the view's at the moment its first reader in this run computes
    them: everything the view reads was built before it, so they are the rows that reader
    would have read through the view."""
    setting = model["config"].get("checkpoint")
    problem = setting_problem(setting)
    if problem is not None:
        raise CompilationError(f"{model['unique_id']}: {problem}")
    invocation = registry.current_invocation()
    name = str(relation)
    scanned = leaves(sql, registry.known_leaves(invocation))
    checkpoint = should_checkpoint(scanned, setting)
    query = registry.with_checkpoints(sql, invocation)
    if not checkpoint and query is sql:
        registry.record_view(invocation, name, scanned)
        return
    temp = temp_view_name(name, invocation, "checkpoint" if checkpoint else "view")
    node = model["unique_id"]
    with adapter._spark_session(f"stand in for view {name}") as spark:
        # Timed as the node's statements, so its split shows this analysis and planning
        # (report/statements.py) rather than leaving it in "dbt".
        clock = StatementClock(spark, node, commits=False)
        frame = spark.sql(query)
        if not runtime.is_connect(spark):  # read with the columns the view stored
            frame = as_stored(spark, frame, TableName.of(relation))
        frame.createOrReplaceTempView(temp)
        clock.ran(frame)
        if checkpoint:
            clock = StatementClock(spark, node, commits=False)
            # A view that unions many scans has a partition per scan (2^depth on a doubling
            # stack: the ninth level's reader ran 512 one-row tasks); kept in as many as a
            # shuffle would make, its readers run that many.
            partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
            clock.ran(runtime.compute_once(spark, temp, partitions))
    registry.record_stand_in(
        invocation, name, temp, spark, Counter({normalized(name): 1}) if checkpoint else scanned
    )
    if not checkpoint:
        logger.debug(f"{name}: this run's later statements read it as {temp}, over checkpoints")
        return
    view_scans = sum(scanned.values())
    registry.record_note(invocation, node, {"temporary_view": temp, "scans": view_scans})
    logger.debug(
        f"{name}: its inlined plan scans {view_scans} relations; this run's later statements"
        f" read it as {temp}, computed once by the first of them"
    )
