"""The adapter's time travel methods (impl.py delegates here): `lakehouse.as_of` relations and
their checks against the table's history, `lakehouse_rollback` with the Delta log of a
dual-format table moved along, and the metadata queries both run on the node's connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.delta_mirror import adapter as delta_adapter
from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.tables import table_location
from dbt.adapters.lakehouse.relation import LakehouseRelation
from dbt.adapters.lakehouse.time_travel.as_of import (
    AsOf,
    TimeTravelError,
    check_as_of,
    checks_now,
    parse_as_of,
    parse_table_name,
)
from dbt.adapters.lakehouse.time_travel.history import read_history
from dbt.adapters.lakehouse.time_travel.rollback import (
    parse_rollback_target,
    plan_rollback,
    rollback_report,
    rollback_sql,
    timestamp_millis,
)

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


def time_travel_relation(
    adapter: LakehouseAdapter, relation: Any, as_of: dict[str, Any], execute: bool
) -> LakehouseRelation:
    """`relation` read as of a point of its history (`lakehouse.as_of`).

    When the node runs (not under parse, compile or docs generate), the point is checked
    against the table's history first, so a point it lacks fails naming the table.
    The arguments are checked once the relation is real: while dbt parses, `ref()` gives
    the calling model, and a message would name it instead of the table read."""
    target = time_travel_table(adapter, relation)
    if not execute:
        return target
    spec = parse_as_of(as_of, f"lakehouse.as_of({target.render()})")
    if target.is_cte:
        return target  # an ephemeral model or a unit test's fixture rows: no history
    if checks_now():
        check_time_travel(adapter, target, spec)
    return target.with_time_travel(spec)


def check_time_travel(adapter: LakehouseAdapter, relation: LakehouseRelation, as_of: AsOf) -> None:
    table = relation.render()
    try:
        check_as_of(adapter._metadata_rows, table, as_of)
    except (RelationMissingError, NamespaceMissingError) as exc:
        raise TimeTravelError(
            f"Table {table} does not exist (or is a view, which has no snapshots), so it "
            f"cannot be read as of {as_of.describe()}. Fix: check the name, or build the "
            "table before the node that reads it."
        ) from exc


def rollback_table(adapter: LakehouseAdapter, relation: Any, to: Any) -> list[str]:
    """Move `main` of a table back to a snapshot id or the state at a timestamp
    (`lakehouse_rollback`); the lines to print, main before and after.

    Refused, with nothing changed, when the target is not an ancestor of main's current
    snapshot, or when no ancestor is older than the timestamp."""
    target = time_travel_table(adapter, relation)
    catalog, namespace, name = target.database, target.schema, target.identifier
    assert catalog and namespace and name
    table = target.render()
    point = parse_rollback_target(to)
    try:
        history = read_history(adapter._metadata_rows, table)
    except (RelationMissingError, NamespaceMissingError) as exc:
        raise TimeTravelError(
            f"lakehouse_rollback: table {table} does not exist (or is a view). Nothing was "
            "changed. Fix: pass `relation: <schema>.<table>` (the target's catalog) or "
            "`<catalog>.<schema>.<table>`."
        ) from exc
    at_ms = None
    if point.key == "timestamp":
        at_ms = timestamp_millis(adapter._metadata_rows, str(point.value))
    plan = plan_rollback(history, point, at_ms)
    after = plan.before
    if plan.changes:
        adapter.execute(rollback_sql(catalog, namespace, name, plan, point))
        after = read_history(adapter._metadata_rows, table).main or plan.target
        mirror_if_dual(adapter, TableName.of(target))
    return rollback_report(plan, after)


def mirror_if_dual(adapter: LakehouseAdapter, table: TableName) -> None:
    with adapter._spark_session(f"mirror {table} to its Delta log") as spark:
        if logged_delta_uri(adapter, spark, table) is not None:
            delta_adapter.mirror(adapter, spark, table, table.name)


def logged_delta_uri(adapter: LakehouseAdapter, spark: Any, table: TableName) -> str | None:
    location = table_location(spark, table)
    if location is None:
        return None
    uri = deltasync.delta_uri(location)
    return uri if deltasync.has_log(uri, delta_adapter.delta_options(adapter, table)) else None


def time_travel_table(adapter: LakehouseAdapter, relation: Any) -> LakehouseRelation:
    if isinstance(relation, LakehouseRelation):
        return relation
    catalog, namespace, name = parse_table_name(relation, adapter.config.credentials.database)
    return adapter.Relation.create(database=catalog, schema=namespace, identifier=name)


def metadata_rows(adapter: LakehouseAdapter, sql: str) -> list[tuple[Any, ...]]:
    with adapter.connections.exception_handler(sql), runtime.rows_read_at_once():
        _, cursor = adapter.connections.add_query(sql, auto_begin=False)
        return list(cursor.fetchall())
