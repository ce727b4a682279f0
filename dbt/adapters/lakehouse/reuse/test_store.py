"""Where data tests' results are recorded: an Iceberg table in the test's own catalog,
`<catalog>.lakehouse_system.test_results`, so a result survives `target/` being deleted and is
shared by every machine writing the depot.

The table is only appended to (Iceberg appends never conflict with each other, so concurrent
runs need no coordination), and the newest row per (test, relation) is the one that counts.
A row is trusted only when everything it records (reuse/tests.py: the plan digest of the test's
query, its settings, each input's `main` snapshot and columns) equals what the test would read
now, so which of two concurrent rows wins never decides correctness.

Read once per invocation per catalog (the first test that asks reads, the others wait and take
the cached rows); written once per invocation per catalog, at its end (the adapter's
`cleanup_connections`, which dbt calls after the last node), in one INSERT: one commit. A
store not there yet is created by the read ahead of the tests (prefetch), off the run's path.

The read is a scan (a Spark job: 0.3 s to several seconds on a loaded 2-core machine, on the
path of every build that runs tests). The process keeps the rows it last
read or wrote with the store's `main` snapshot then (`_KNOWN`); a read whose store is still at
that snapshot (one py4j metadata load says so) takes them without a job. Rows older than the
newest are never unsafe, as above: they only cost a test's run. The store is kept small: a
write that leaves it with more than MAX_FILES data files rewrites it to its newest row per key.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine.diagnosis import engine_error_text, engine_error_type
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName, quote, string_literal

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
Execute = Callable[[str], Any]
# A store's `main` now: (snapshot id, data files), or None where it cannot be read cheaply
# (no store yet, Spark Connect's client without a JVM).
StoreState = Callable[[TableName], "tuple[int, int] | None"]
# Data files past which a write rewrites the store to its newest row per key (each write
# appends a file or two, each read scans them all).
MAX_FILES = 64


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
    from dbt.adapters.lakehouse.engine import runtime

    if runtime.is_connect(spark):
        return None

    def state(table: TableName) -> tuple[int, int] | None:
        from dbt.adapters.lakehouse.iceberg import java

        try:
            snapshot = java.bridge(spark, "test results", "").load(spark, table.sql_name)
            snapshot = snapshot.currentSnapshot()
        except Exception:  # no store yet, or unreadable: the read says which
            return None
        if snapshot is None:
            return None
        files = snapshot.summary().get("total-data-files")
        return int(snapshot.snapshotId()), int(files or 0)

    return state


def _state_now(catalog: str, state: StoreState | None) -> tuple[int, int] | None:
    return state(store_of(catalog)) if state is not None else None


def _unchanged(catalog: str, now: tuple[int, int] | None) -> dict[tuple[str, str], Stored] | None:
    """The rows this process last knew of `catalog`'s store, when it is still at `now`."""
    with _READ_LOCK:
        known = _KNOWN.get(catalog)
    if now is None or known is None or known[0] != now[0]:
        return None
    logger.debug(f"the test results of {catalog} are those this process last read or wrote")
    return known[1]


def _know(catalog: str, now: tuple[int, int] | None, rows: dict[tuple[str, str], Stored]) -> None:
    """`rows` as the store at `now` (read at or after that snapshot: a superset is safe)."""
    with _READ_LOCK:
        if now is None:
            _KNOWN.pop(catalog, None)
        else:
            _KNOWN[catalog] = (now[0], rows)


def prefetch(spark: Any, invocation: str, catalog: str, execute: Execute | None = None) -> None:
    """Read `catalog`'s store in the background, from the invocation's first node that decides
    (a seed or a model, before any test runs), so no test waits for the read. Its failure only
    leaves the read to the first test (recorded). A store not there yet is created then, with
    `execute` (the adapter's statements, on a connection of its own), so the invocation's end
    only appends to it: creating it there took 0.3 s of the sample's first build."""
    key = (invocation, catalog)
    with _READ_LOCK:
        if key in _READ or key in _PREFETCH:
            return
        thread = threading.Thread(
            target=_prefetched,
            args=(spark, key, execute),
            name="lakehouse-test-results",
            daemon=True,
        )
        # Started before another thread can find it: a test that waits for the read joins it,
        # and a thread not started yet cannot be joined.
        thread.start()
        _PREFETCH[key] = thread


def _prefetched(spark: Any, key: tuple[str, str], execute: Execute | None = None) -> None:
    started = time.monotonic()
    now = _state_now(key[1], jvm_state(spark))
    found = _unchanged(key[1], now)
    if found is None:
        try:
            rows = [tuple(row) for row in spark.sql(read_sql(store_of(key[1]))).collect()]
        except Exception as exc:
            if engine_error_type(engine_error_text(exc)) not in _MISSING:
                return  # unreadable: the first test's read (recorded) tries again and says why
            rows = []  # no test recorded in this catalog yet: the tests need not look again
            if execute is not None:
                _create(execute, store_of(key[1]))
        found = parse_rows(rows)
        _know(key[1], now, found)
    logger.debug(
        f"read {len(found)} recorded test result(s) of {key[1]} ahead of its tests in "
        f"{time.monotonic() - started:.2f}s"
    )
    with _READ_LOCK:
        _READ.setdefault(key, found)


def _create(execute: Execute, table: TableName) -> None:
    """The store made empty ahead of the invocation's end. Its failure (a read-only depot, a
    concurrent run creating it) leaves the creation to that end's write, which says why."""
    try:
        for statement in create_sql(table):
            execute(statement)
    except Exception as exc:
        logger.debug(f"creating {table} ahead of the tests' results failed: {exc}")


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
                rows = _read(query, store_of(catalog))
                _know(catalog, now, rows)
            with _READ_LOCK:
                _READ[(invocation, catalog)] = rows
    return rows.get(key)


_FIRST_READ = threading.Lock()


def _read(query: Query, table: TableName) -> dict[tuple[str, str], Stored]:
    started = time.monotonic()
    try:
        found = parse_rows(query(read_sql(table)))
        logger.debug(
            f"read {len(found)} recorded test result(s) from {table} in "
            f"{time.monotonic() - started:.2f}s"
        )
        return found
    except _MISSING:
        return {}  # no test recorded in this catalog yet
    except Exception as exc:  # reuse saves time; it never fails a test
        logger.warning(f"Reading the recorded test results in {table} failed; tests run: {exc}")
        return {}


def buffer(row: Row) -> None:
    with _BUFFER_LOCK:
        _BUFFER.append(row)


def end_invocation() -> list[Row]:
    """The buffered rows, taken; this process's reads forgotten (the next invocation reads the
    store again, other writers' rows included)."""
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
    return rows


def write(execute: Execute, rows: Sequence[Row], state: StoreState | None = None) -> int:
    """One INSERT per catalog (the store created on its first write); a store then past
    MAX_FILES data files rewritten to its newest rows. A failure is a warning: those results
    are recorded again when their tests next run. Returns the rows written. With `state`, what
    this process knew of the store, plus these rows, is kept as the store now."""
    written = 0
    by_catalog: dict[str, list[Row]] = {}
    for row in rows:
        by_catalog.setdefault(row.catalog, []).append(row)
    for catalog, found in sorted(by_catalog.items()):
        table = store_of(catalog)
        with _READ_LOCK:
            before = _KNOWN.get(catalog)
        try:
            try:
                execute(insert_sql(table, found))
            except _MISSING:
                for statement in create_sql(table):
                    execute(statement)
                before = (0, {})  # a new store: it holds these rows only
                execute(insert_sql(table, found))
        except Exception as exc:
            logger.warning(f"Recording {len(found)} test result(s) in {table} failed: {exc}")
            continue
        written += len(found)
        now = _state_now(catalog, state)
        if now is not None and now[1] > MAX_FILES:
            _compact(execute, table, now[1])
            now = _state_now(catalog, state)
        if before is not None:
            rows_now = dict(before[1])
            rows_now.update({(r.node_id, r.relation): r.stored for r in found})
            _know(catalog, now, rows_now)
    return written


def _compact(execute: Execute, table: TableName, files: int) -> None:
    started = time.monotonic()
    try:
        execute(compact_sql(table))
    except Exception as exc:  # a concurrent writer, say: the next write tries again
        logger.debug(f"rewriting {table} ({files} data files) failed: {exc}")
        return
    logger.debug(
        f"rewrote {table} ({files} data files) to its newest rows in "
        f"{time.monotonic() - started:.2f}s"
    )
