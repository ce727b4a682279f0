"""Where data tests' results are recorded: an Iceberg table in the test's own catalog,
`<catalog>.lakehouse_system.test_results`, so a result survives `target/` being deleted and is
shared by every machine writing the depot.

The table is only appended to (Iceberg appends never conflict with each other, so concurrent
runs need no coordination), and the newest row per (test, relation) is the one that counts.
A row is trusted only when everything it records (reuse/tests.py: the plan digest of the test's
query, its settings, each input's `main` snapshot and columns) equals what the test would read
now, so which of two concurrent rows wins never decides correctness.

Read once per invocation per catalog (the first test that asks reads, the others wait and take
the cached rows); written once per invocation per catalog, at its end, in one INSERT: one
commit, started and not waited for (reuse/test_store_write.py). A read first waits for such a
write still running (the previous command's, on a warm engine), so it sees what that wrote.

The read is a scan (a Spark job: 0.3 s to several seconds on a loaded 2-core machine, on the
path of every build that runs tests). The process keeps the rows it last
read or wrote with the store's `main` snapshot then (`_KNOWN`); a read whose store is still at
that snapshot (one py4j metadata load says so) takes them without a job. Rows older than the
newest are never unsafe, as above: they only cost a test's run.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.diagnosis import engine_error_text, engine_error_type
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName

logger = AdapterLogger("Lakehouse")

NAMESPACE = "lakehouse_system"
TABLE = "test_results"
# The columns, in order (the INSERT names none); comments say what each holds.
COLUMNS = (
    ("node_id", "string", "the test's unique_id"),
    ("relation", "string", "catalog.schema.alias of the test: tells targets apart"),
    ("failures", "bigint", "the failures dbt counted (fail_calc)"),
    ("should_warn", "boolean", "warn_if held"),
    ("should_error", "boolean", "error_if held"),
    ("record", "string", "JSON: lakehouse.build.* entries (query and settings hash, inputs)"),
    ("invocation_id", "string", "the dbt invocation that ran the test"),
    ("recorded_at", "timestamp", "when the test ran (UTC); the newest row per key wins"),
)

Query = Callable[[str], Sequence[Sequence[Any]]]


class Absent:
    """A store its catalog says is not there: no test recorded in that catalog yet, nothing to
    read. Told without the failing read, whose error PySpark converts on the way back (a dozen
    py4j calls: 0.2-0.3 s of a 2-core machine's build into an empty warehouse)."""


ABSENT = Absent()
# A store's `main` now: (snapshot id, data files), ABSENT, or None where it cannot be told
# cheaply (Spark Connect's client without a JVM, a catalog that failed to answer).
StoreState = Callable[[TableName], "tuple[int, int] | Absent | None"]
# How long a read of the store waits for a write still running (an earlier command's, on a warm
# engine) before it reads without those rows: their tests then run again.
SETTLE_SECONDS = 60.0


def store_of(catalog: str) -> TableName:
    return TableName(catalog, NAMESPACE, TABLE)


@dataclass(frozen=True)
class Stored:
    """A test's recorded result and what it was computed from."""

    failures: int
    should_warn: bool
    should_error: bool
    record: Mapping[str, str]


@dataclass(frozen=True)
class Row:
    """A result to record: its key, the result, its record entries."""

    catalog: str
    node_id: str
    relation: str
    stored: Stored
    invocation_id: str
    recorded_at: dt.datetime


def read_sql(table: TableName) -> str:
    """Every row, the newest per (test, relation) picked here (parse_rows): a plain scan, one
    Spark job without a shuffle, where a window would add a stage. The store stays small
    (MAX_FILES), so its rows are few."""
    return (
        "select node_id, relation, failures, should_warn, should_error, record, recorded_at"
        f" from {table.sql_name}"
    )


def parse_rows(rows: Iterable[Sequence[Any]]) -> dict[tuple[str, str], Stored]:
    """(node_id, relation) -> its newest result (by `recorded_at`, read_sql's last column);
    a row whose record is not JSON is skipped (the test then runs and records a good one)."""
    found: dict[tuple[str, str], tuple[str, Stored]] = {}
    for node_id, relation, failures, warn, error, record, recorded_at in rows:
        key, when = (str(node_id), str(relation)), str(recorded_at or "")
        if key in found and found[key][0] > when:
            continue
        try:
            entries = json.loads(str(record))
        except ValueError:
            continue
        if isinstance(entries, dict):
            recorded = {str(k): str(v) for k, v in entries.items()}
            found[key] = (when, Stored(int(failures or 0), bool(warn), bool(error), recorded))
    return {key: stored for key, (_, stored) in found.items()}


# (invocation, catalog) -> the store's newest rows, read once; rows to write at the end.
_READ: dict[tuple[str, str], dict[tuple[str, str], Stored]] = {}
# catalog -> (the store's snapshot id, its newest rows then), what this process last read or
# wrote there, kept across invocations (the module's doc says why that is safe).
_KNOWN: dict[str, tuple[int, dict[tuple[str, str], Stored]]] = {}
_READ_LOCK = threading.Lock()
_BUFFER: list[Row] = []
_BUFFER_LOCK = threading.Lock()


# (invocation, catalog) -> the read started by the invocation's first node that decides.
_PREFETCH: dict[tuple[str, str], threading.Thread] = {}
# What a store not there yet fails with: no test recorded in that catalog so far.
_MISSING = (RelationMissingError, NamespaceMissingError)
# The commands whose tests read the store.
TESTING_COMMANDS = frozenset({"build", "test"})


def jvm_state(spark: Any) -> StoreState | None:
    """The StoreState reader of a session whose driver JVM is here; None under Connect."""
    if runtime.is_connect(spark):
        return None

    def state(table: TableName) -> tuple[int, int] | Absent | None:
        from dbt.adapters.lakehouse.engine import later
        from dbt.adapters.lakehouse.iceberg import java

        try:
            # an earlier command's write still running (a warm engine): what it wrote counts
            if later.settle(spark, SETTLE_SECONDS):
                logger.debug(f"waited for the test results an earlier run was writing to {table}")
            if not spark._jsparkSession.catalog().tableExists(table.sql_name):
                return ABSENT
            snapshot = java.bridge(spark, "test results", "").load(spark, table.sql_name)
            snapshot = snapshot.currentSnapshot()
        except Exception:  # no store yet, or unreadable: the read says which
            return None
        if snapshot is None:
            return None
        files = snapshot.summary().get("total-data-files")
        return int(snapshot.snapshotId()), int(files or 0)

    return state


def _state_now(catalog: str, state: StoreState | None) -> tuple[int, int] | Absent | None:
    return state(store_of(catalog)) if state is not None else None


def _unchanged(
    catalog: str, now: tuple[int, int] | Absent | None
) -> dict[tuple[str, str], Stored] | None:
    """The rows this process last knew of `catalog`'s store, when it is still at `now`; none
    when it is not there."""
    _written_known(catalog)
    if isinstance(now, Absent):
        _know(catalog, now, {})  # nothing known of a store not there
        logger.debug(f"no test results recorded in {catalog} yet: {store_of(catalog)} is not there")
        return {}
    with _READ_LOCK:
        known = _KNOWN.get(catalog)
    if now is None or known is None or known[0] != now[0]:
        return None
    logger.debug(f"the test results of {catalog} are those this process last read or wrote")
    return known[1]


def _know(
    catalog: str, now: tuple[int, int] | Absent | None, rows: dict[tuple[str, str], Stored]
) -> None:
    """`rows` as the store at `now` (read at or after that snapshot: a superset is safe)."""
    with _READ_LOCK:
        if now is None or isinstance(now, Absent):
            _KNOWN.pop(catalog, None)
        else:
            _KNOWN[catalog] = (now[0], rows)


class Writing(Protocol):
    """A write started and not waited for (engine/later.py's handle)."""

    def wait(self, seconds: float) -> bool: ...
    def state(self) -> tuple[int, int] | None: ...
    def failure(self) -> str | None: ...


# catalog -> the write this process started last, and the store's rows once it is done (None:
# not known, this process had not read the store).
_WRITING: dict[str, tuple[Writing, dict[tuple[str, str], Stored] | None]] = {}
# catalog -> the data files of the store this invocation's read found there (0: not counted).
_FOUND: dict[str, int] = {}


def wrote(catalog: str, writing: Writing, rows: dict[tuple[str, str], Stored] | None) -> None:
    """A write of this process to `catalog`'s store started; `rows`: the store's once done."""
    with _READ_LOCK:
        _WRITING[catalog] = (writing, rows)
        _KNOWN.pop(catalog, None)


def _written_known(catalog: str) -> None:
    """This process's last write to `catalog`'s store, done by now (the state read settled
    it): its rows known at the snapshot it made, or its failure said."""
    with _READ_LOCK:
        writing, rows = _WRITING.pop(catalog, (None, None))
    if writing is None:
        return
    try:
        done = writing.wait(SETTLE_SECONDS)
        failure, now = writing.failure(), writing.state()
    except Exception:  # its engine is gone (the session restarted): nothing to know
        return
    if failure is not None:
        logger.warning(
            f"Recording the last run's test results in {store_of(catalog)} failed; those tests "
            f"run again: {failure}"
        )
    elif done and now is not None and rows is not None:
        _know(catalog, now, rows)


def _found(catalog: str, now: tuple[int, int] | Absent | None) -> None:
    """The store was found (an absent one is made by the invocation's write)."""
    if isinstance(now, Absent):
        return
    with _READ_LOCK:
        _FOUND[catalog] = now[1] if now is not None else 0


def prefetch(spark: Any, invocation: str, catalog: str) -> None:
    """Read `catalog`'s store in the background, from the invocation's first node that decides
    (a seed or a model, before any test runs), so no test waits for the read. Its failure only
    leaves the read to the first test (recorded). A store not there yet is created by the
    invocation's end, with its first rows (reuse/test_store_write.py)."""
    key = (invocation, catalog)
    with _READ_LOCK:
        if key in _READ or key in _PREFETCH:
            return
        thread = threading.Thread(
            target=_prefetched, args=(spark, key), name="lakehouse-test-results", daemon=True
        )
        # Started before another thread can find it: a test that waits for the read joins it,
        # and a thread not started yet cannot be joined.
        thread.start()
        _PREFETCH[key] = thread


def _prefetched(spark: Any, key: tuple[str, str]) -> None:
    started = time.monotonic()
    now = _state_now(key[1], jvm_state(spark))
    found = _unchanged(key[1], now)
    if found is None:
        try:
            rows = runtime.rows(spark, read_sql(store_of(key[1])))
        except Exception as exc:
            if engine_error_type(engine_error_text(exc)) not in _MISSING:
                return  # unreadable: the first test's read (recorded) tries again and says why
            rows = []  # no test recorded in this catalog yet: the tests need not look again
            now = ABSENT
        else:
            _found(key[1], now)
        found = parse_rows(rows)
        _know(key[1], now, found)
    else:
        _found(key[1], now)
    logger.debug(
        f"read {len(found)} recorded test result(s) of {key[1]} ahead of its tests in "
        f"{time.monotonic() - started:.2f}s"
    )
    with _READ_LOCK:
        _READ.setdefault(key, found)


def recorded(
    query: Query,
    invocation: str,
    catalog: str,
    key: tuple[str, str],
    state: StoreState | None = None,
) -> Stored | None:
    """The newest result recorded for `key` in `catalog`'s store, as read by this invocation's
    first test there (or before it, prefetch), or as this process last knew it when the store
    has not moved since (`state`). A store that cannot be read counts as empty: the test
    runs."""
    started = _PREFETCH.get((invocation, catalog))
    if started is not None:
        started.join()
    with _READ_LOCK:
        rows = _READ.get((invocation, catalog))
    if rows is not None:
        return rows.get(key)
    with _FIRST_READ:  # the other threads wait for the one read, then take its rows
        rows = _READ.get((invocation, catalog))
        if rows is None:
            now = _state_now(catalog, state)
            rows = _unchanged(catalog, now)
            if rows is None:
                rows, present = _read(query, store_of(catalog))
                if present:
                    _found(catalog, now)
                _know(catalog, now if present else None, rows)
            else:
                _found(catalog, now)
            with _READ_LOCK:
                _READ[(invocation, catalog)] = rows
    return rows.get(key)


_FIRST_READ = threading.Lock()


def _read(query: Query, table: TableName) -> tuple[dict[tuple[str, str], Stored], bool]:
    """The store's newest rows, and whether it is there ({} when it cannot be read)."""
    started = time.monotonic()
    try:
        found = parse_rows(query(read_sql(table)))
        logger.debug(
            f"read {len(found)} recorded test result(s) from {table} in "
            f"{time.monotonic() - started:.2f}s"
        )
        return found, True
    except _MISSING:
        return {}, False  # no test recorded in this catalog yet
    except Exception as exc:  # reuse saves time; it never fails a test
        logger.warning(f"Reading the recorded test results in {table} failed; tests run: {exc}")
        return {}, False


def buffer(row: Row) -> None:
    with _BUFFER_LOCK:
        _BUFFER.append(row)


def end_invocation() -> tuple[list[Row], dict[str, int]]:
    """The buffered rows, taken, and the data files of each store this invocation found; this
    process's reads forgotten (the next invocation reads the store again, other writers' rows
    included)."""
    with _BUFFER_LOCK:
        rows = list(_BUFFER)
        _BUFFER.clear()
    with _READ_LOCK:
        started = list(_PREFETCH.values())
        _PREFETCH.clear()
    for thread in started:  # a read still running would fill the next invocation's cache
        thread.join()
    with _READ_LOCK:
        _READ.clear()
        found = dict(_FOUND)
        _FOUND.clear()
    return rows, found


def known_rows(catalog: str) -> dict[tuple[str, str], Stored] | None:
    """The store's rows as this process last knew them, if it does."""
    with _READ_LOCK:
        known = _KNOWN.get(catalog)
    return None if known is None else dict(known[1])
