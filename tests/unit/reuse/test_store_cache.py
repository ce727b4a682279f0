"""The test-results store as one process keeps it (reuse/test_store.py, test_store_write.py): a
store still at the snapshot this process last read or wrote is not read again; one that moved
is; what a write added is known without a read, once the write (not waited for) is done; a
failed write is said at the next read; a store the write takes past MAX_FILES data files is
rewritten to its newest rows; a store not there yet is made by the write, and one its catalog
says is absent is not read."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse import test_store, test_store_write
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

    def start(self, statements: list[str], table: str, catalogs: list[str]) -> Writing:
        """What engine/later.py does, here at once: the statements run, the state read."""
        assert table == test_store.store_of("c").sql_name and catalogs == ["c"]
        if self.failure:
            return Writing(None, self.failure)
        for statement in statements:
            self.execute(statement)
        return Writing((self.snapshot, self.files), None)

    failure: str | None = None


class Writing:
    def __init__(self, state: tuple[int, int] | None, failure: str | None) -> None:
        self._state, self._failure = state, failure

    def wait(self, seconds: float) -> bool:
        return True

    def state(self) -> tuple[int, int] | None:
        return self._state

    def failure(self) -> str | None:
        return self._failure


def _write(store: Store, rows: list[Row]) -> int:
    _, found = test_store.end_invocation()
    return test_store_write.write(store.start, rows, found, lambda catalog: False)


@pytest.fixture
def store() -> Iterator[Store]:
    test_store.end_invocation()
    test_store._KNOWN.clear()
    test_store._WRITING.clear()
    yield Store()
    test_store.end_invocation()
    test_store._KNOWN.clear()
    test_store._WRITING.clear()


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
    assert _write(store, [_row("b", 1)]) == 1
    assert [s.split(" ")[0] for s in store.statements] == ["insert"]  # the store was found
    found = test_store.recorded(store.query, "inv-2", "c", ("b", "c.s.b"), store.state)
    assert found == Stored(1, False, False, {}) and len(store.reads) == 1
    assert test_store.recorded(store.query, "inv-2", "c", ("a", "c.s.a")) is not None


def test_a_failed_write_is_said_at_the_next_read_and_its_rows_are_not_known(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(test_store.logger, "warning", warned.append)
    test_store.recorded(store.query, "inv-1", "c", ("a", "c.s.a"), store.state)
    store.failure = "CommitFailedException: the catalog refused"
    assert _write(store, [_row("b", 1)]) == 1  # started
    assert test_store.recorded(store.query, "inv-2", "c", ("b", "c.s.b"), store.state) is None
    assert len(warned) == 1 and "the catalog refused" in warned[0]
    assert "those tests run again" in warned[0]


def test_a_store_past_max_files_is_rewritten_to_its_newest_rows(store: Store) -> None:
    store.files = test_store_write.MAX_FILES
    test_store.recorded(store.query, "inv-1", "c", ("a", "c.s.a"), store.state)
    _write(store, [_row("b", 1)])
    assert store.statements[-1].startswith("insert overwrite") and store.files == 1
    assert "row_number() over (partition by node_id, relation" in store.statements[-1]
    test_store.recorded(store.query, "inv-2", "c", ("a", "c.s.a"), store.state)
    _write(store, [_row("c", 0)])
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


def test_a_store_not_there_yet_is_made_by_the_invocations_write(store: Store) -> None:
    missing = "[SCHEMA_NOT_FOUND] The schema `c`.`lakehouse_system` cannot be found."
    test_store.prefetch(_Session(missing), "inv", "c")
    assert test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), store.state) is None
    assert store.statements == []  # nothing made ahead of the tests: on the run's path
    _write(store, [_row("b", 1)])
    made = test_store_write.create_sql(test_store.store_of("c"))
    assert store.statements[:2] == made and store.statements[2].startswith("insert into")
    # what the new store holds is known: the next invocation reads nothing
    found = test_store.recorded(store.query, "inv-2", "c", ("b", "c.s.b"), store.state)
    assert found == Stored(1, False, False, {}) and store.reads == []


def test_an_unreadable_store_is_left_to_the_first_test(store: Store) -> None:
    test_store.prefetch(_Session("Connection refused"), "inv", "c")
    found = test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), store.state)
    assert found == Stored(2, True, False, {}) and len(store.reads) == 1


def test_a_store_its_catalog_says_is_absent_is_not_read_and_the_write_makes_it(
    store: Store,
) -> None:
    """No read that fails (its error converted on the way back): the catalog's answer is it."""

    def absent(table: TableName) -> test_store.Absent:
        return test_store.ABSENT

    assert test_store.recorded(store.query, "inv", "c", ("a", "c.s.a"), absent) is None
    assert store.reads == []
    _write(store, [_row("b", 1)])
    assert store.statements[:2] == test_store_write.create_sql(test_store.store_of("c"))
