"""Data tests' results written to their catalog's store (reuse/test_store.py) at the
invocation's end: one commit per catalog, started and not waited for (engine/later.py).

Under Spark Connect the statements run at the invocation's end and are waited for: the client
has no JVM that could finish them after the command.

That commit was the last thing a build waited for (0.1-0.3 s on a 2-core machine; its creation
of a store not there yet, before it, 0.1 s more), though nothing of the run depends on it: a
result not recorded only makes its test run once more. On a warm engine the statements finish
after the command has exited; the next read waits for them (test_store.SETTLE_SECONDS). A JVM
of the command's own waits for them before it stops.

The statements: the store created first unless this invocation's read found it, the rows
appended, and a store that the append takes past MAX_FILES data files rewritten to its newest
row per key (each write appends a file or two, each read scans them all).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.iceberg.table_name import TableName, quote, string_literal
from dbt.adapters.lakehouse.reuse import test_store
from dbt.adapters.lakehouse.reuse.test_store import COLUMNS, Row, Writing, store_of

logger = AdapterLogger("Lakehouse")

# Data files past which a write rewrites the store to its newest row per key.
MAX_FILES = 64
# (statements, the table whose state is read once they ran, the catalogs they use) -> their
# handle.
Start = Callable[[list[str], str, list[str]], Writing]


class RanNow:
    """Statements that ran before their handle was made (Spark Connect: the client has no JVM
    to finish them after the command; the server ends each before it answers). Their store's
    snapshot is not read: the next read scans the store."""

    def wait(self, seconds: float) -> bool:
        return True

    def state(self) -> tuple[int, int] | None:
        return None

    def failure(self) -> str | None:
        return None


def run_now(spark: Any, statements: Sequence[str]) -> Writing:
    """`statements` run in order through `spark`, waited for; one failing raises."""
    for statement in statements:
        spark.sql(statement)
    return RanNow()


def compact_sql(table: TableName) -> str:
    """The store rewritten to its newest row per key (one commit; a concurrent append it
    drops only costs that test a run)."""
    newest = (
        "select * from (select *, row_number() over (partition by node_id, relation order by"
        f" recorded_at desc) as newest from {table.sql_name}) where newest = 1"
    )
    columns = ", ".join(quote(name) for name, _, _ in COLUMNS)
    return f"insert overwrite {table.sql_name} select {columns} from ({newest})"


def create_sql(table: TableName) -> list[str]:
    columns = ", ".join(f"{quote(n)} {t} comment {string_literal(c)}" for n, t, c in COLUMNS)
    return [
        f"create namespace if not exists {quote(table.catalog)}.{quote(table.namespace)}",
        f"create table if not exists {table.sql_name} ({columns}) using iceberg",
    ]


def insert_sql(table: TableName, rows: Iterable[Row]) -> str:
    def values(row: Row) -> str:
        stamp = row.recorded_at.strftime("%Y-%m-%d %H:%M:%S.%f")
        return "({})".format(
            ", ".join(
                (
                    string_literal(row.node_id),
                    string_literal(row.relation),
                    f"cast({int(row.stored.failures)} as bigint)",
                    "true" if row.stored.should_warn else "false",
                    "true" if row.stored.should_error else "false",
                    string_literal(json.dumps(dict(row.stored.record), sort_keys=True)),
                    string_literal(row.invocation_id),
                    f"timestamp {string_literal(stamp)}",
                )
            )
        )

    return f"insert into {table.sql_name} values " + ", ".join(values(r) for r in rows)


def statements(table: TableName, rows: Sequence[Row], found_files: int | None) -> list[str]:
    """What one catalog's write runs: `found_files`, the data files of the store this
    invocation found (None: not found, or not read)."""
    created = create_sql(table) if found_files is None else []
    compacted = [compact_sql(table)] if (found_files or 0) + 1 > MAX_FILES else []
    return [*created, insert_sql(table, rows), *compacted]


def write(
    start: Start,
    rows: Sequence[Row],
    found: Mapping[str, int],
    refuses_writes: Callable[[str], bool],
) -> int:
    """Start each catalog's write; the rows started. `found`: the data files of each store the
    invocation's reads found (test_store.end_invocation); `refuses_writes`: whether a catalog
    is a depot mounted read-only (nothing is written there: those tests run every time)."""
    by_catalog: dict[str, list[Row]] = {}
    for row in rows:
        by_catalog.setdefault(row.catalog, []).append(row)
    started = 0
    for catalog, found_rows in sorted(by_catalog.items()):
        table = store_of(catalog)
        if refuses_writes(catalog):
            logger.debug(f"{len(found_rows)} test result(s) not recorded: {catalog} is read-only")
            continue
        # a store not found holds these rows only once written (a subset is safe: test_store)
        known = test_store.known_rows(catalog) if catalog in found else {}
        try:
            ran = statements(table, found_rows, found.get(catalog))
            writing = start(ran, table.sql_name, [catalog])
        except Exception as exc:  # reuse saves time; it never fails a run
            logger.warning(f"Recording {len(found_rows)} test result(s) in {table} failed: {exc}")
            continue
        if known is not None:
            known.update({(r.node_id, r.relation): r.stored for r in found_rows})
        test_store.wrote(catalog, writing, known)
        started += len(found_rows)
    return started
