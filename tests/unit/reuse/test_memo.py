"""Reuse decisions remembered between runs (reuse/memo.py): when a decision is recalled, when it
is remembered, what a statement does to the session, and the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    EmbeddedCatalog,
    connect,
    metadata_locations,
    prepare_catalog,
)
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse import memo, session_state


def _catalog(tmp_path: Path) -> EmbeddedCatalog:
    catalog = EmbeddedCatalog(name="lakehouse", warehouse=tmp_path / "warehouse")
    prepare_catalog(catalog)
    return catalog


def _commit(catalog: EmbeddedCatalog, namespace: str, name: str, location: str) -> None:
    """What Iceberg's JdbcCatalog does on a commit: the row's metadata location replaced."""
    with connect(catalog.database_file) as con:
        con.execute(
            "INSERT OR REPLACE INTO iceberg_tables VALUES (?, ?, ?, ?, NULL, 'TABLE')",
            (catalog.name, namespace, name, location),
        )


def _adapter(catalog: EmbeddedCatalog, target: Path, connect_master: bool = False) -> Any:
    spec = SimpleNamespace(embedded_catalog=catalog, is_connect=connect_master, fingerprint="f1")
    return SimpleNamespace(
        _resolved=lambda: SimpleNamespace(spec=spec),
        config=SimpleNamespace(project_target_path=str(target)),
    )


@pytest.fixture(autouse=True)
def _fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    from dbt.adapters.lakehouse.engine import lifecycle

    monkeypatch.setattr(memo, "_STORES", {})
    # no session started in this process yet (a functional test's may have run a SET)
    monkeypatch.setattr(lifecycle._Engine, "active", property(lambda self: None))
    monkeypatch.delenv(memo.ENV, raising=False)


def test_locations_are_read_from_the_catalog_rows_and_follow_a_replaced_file(
    tmp_path: Path,
) -> None:
    catalog = _catalog(tmp_path)
    _commit(catalog, "jaffle", "orders", "m1")
    _commit(catalog, "other", "t", "m2")
    assert metadata_locations(catalog.database_file, "lakehouse") == {
        ("jaffle", "orders"): "m1",
        ("other", "t"): "m2",
    }
    assert metadata_locations(catalog.database_file, "lakehouse", {"jaffle"}) == {
        ("jaffle", "orders"): "m1"
    }
    assert metadata_locations(catalog.database_file, "elsewhere") == {}
    # A warehouse deleted and made again: the new file's rows, not the kept connection's.
    shutil.rmtree(catalog.warehouse)
    prepare_catalog(catalog)
    _commit(catalog, "jaffle", "orders", "m9")
    assert metadata_locations(catalog.database_file, "lakehouse") == {("jaffle", "orders"): "m9"}


MODEL = {"unique_id": "model.p.m", "config": {"materialized": "table"}}


def _decide(adapter: Any, parts: tuple[str, ...] = ("q",)) -> Any:
    return memo.recall(adapter, "lakehouse", MODEL, "lakehouse.jaffle.m", parts, ("select 1",))


def test_a_reuse_is_recalled_until_an_object_it_watched_moves(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    _commit(catalog, "jaffle", "m", "own-1")
    _commit(catalog, "jaffle", "src", "src-1")
    adapter = _adapter(catalog, tmp_path / "target")
    objects = (TableName("lakehouse", "jaffle", "m"), TableName("lakehouse", "jaffle", "src"))

    attempt = _decide(adapter)
    assert isinstance(attempt, memo.Attempt)
    attempt.remember(objects, "nothing moved")
    memo.save_all()  # the invocation's end: the next one reads the file

    found = _decide(adapter)
    assert isinstance(found, memo.Remembered) and found.reason == "nothing moved"
    assert isinstance(_decide(adapter, ("another query",)), memo.Attempt)
    _commit(catalog, "jaffle", "src", "src-2")  # a commit to an input
    assert isinstance(_decide(adapter), memo.Attempt)


def test_nothing_is_remembered_when_an_object_moved_during_the_decision(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    _commit(catalog, "jaffle", "m", "own-1")
    adapter = _adapter(catalog, tmp_path / "target")
    attempt = _decide(adapter)
    _commit(catalog, "jaffle", "m", "own-2")  # another writer, between its reads
    attempt.remember((TableName("lakehouse", "jaffle", "m"),), "r")
    assert isinstance(_decide(adapter), memo.Attempt)
    # nor when an object is another catalog's, or could not all be told
    attempt = _decide(adapter)
    attempt.remember((TableName("other", "jaffle", "m"),), "r")
    attempt.remember(None, "r")
    assert isinstance(_decide(adapter), memo.Attempt)


def test_the_memo_applies_to_the_embedded_catalog_only_and_can_be_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = _catalog(tmp_path)
    target = tmp_path / "target"
    assert memo.recall(_adapter(catalog, target), "mounted", MODEL, "r", ("q",)) is None
    connect_adapter = _adapter(catalog, target, connect_master=True)
    assert memo.recall(connect_adapter, "lakehouse", MODEL, "r", ()) is None
    monkeypatch.setenv(memo.ENV, "off")
    assert memo.recall(_adapter(catalog, target), "lakehouse", MODEL, "r", ("q",)) is None


@pytest.mark.parametrize(
    "statement",
    [
        "USE jaffle",
        '/* {"app": "dbt"} */\nset spark.sql.ansi.enabled = false',
        "-- lakehouse\nRESET",
        "DECLARE VARIABLE v INT DEFAULT 1",
        "add jar /tmp/x.jar",
        "CREATE OR REPLACE TEMPORARY FUNCTION f AS 'x.F'",
        "create function f as 'x.F'",
        "DROP TEMPORARY VARIABLE v",
    ],
)
def test_statements_that_change_the_session_stop_recalling(statement: str) -> None:
    session = SimpleNamespace()
    session_state.statement_ran(session, statement)
    assert getattr(session, session_state._CHANGED, None)


@pytest.mark.parametrize(
    "statement",
    [
        "create or replace table lakehouse.jaffle.t as select 1",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
        "select 'use jaffle'",
        "insert into t values (1)",
        "create or replace view v as select 1",
    ],
)
def test_writes_and_queries_leave_the_session_as_it_was(statement: str) -> None:
    session = SimpleNamespace()
    session_state.statement_ran(session, statement)
    assert vars(session) == {}


def test_a_temporary_view_made_by_a_statement_stops_recalling_queries_that_name_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dbt.adapters.lakehouse.engine import lifecycle

    session = SimpleNamespace()
    monkeypatch.setattr(lifecycle._Engine, "active", property(lambda self: session))
    made = "create or replace temporary view `orders__dbt_tmp` as select 1"
    session_state.statement_ran(session, made)
    assert session_state.session_as_new(["select * from lakehouse.jaffle.orders"])
    assert not session_state.session_as_new(["select * from ORDERS__dbt_tmp"])
    session_state.session_changed(session, "a Python model ran")
    assert not session_state.session_as_new(["select 1"])


def test_the_file_merges_concurrent_runs_and_ignores_another_format(tmp_path: Path) -> None:
    path = tmp_path / memo.FILE_NAME
    first, second = memo._Store(path), memo._Store(path)
    first.put("a", memo.Remembered("k1", (("ns", "t", "m1"),), "r"))
    second.put("b", memo.Remembered("k2", (), "r", (3, True, False)))
    first.save()
    second.save()  # read the file as it is now: both entries kept
    entries = memo._read(path)
    assert set(entries) == {"a", "b"} and entries["b"].result == (3, True, False)
    path.write_text(json.dumps({"format": memo.FORMAT + 1, "entries": {}}))
    assert memo._read(path) == {}
    path.write_text("{not json")
    assert memo._read(path) == {}


def _run_adapter(catalog: EmbeddedCatalog, target: Path, nodes: dict[str, str], **hooks: Any):
    """An adapter whose manifest holds `nodes` (unique id -> file checksum)."""
    adapter = _adapter(catalog, target)
    adapter.config.on_run_start, adapter.config.on_run_end = hooks.get("start"), None
    hashed = {u: SimpleNamespace(checksum=SimpleNamespace(checksum=c)) for u, c in nodes.items()}
    manifest = SimpleNamespace(nodes=hashed)
    adapter.get_macro_resolver = lambda: manifest
    return adapter


def test_the_engine_starts_unless_every_selected_node_has_a_decision_that_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dbt import selected_resources
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

    catalog = _catalog(tmp_path)
    _commit(catalog, "jaffle", "m", "own-1")
    target = tmp_path / "target"
    adapter = _run_adapter(catalog, target, {"model.p.m": "c1"})
    model = {**MODEL, "checksum": {"name": "sha256", "checksum": "c1"}}
    attempt = memo.recall(adapter, "lakehouse", model, "lakehouse.jaffle.m", ("q",))
    attempt.remember((TableName("lakehouse", "jaffle", "m"),), "r")
    memo.save_all()
    started: list[bool] = []
    monkeypatch.setattr(ENGINE, "has_deferred", lambda: True)
    monkeypatch.setattr(ENGINE, "start_deferred", lambda: started.append(True) or True)

    def starts(adapter: Any, selected: set[str], catalog: str = "lakehouse") -> bool:
        started.clear()
        monkeypatch.setattr(selected_resources, "SELECTED_RESOURCES", selected)
        memo.start_engine_unless_covered(adapter, catalog)
        return bool(started)

    assert not starts(adapter, {"model.p.m", "source.p.raw.events"})
    # dbt lists relations with the catalog quoted: the same catalog's rows
    assert not starts(adapter, {"model.p.m"}, "`lakehouse`")
    assert starts(adapter, {"model.p.m", "model.p.other"})  # nothing remembered for it
    assert starts(adapter, {"model.p.m", "unit_test.p.m.t"})  # a unit test runs SQL
    assert starts(_run_adapter(catalog, target, {"model.p.m": "c2"}), {"model.p.m"})  # edited
    assert starts(_run_adapter(catalog, target, {"model.p.m": "c1"}, start=["x"]), {"model.p.m"})
    _commit(catalog, "jaffle", "m", "own-2")  # written since
    assert starts(adapter, {"model.p.m"})
