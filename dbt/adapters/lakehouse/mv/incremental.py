"""An incremental refresh where it is exact: a view whose query is filters, projections and inner
joins over its upstream tables, one of which moved, all of whose commits since the recorded
snapshot are appends, while every other upstream stayed where it was.

Such a query distributes over a union of the moved table's rows: q(old ∪ new) = q(old) ∪
q(new), an inner join included, (A ∪ ΔA) ⋈ B = (A ⋈ B) ∪ (ΔA ⋈ B), as long as the moved table
is read once (a self-join is not linear in it). So when every snapshot of the upstream's `main`
after the recorded one is an `append` (only data files added, none removed: no update, delete
or overwrite), the view's new rows are the query with the moved table replaced by the appended
rows alone, read with Iceberg's incremental append scan. Anything else (an aggregate, an outer,
semi or anti join, DISTINCT, a window, a LIMIT, a subquery, a non-deterministic expression,
time travel, a table read that is not a tracked upstream, another operation upstream, an
expired snapshot, Spark Connect) rebuilds the view instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.history import line_of
from dbt.adapters.lakehouse.iceberg.table_name import TableName

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


def row_by_row(spark: Any, sql: str, upstream: TableName, unchanged: set[str]) -> bool:
    """Whether the query's analyzed plan (analysis only: no Spark job) is deterministic
    filters, projections and inner joins over the moved upstream, read once, and upstreams
    that did not move."""
    jvm = spark._jvm
    subqueries = jvm.org.apache.spark.sql.catalyst.expressions.SubqueryExpression
    leaves: list[Any] = []
    pending = [spark.sql(sql)._jdf.queryExecution().analyzed()]
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
        elif kind not in ROW_BY_ROW:
            return False
        expressions = node.expressions()
        for i in range(expressions.size()):
            expression = expressions.apply(i)
            if not expression.deterministic() or subqueries.hasSubquery(expression):
                return False
        pending.extend(children.apply(i) for i in range(children.size()))
    return linear_leaves([str(leaf.name()) for leaf in leaves], str(upstream), unchanged)


def appended_rows_sql(
    adapter: LakehouseAdapter,
    sql: str,
    upstream: Any,
    recorded: int,
    head: int,
    node_id: str,
    unchanged: set[str],
) -> tuple[str, str] | str:
    """(the query over the upstream's rows appended after `recorded` up to `head`, the
    temporary view holding them), or why the refresh cannot be incremental. `unchanged`: the
    other upstreams, none of which moved."""
    table = TableName.of(upstream)
    found = adapter._metadata_rows(
        f"select snapshot_id, parent_id, operation from {table.sql_name}.snapshots"
    )
    history = {int(r[0]): (None if r[1] is None else int(r[1]), str(r[2])) for r in found}
    if not appends_only(history, recorded, head):
        return f"a commit to {table} since snapshot {recorded} is not an append"
    view = "__dbt_lakehouse_mv_" + hashlib.sha1(node_id.encode()).hexdigest()[:12]
    query = delta_sql(sql, str(upstream), view)
    if query is None:
        return f"the SQL does not read {upstream} exactly once at its current state"
    with adapter._spark_session(f"read the rows appended to {table}") as spark:
        if runtime.is_connect(spark):
            return "Spark Connect has no query plan to check"
        if not row_by_row(spark, sql, table, unchanged):
            return (
                f"the query is not filters, projections and inner joins reading {table} once "
                "and otherwise only upstreams that did not move"
            )
        appended = (
            spark.read.option("start-snapshot-id", str(recorded))
            .option("end-snapshot-id", str(head))
            .table(table.sql_name)
        )
        appended.createOrReplaceTempView(view)
    return query, view
