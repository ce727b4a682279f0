"""A built view's checkpoint: decided from its plan's size (plan.py), made as a temporary view
over the view's query, computed once by the first statement that reads it (registry.py
compute_read, engine/runtime.py compute_once), and recorded for the run's later statements."""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.checkpoints import registry
from dbt.adapters.lakehouse.checkpoints.catalog_views import as_stored
from dbt.adapters.lakehouse.checkpoints.plan import (
    leaves,
    normalized,
    run_readers,
    setting_problem,
    should_checkpoint,
    temp_view_name,
)
from dbt.adapters.lakehouse.engine import prepared, runtime
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.report.statements import StatementClock

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


def after_view(
    adapter: LakehouseAdapter,
    relation: Any,
    sql: str,
    model: Any,
    reused: bool = False,
    graph: Any = None,
    selected: Any = None,
) -> None:
    """Record the view built (or reused) as `relation` from `sql`, and what stands in for it in
    the run's later statements: a checkpoint when its `checkpoint` config says so (`auto`: when
    its inlined plan is large); else, when it reads checkpoints, a temporary view of its query
    over them (a reader of the view itself would expand its stored query down to the tables).

    The checkpoint's rows are the view's at the moment its first reader in this run computes
    them: everything the view reads was built before it, so they are the rows that reader
    would have read through the view.

    `graph`, `selected`: dbt's flat graph and the run's selected nodes, which say how many of
    the run's nodes read the view (`auto` checkpoints a smaller plan that several read)."""
    setting = model["config"].get("checkpoint")
    problem = setting_problem(setting)
    if problem is not None:
        raise CompilationError(f"{model['unique_id']}: {problem}")
    invocation = registry.current_invocation()
    name = str(relation)
    scanned = leaves(sql, registry.known_leaves(invocation))
    checkpoint = should_checkpoint(scanned, setting, _readers(invocation, model, graph, selected))
    query = registry.with_checkpoints(sql, invocation)
    if not checkpoint and query is sql:
        prepared.forget_stand_in()
        registry.record_view(invocation, name, scanned)
        return
    temp = temp_view_name(name, invocation, "checkpoint" if checkpoint else "view")
    shape = temp_view_name(name, invocation, "shape")
    node = model["unique_id"]
    over_shapes = registry.with_checkpoints(sql, invocation, shapes=True)
    # The stand-in reads the stand-ins beneath it, made first (a temporary view keeps the plan
    # it was made over): now when the view was built, its readers being built next; when it was
    # reused, by the first statement that runs over it (registry.compute_read), in its time,
    # since its readers are likely reused too and a checkpoint nothing reads runs no job.
    make = functools.partial(_make, invocation, query, relation, temp, checkpoint)
    scans = Counter({normalized(name): 1}) if checkpoint else scanned
    kept = prepared.take_stand_in_frame(over_shapes)  # the view's decision's analysis
    if reused:
        # Its shape too, by the first analysis over it: a reader whose decision is remembered
        # (reuse/memo.py) reads neither, and a run of such readers needs no engine for it.
        make_shape = functools.partial(_make_shape, invocation, over_shapes, relation, shape, kept)
        registry.record_stand_in(invocation, name, (temp, shape), scans, make, make_shape)
    else:
        with adapter._spark_session(f"stand in for view {name}") as spark:
            _make_shape(invocation, over_shapes, relation, shape, kept, node, spark)
        registry.record_stand_in(invocation, name, (temp, shape), scans, make, spark=spark)
        registry.compute_read(f"`{temp}`", spark, invocation, node)
    if not checkpoint:
        logger.debug(f"{name}: this run's later statements read it as {temp}, over checkpoints")
        return
    view_scans = sum(scanned.values())
    registry.record_note(invocation, node, {"temporary_view": temp, "scans": view_scans})
    logger.debug(
        f"{name}: its inlined plan scans {view_scans} relations; this run's later statements"
        f" read it as {temp}, computed once by the first of them"
    )


def _readers(invocation: str, model: Any, graph: Any, selected: Any) -> int:
    """How many of the run's nodes read the view (0 when dbt did not say)."""
    if not graph or selected is None:
        return 0
    nodes = graph.get("nodes") or {}
    readers = registry.run_readers(invocation, lambda: run_readers(nodes, selected))
    return readers.get(model["unique_id"], 0)


def _stand_in(spark: Any, query: str, relation: Any, analysed: Any = None) -> Any:
    """The view's query (over the stand-ins it reads), read with the columns the view stored;
    `analysed`: that query's frame, when analysed already."""
    frame = analysed if analysed is not None else spark.sql(query)
    if runtime.is_connect(spark):
        return frame
    return as_stored(spark, frame, TableName.of(relation))


def _make_shape(
    invocation: str,
    over_shapes: str,
    relation: Any,
    shape: str,
    kept: tuple[Any, Any] | None,
    node: str | None,
    spark: Any,
) -> None:
    """The view's shape, which analyses read: its query over the shapes it reads (made first),
    with the view's stored columns, as a relation of no rows. `kept`: (the session, the frame)
    of the view's decision's analysis of that same text. Timed as `node`'s statements, so its
    split shows this analysis (report/statements.py) rather than leaving it in "dbt"."""
    registry.compute_read(over_shapes, spark, invocation, node)
    clock = StatementClock(spark, node, commits=False)
    analysed = kept[1] if kept is not None and kept[0] is spark else None
    frame = _stand_in(spark, over_shapes, relation, analysed)
    runtime.empty_like(spark, frame).createOrReplaceTempView(shape)
    clock.ran(frame)


def _make(
    invocation: str,
    query: str,
    relation: Any,
    temp: str,
    checkpoint: bool,
    node: str | None,
    spark: Any,
) -> None:
    """The stand-in made by the first statement that runs over it, `node`'s, in its session:
    over the stand-ins it reads, made first; timed as that node's statement (its jobs are that
    node's)."""
    registry.compute_read(query, spark, invocation, node)
    clock = StatementClock(spark, node, commits=False)
    frame = _stand_in(spark, query, relation)
    frame.createOrReplaceTempView(temp)
    if checkpoint:
        # A view that unions many scans has a partition per scan (2^depth on a doubling stack:
        # the ninth level's reader ran 512 one-row tasks); kept in as many as a shuffle would
        # make, its readers run that many.
        partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
        frame = runtime.compute_once(spark, temp, partitions)
    clock.ran(frame)
