"""An incremental refresh where it is exact: a view whose query is filters, projections and inner
joins over its upstream tables (or a GROUP BY that aggregate.py can combine over such a query),
one of which moved, all of whose commits since the recorded snapshot are appends, while every
other upstream stayed where it was.

Such a query distributes over a union of the moved table's rows: q(old ∪ new) = q(old) ∪
q(new), an inner join included, (A ∪ ΔA) ⋈ B = (A ⋈ B) ∪ (ΔA ⋈ B), as long as the moved table
is read once (a self-join is not linear in it). So when every snapshot of the upstream's `main`
after the recorded one is an `append` (only data files added, none removed: no update, delete
or overwrite), the view's new rows are the query with the moved table replaced by the appended
rows alone, read with Iceberg's incremental append scan (the aggregate over them is folded in
instead: aggregate.py). Anything else (another aggregate, an outer, semi or anti join,
DISTINCT, a window, a LIMIT, a subquery, a non-deterministic expression, time travel, a table
read that is not a tracked upstream, another operation upstream, an expired snapshot, Spark
Connect) rebuilds the view instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.history import line_of
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv import aggregate
from dbt.adapters.lakehouse.mv.metadata import Snapshot

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

# The logical plan nodes a row-by-row query is made of (Spark's analyzed plan); a Join only
# when inner (linear_leaves then requires the moved table to be read once).
ROW_BY_ROW = frozenset({"Project", "Filter", "SubqueryAlias"})
JOIN, INNER = "Join", "Inner"
LEAF = "DataSourceV2Relation"
_TIME_TRAVEL = ("version as of", "timestamp as of", "for system_")


def appends_only(snapshots: Mapping[int, tuple[int | None, str]], recorded: int, head: int) -> bool:
    """Whether every snapshot of `main` after `recorded` up to `head` is an append (snapshot
    id -> (parent, operation)); False when `recorded` is not on that line (expired, or
    rolled back)."""
    parents = {snapshot: parent for snapshot, (parent, _) in snapshots.items()}
    for snapshot in line_of(parents, head):
        if snapshot == recorded:
            return True
        if snapshots[snapshot][1] != "append":
            return False
    return False


def delta_sql(sql: str, rendered: str, view: str) -> str | None:
    """The model's SQL reading `view` where it reads the upstream, or None when the upstream is
    not named exactly once, or is read at a point of its history."""
    if sql.count(rendered) != 1:
        return None
    after = sql.split(rendered, 1)[1].lstrip().lower()
    if after.startswith(_TIME_TRAVEL):
        return None
    return sql.replace(rendered, view)


def linear_leaves(leaves: list[str], moved: str, unchanged: set[str]) -> bool:
    """Whether the tables a row-by-row plan reads make it linear in `moved`: read exactly once,
    and every other table one of the upstreams that did not move (names compared lowercase)."""
    names = [leaf.lower() for leaf in leaves]
    others = {name.lower() for name in unchanged}
    return names.count(moved.lower()) == 1 and all(
        name in others for name in names if name != moved.lower()
    )


def row_by_row(spark: Any, plan: Any, upstream: TableName, unchanged: set[str]) -> bool:
    """Whether an analyzed plan (analysis only: no Spark job) is deterministic filters,
    projections and inner joins over the moved upstream, read once, and upstreams that did not
    move (`unchanged`)."""
    subqueries = spark._jvm.org.apache.spark.sql.catalyst.expressions.SubqueryExpression
    leaves: list[Any] = []
    pending = [plan]
    while pending:
        node = pending.pop()
        kind = str(node.getClass().getSimpleName())
        children = node.children()
        if kind == LEAF and children.size() == 0:
            leaves.append(node)
            continue
        if kind == JOIN:
            if str(node.joinType()) != INNER:
                return False
        elif kind not in ROW_BY_ROW and not (kind == "Aggregate" and node is plan):
            return False
        # An aggregate at the root (aggregate.py checks its functions) has its expressions
        # checked here too: deterministic, no subquery.
        expressions = node.expressions()
        for i in range(expressions.size()):
            expression = expressions.apply(i)
            if not expression.deterministic() or subqueries.hasSubquery(expression):
                return False
        pending.extend(children.apply(i) for i in range(children.size()))
    return linear_leaves([str(leaf.name()) for leaf in leaves], str(upstream), unchanged)


def shape(spark: Any, sql: str, upstream: TableName, unchanged: set[str]) -> tuple[str, Any] | str:
    """("append", None) for filters, projections and inner joins reading `upstream` once
    beside `unchanged` upstreams, ("merge", the aggregate's columns) for an aggregate.py GROUP
    BY over such a query; else why neither."""
    plan = spark.sql(sql)._jdf.queryExecution().analyzed()
    if str(plan.getClass().getSimpleName()) != "Aggregate":
        if row_by_row(spark, plan, upstream, unchanged):
            return "append", None
        return (
            f"the query is not filters, projections and inner joins reading {upstream} once "
            "and otherwise only upstreams that did not move"
        )
    found = aggregate.aggregate_columns(plan)
    if isinstance(found, str):
        return f"the GROUP BY does not combine over appended rows: {found}"
    # The aggregate's input is the row-by-row query, linear in the moved table: its rows over
    # (A ∪ ΔA) ⋈ B are those over A ⋈ B and ΔA ⋈ B, so its groups combine the same way.
    if not row_by_row(spark, plan, upstream, unchanged):
        return (
            f"the GROUP BY is not over filters, projections and inner joins reading {upstream} "
            "once and otherwise only upstreams that did not move"
        )
    return "merge", found[0]


def appended_rows_sql(
    adapter: LakehouseAdapter,
    sql: str,
    upstream: Any,
    snapshots: Mapping[int, Snapshot],
    recorded: int,
    head: int,
    node_id: str,
    target: str,
    unchanged: set[str],
    fold: tuple[int | None, int],
) -> tuple[str, str, str] | str:
    """(`append` or `merge`, the statement's SQL: the query over the upstream's rows appended
    after `recorded` up to `head` to insert, or the MERGE of it into `target`; the temporary
    view holding those rows), or why the refresh cannot be incremental. `snapshots`: the
    upstream's (metadata.py); `unchanged`: the other upstreams, none of which moved; `fold`:
    the view's bytes and the size up to which it is rewritten whole (aggregate.fold_sql)."""
    table = TableName.of(upstream)
    history = {snapshot_id: (s.parent, s.operation) for snapshot_id, s in snapshots.items()}
    if not appends_only(history, recorded, head):
        return f"a commit to {table} since snapshot {recorded} is not an append"
    view = "__dbt_lakehouse_mv_" + hashlib.sha1(node_id.encode()).hexdigest()[:12]
    query = delta_sql(sql, str(upstream), view)
    if query is None:
        return f"the SQL does not read {upstream} exactly once at its current state"
    with adapter._spark_session(f"read the rows appended to {table}") as spark:
        if runtime.is_connect(spark):
            return "Spark Connect has no query plan to check"
        shaped = shape(spark, sql, table, unchanged)
        if isinstance(shaped, str):
            return shaped
        appended = (
            spark.read.option("start-snapshot-id", str(recorded))
            .option("end-snapshot-id", str(head))
            .table(table.sql_name)
        )
        appended.createOrReplaceTempView(view)
    kind, columns = shaped
    if kind == "merge":
        return kind, aggregate.fold_sql(target, columns, query, *fold), view
    return kind, query, view
