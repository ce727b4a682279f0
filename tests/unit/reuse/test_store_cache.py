"""The test-results store as one process keeps it (reuse/test_store.py): a store still at the
snapshot this process last read or wrote is not read again; one that moved is; what a write
added is known without a read; a store past MAX_FILES data files is rewritten to its newest
rows after a write."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse import test_store
from dbt.adapters.lakehouse.reuse.test_store import Row, Stored


class Store:
    """A store's `main` snapshot and data files, moved by the test like a writer would."""

    def __init__(self) -> None:
        self.snapshot, self.files = 1, 1
        self.reads: list[str] = []
        self.statements: list[str] = []

    def state(self, table: TableName) -> tuple[int, int] | None:
        assert str(table) == str(test_store.store_of("c"))
        return self.snapshot, self.files

    def query(self, sql: str) -> list[tuple]:
        self.reads.append(sql)
        return [("a", "c.s.a", 2, True, False, "{}", "2026-01-02 03:04:05")]

    def execute(self, sql: str) -> None:
        self.statements.append(sql)
        self.snapshot += 1
        self.files = 1 if sql.startswith("insert overwrite") else self.files + 1


@pytest.fixture
def store() -> Iterator[Store]:
    test_store.end_invocation()
    test_store._KNOWN.clear()
    yield Store()
    test_store.end_invocation()
    test_store._KNOWN.clear()


def _row(node: str, failures: int) -> Row:
    when = dt.datetime(2026, 1, 2, 3, 4, 5)
    return Row("c", node, f"c.s.{node}", Stored(failures, False, False, {}), "inv", when)


def test_an_unmoved_store_is_not_read_again(store: Store) -> None:
    first = test_store.recorded(store.query, "inv-1", "c", ("a", "c.s.a"), store.state)
    assert first == Stored(2, True, False, {}) and len(store.reads) == 1
    test_store.end_invocation()
    again = test_store.recorded(store.query, "inv-2", "c", ("a", "c.s.a"), store.state)
    assert again == first and len(store.reads) == 1
    test_store.end_invocation()
    store.snapshot += 1  # another writer appended
    test_store.recorded(store.query, "inv-3", "c", ("a", "c.s.a"), store.state)
    assert len(store.reads) == 2
    test_store.end_invocation()
    # Without a state reader (Spark Connect) every invocation reads.
    test_store.recorded(store.query, "inv-4", "c", ("a", "c.s.a"))
    assert len(store.reads) == 3


def test_what_a_write_added_is_known_without_a_read(store: Store) -> None:
    test_store.recorded(store.query, "inv-1", "c", ("a", "c.s.a"), store.state)
    assert test_store.write(store.execute, [_row("b", 1)], store.state) == 1
    test_store.end_invocation()
    found = test_store.recorded(store.query, "inv-2", "c", ("b", "c.s.b"), store.state)
    assert found == Stored(1, False, False, {}) and len(store.reads) == 1
    assert test_store.recorded(store.query, "inv-2", "c", ("a", "c.s.a")) is not None


def test_a_store_past_max_files_is_rewritten_to_its_newest_rows(store: Store) -> None:
    store.files = test_store.MAX_FILES
    test_store.write(store.execute, [_row("b", 1)], store.state)
    assert store.statements[-1].startswith("insert overwrite") and store.files == 1
    assert "row_number() over (partition by node_id, relation" in store.statements[-1]
    test_store.write(store.execute, [_row("c", 0)], store.state)
    assert store.statements[-1].startswith("insert into"), store.statements


class _Session:
    """A session whose read of the store fails with `error` (no JVM: its snapshot is unknown)."""

    def __init__(self, error: str) -> None:
        self.error = error

    def sql(self, query: str) -> None:
        raise RuntimeError(self.error)


def test_a_store_not_there_yet_is_looked_for_once_ahead_of_the_tests(store: Store) -> None:
    missing = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `c`.`lakehouse_system`.`test_results`"
    test_store.prefetch(_Session(missing), "inv", "c")
    # The tests take the prefetch's answer, nothing recorded, without a read of their own.
    assert test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), store.state) is None
    assert store.reads == []


def test_a_store_not_there_yet_is_created_ahead_of_the_invocations_end(store: Store) -> None:
    missing = "[SCHEMA_NOT_FOUND] The schema `c`.`lakehouse_system` cannot be found."
    test_store.prefetch(_Session(missing), "inv", "c", store.execute)
    test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), store.state)
    assert store.statements == test_store.create_sql(test_store.store_of("c"))
    # A store that cannot be created (a read-only depot) is left to the end's write.
    test_store.end_invocation()

    def refused(sql: str) -> None:
        raise RuntimeError("mounted read-only")

    test_store.prefetch(_Session(missing), "inv-2", "c", refused)
    assert test_store.recorded(store.query, "inv-2", "c", ("a", "c.s.a"), store.state) is None


def test_an_unreadable_store_is_left_to_the_first_test(store: Store) -> None:
    test_store.prefetch(_Session("Connection refused"), "inv", "c", store.execute)
    found = test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), store.state)
    assert found == Stored(2, True, False, {}) and len(store.reads) == 1
    assert store.statements == []  # only a store known to be missing is created
