"""The rows `lakehouse.changes` reads, as SQL a model selects from.

A range of snapshots is read with Iceberg's `create_changelog_view` procedure and net changes:
rows a commit rewrote unchanged (copy-on-write) and rows inserted then deleted inside the range
are not changes. Iceberg 1.10's changelog scan refuses a table with delete files (merge-on-read
writes), so such a range is read as the difference of its two ends instead: what the end has
and the start lacks is inserted, the reverse deleted (both ends scanned whole; every change at
ordinal 0). Everything is the upstream as of one snapshot, every row an insert.

In an audited run, a table with the run's branch cannot be read at a snapshot, nor its
changelog, in a session that sets the WAP branch; the session is shared by dbt's threads, so the
conf cannot be lifted there. Such a range is computed in a session of its own without it, and
its rows handed over as a temporary view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

_CATALOG_CONF_PREFIX = "spark.sql.catalog."


def everything_sql(source: str, end: int | None, pin: bool = True, empty: bool = False) -> str:
    """The upstream as of `end`, every row an INSERT. `pin` False: the session's read already
    is `end` (the audited run's branch head), where Iceberg refuses a snapshot read."""
    as_of = f" version as of {end}" if end is not None and pin else ""
    snapshot = f"cast({end} as bigint)" if end is not None else "cast(null as bigint)"
    return (
        f"(select *, 'INSERT' as _change_type, 0 as _change_ordinal, {snapshot} as "
        f"_commit_snapshot_id from {source}{as_of}{' where false' if empty else ''})"
    )


def diff_sql(source: str, start: int, end: int) -> str:
    """The net changes from `start` to `end` as the difference of the two snapshots."""
    before, after = f"{source} version as of {start}", f"{source} version as of {end}"
    columns = f"0 as _change_ordinal, cast({end} as bigint) as _commit_snapshot_id"
    return (
        f"select *, 'INSERT' as _change_type, {columns} from "
        f"(select * from {after} except all select * from {before}) as inserted\n"
        f"union all\n"
        f"select *, 'DELETE' as _change_type, {columns} from "
        f"(select * from {before} except all select * from {after}) as deleted"
    )


def range_rows(
    adapter: LakehouseAdapter,
    upstream: TableName,
    start: int,
    end: int,
    view: str,
    apart: bool,
    diff: bool,
) -> str:
    """The changes after `start` up to `end`: a temporary view, or a parenthesised query."""
    if diff:
        query = diff_sql(upstream.sql_name, start, end)
        if not apart:
            return f"({query})"
        return _handed_over(adapter, upstream, view, lambda side: side.sql(query))
    call = (
        f"call {upstream.procedures}.create_changelog_view(table => {upstream.in_catalog}, "
        f"options => map('start-snapshot-id', '{start}', 'end-snapshot-id', '{end}'), "
        f"changelog_view => {string_literal(view)}, net_changes => true)"
    )
    if not apart:
        adapter.execute(call)
        return view

    def changelog(side: Any) -> Any:
        side.sql(call)
        found = side.table(view)
        return found

    return _handed_over(adapter, upstream, view, changelog)


def _handed_over(
    adapter: LakehouseAdapter, upstream: TableName, view: str, read: Callable[[Any], Any]
) -> str:
    """`read`'s rows, computed in a session without the WAP branch, as the node's `view`."""
    with adapter._spark_session(f"read the changes of {upstream}") as spark:
        from pyspark.sql import DataFrame

        side = spark.newSession()
        for key, value in _session_confs(spark).items():
            if key.startswith(_CATALOG_CONF_PREFIX):
                side.conf.set(key, value)
        rows = read(side).localCheckpoint(eager=True)
        side.catalog.dropTempView(view)
        handed = spark._jsparkSession.createDataFrame(rows._jdf.rdd(), rows._jdf.schema())
        DataFrame(handed, spark).createOrReplaceTempView(view)
    return view


def _session_confs(spark: Any) -> dict[str, str]:
    everything = spark._jsparkSession.conf().getAll()
    converted = spark._jvm.scala.collection.JavaConverters.mapAsJavaMap(everything)
    return {str(key): str(value) for key, value in converted.items()}
