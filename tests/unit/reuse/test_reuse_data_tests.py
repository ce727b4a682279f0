"""Reused data tests' pure parts (reuse/tests.py, reuse/test_store.py): when a recorded result
stands and why a test runs, the result as the one row dbt's runner reads, the store's rows
written and read back (newest per key), that a failed write is a warning, never a failed
invocation, and the run's summary counting the tests reuse applied to."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from google.protobuf.struct_pb2 import Struct

from dbt.adapters.lakehouse.exceptions import RelationMissingError
from dbt.adapters.lakehouse.mv.state import BUILD_PREFIX, UpstreamState, record_properties
from dbt.adapters.lakehouse.report import summary
from dbt.adapters.lakehouse.reuse import test_store, test_store_write
from dbt.adapters.lakehouse.reuse.test_store import Row, Stored
from dbt.adapters.lakehouse.reuse.tests import (
    NO_RECORD,
    REUSED,
    identity_text,
    result_of,
    result_table,
    verdict_of,
)

EVENTS = "c.s.events"
CONFIG = {"severity": "ERROR", "fail_calc": "count(*)", "warn_if": "!= 0", "error_if": "!= 0"}


def _stored(states: list[UpstreamState], identity: str) -> Stored:
    record = record_properties(states, identity, {}, "2026-01-01T00:00:00Z", BUILD_PREFIX)
    return Stored(2, True, False, record)


def test_an_unchanged_test_is_reused_and_each_change_says_why() -> None:
    identity = identity_text("abc", CONFIG, None)
    before = [UpstreamState(EVENTS, 10, "h1")]
    stored = _stored(before, identity)
    assert verdict_of(stored, before, identity) == (True, REUSED)
    assert verdict_of(None, before, identity) == (False, NO_RECORD)
    assert verdict_of(Stored(0, False, False, {}), before, identity) == (False, NO_RECORD)
    moved = [UpstreamState(EVENTS, 11, "h1")]
    assert verdict_of(stored, moved, identity) == (
        False,
        f"{EVENTS} moved from snapshot 10 to 11",
    )
    altered = [UpstreamState(EVENTS, 10, "h2")]
    assert verdict_of(stored, altered, identity) == (False, f"the schema of {EVENTS} changed")
    added = [*before, UpstreamState("c.s.labels", 3, "h3")]
    assert verdict_of(stored, added, identity) == (False, "c.s.labels is a new upstream")
    changed = "its query or settings changed"
    assert verdict_of(stored, before, identity_text("abd", CONFIG, None)) == (False, changed)
    warn = identity_text("abc", {**CONFIG, "severity": "warn"}, None)
    assert verdict_of(stored, before, warn) == (False, changed)
    headed = identity_text("abc", CONFIG, "set spark.sql.ansi.enabled=false;")
    assert verdict_of(stored, before, headed) == (False, changed)


def test_the_identity_watches_the_outcome_settings_only() -> None:
    base = identity_text("abc", CONFIG, None)
    assert identity_text("abc", {**CONFIG, "tags": ["nightly"], "meta": {"a": 1}}, None) == base
    for key, value in (("limit", 5), ("where", "id > 0"), ("store_failures", True)):
        assert identity_text("abc", {**CONFIG, key: value}, None) != base, key


@pytest.mark.parametrize("stored", [Stored(3, True, False, {}), Stored(0, False, False, {})])
def test_a_reused_result_is_the_row_dbt_reads(stored: Stored) -> None:
    from dbt.artifacts.schemas.results import TestStatus  # noqa: F401 (dbt's runner is there)
    from dbt.task.test import TestResultData, _coerce_decimal

    table = result_table(stored)
    assert len(table.rows) == 1 and len(table.columns) == 3
    # What dbt's TestRunner.execute_data_test does with it.
    row = dict(zip(table.column_names, map(_coerce_decimal, table.rows[0]), strict=True))
    data = TestResultData(**row, adapter_response={})
    assert (data.failures, data.should_warn, data.should_error) == (
        stored.failures, stored.should_warn, stored.should_error
    )  # fmt: skip
    assert result_of(list(table.column_names), list(table.rows[0])) == stored


def test_an_executed_result_is_read_as_dbt_reads_it() -> None:
    from decimal import Decimal

    row = result_of(["FAILURES", "should_warn", "should_error"], [Decimal(4), "true", 0])
    assert (row.failures, row.should_warn, row.should_error) == (4, True, False)
    assert result_of(["failures", "should_warn", "should_error"], [None, 1, "False"]) == Stored(
        0, True, False, {}
    )


def _row(node: str, failures: int, record: dict[str, str]) -> Row:
    return Row(
        "c",
        node,
        f"c.s_dbt_test__audit.{node}",
        Stored(failures, failures > 0, False, record),
        "inv-1",
        dt.datetime(2026, 1, 2, 3, 4, 5, 678901),
    )


def test_rows_are_written_as_literals_and_read_back() -> None:
    record = {"lakehouse.build.sql_hash": "h", "note": "it's a \\ test"}
    rows = [_row("a", 1, record), _row("b", 0, {})]
    sql = test_store_write.insert_sql(test_store.store_of("c"), rows)
    assert sql.startswith("insert into `c`.`lakehouse_system`.`test_results` values ('a', ")
    assert '\'{"lakehouse.build.sql_hash": "h", "note": "it\\\'s a \\\\\\\\ test"}\'' in sql
    assert "timestamp '2026-01-02 03:04:05.678901'" in sql and sql.count("), (") == 1
    newer, older = "2026-01-02 03:04:05.5", "2026-01-02 03:04:05"
    found = test_store.parse_rows(
        [("a", "c.s.a", 1, True, False, '{"lakehouse.build.sql_hash": "h"}', newer),
         ("a", "c.s.a", 7, True, True, "{}", older),  # older: the newest row counts
         ("b", "c.s.b", 0, False, False, "not json", newer)]
    )  # fmt: skip
    assert found == {("a", "c.s.a"): Stored(1, True, False, {"lakehouse.build.sql_hash": "h"})}
    assert test_store.read_sql(test_store.store_of("c")).endswith(
        ", recorded_at from `c`.`lakehouse_system`.`test_results`"
    )


def test_each_catalog_is_written_once_and_a_failure_only_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[tuple[list[str], str, list[str]]] = []

    def start(statements: list[str], table: str, catalogs: list[str]) -> object:
        started.append((statements, table, catalogs))
        return SimpleNamespace()

    rows = [
        _row("a", 1, {}),
        _row("b", 0, {}),
        Row("d", "b", "d.s.b", Stored(0, False, False, {}), "i", dt.datetime.now()),
    ]
    never = lambda catalog: False  # noqa: E731
    # "c"'s store was found by the invocation's read; "d"'s was not: made first
    assert test_store_write.write(start, rows, {"c": 3}, never) == 3
    kinds = [[s.split(" ")[0] for s in statements] for statements, _, _ in started]
    assert kinds == [["insert"], ["create", "create", "insert"]]
    assert started[0][0][0].count("), (") == 1 and started[0][1:] == (
        "`c`.`lakehouse_system`.`test_results`",
        ["c"],
    )
    warned: list[str] = []
    monkeypatch.setattr(test_store_write.logger, "warning", warned.append)

    def refused(statements: list[str], table: str, catalogs: list[str]) -> object:
        raise RuntimeError("catalog is gone")

    assert test_store_write.write(refused, rows, {}, never) == 0
    assert len(warned) == 2 and "catalog is gone" in warned[0]
    # A read-only depot is not written.
    started.clear()
    assert test_store_write.write(start, rows, {}, lambda catalog: catalog == "d") == 2
    assert [table for _, table, _ in started] == ["`c`.`lakehouse_system`.`test_results`"]
    test_store._WRITING.clear()


def test_under_spark_connect_the_statements_run_at_once_in_order() -> None:
    """run_now (Spark Connect): each statement sent and waited for, in order; the handle says
    done with no snapshot read; a failing statement stops the rest and raises (write() warns)."""
    sent: list[str] = []

    class Session:
        def sql(self, statement: str) -> None:
            if statement == "boom":
                raise RuntimeError("the server refused it")
            sent.append(statement)

    handle = test_store_write.run_now(Session(), ["create", "insert"])
    assert sent == ["create", "insert"]
    assert (handle.wait(0), handle.state(), handle.failure()) == (True, None, None)
    with pytest.raises(RuntimeError, match="refused"):
        test_store_write.run_now(Session(), ["boom", "never"])
    assert sent == ["create", "insert"]


def test_the_store_is_read_once_per_invocation_and_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []

    def query(sql: str) -> list[tuple]:
        reads.append(sql)
        return [("a", "c.s.a", 2, True, False, "{}", None)]

    test_store.end_invocation()
    assert test_store.recorded(query, "inv", "c", ("a", "c.s.a")) == Stored(2, True, False, {})
    assert test_store.recorded(query, "inv", "c", ("b", "c.s.b")) is None
    assert len(reads) == 1
    test_store.recorded(query, "inv", "d", ("a", "c.s.a"))
    assert len(reads) == 2

    def missing(sql: str) -> list[tuple]:
        raise RelationMissingError("no store yet")

    assert test_store.recorded(missing, "inv2", "c", ("a", "c.s.a")) is None
    test_store.buffer(_row("a", 0, {}))
    # the store "c" was found by inv's read (files not counted without a JVM: 0), not by inv2's
    assert test_store.end_invocation() == ([_row("a", 0, {})], {"c": 0, "d": 0})
    assert test_store.end_invocation() == ([], {})
    test_store.recorded(query, "inv", "c", ("a", "c.s.a"))
    assert len(reads) == 3  # forgotten at the invocation's end: read again
    test_store.end_invocation()


def _finished(node: str, response: dict) -> SimpleNamespace:
    struct = Struct()
    struct.update(response)
    result = SimpleNamespace(status="pass", execution_time=0.5, adapter_response=struct)
    data = SimpleNamespace(node_info=SimpleNamespace(unique_id=node), run_result=result)
    return SimpleNamespace(info=SimpleNamespace(name="NodeFinished"), data=data)


def test_the_run_summary_counts_tests_reuse_applied_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """`dbt test`: only the reused line (its tests have no costs to show); `dbt build`: the
    models' table, whose reused line counts the tests too. A test reuse did not apply to (no
    `reused` in its response) is not counted."""
    logged: list[str] = []
    monkeypatch.setattr(summary.logger, "info", logged.append)
    run = summary.begin_summary("test")
    assert run is not None
    run.observe(_finished("test.p.a", {"_message": "OK", "reused": True}))
    run.observe(_finished("test.p.b", {"_message": "OK", "reused": False}))
    run.observe(_finished("test.p.c", {"_message": "OK"}))
    run.observe(SimpleNamespace(info=SimpleNamespace(name="FinishedRunningStats")))
    assert logged == ["1 of 2 nodes reused (each one's reuse_reason in run_results.json)"]
    logged.clear()
    run = summary.begin_summary("build")
    assert run is not None
    model = {"_message": "CREATE 5", "rows_affected": 5, "spark_jobs": 1, "reused": False}
    run.observe(_finished("model.p.m", model))
    run.observe(_finished("test.p.a", {"_message": "OK", "reused": True}))
    run.observe(SimpleNamespace(info=SimpleNamespace(name="FinishedRunningStats")))
    assert len(logged) == 1 and "(1 nodes, by Spark task time)" in logged[0]
    assert logged[0].endswith("1 of 2 nodes reused (each one's reuse_reason in run_results.json)")
    summary.begin_summary("show")
