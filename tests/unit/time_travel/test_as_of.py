"""`as_of`: parsing what the user wrote, rendering, table names, and the checks against a
table's history."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse import relation as relation_module
from dbt.adapters.lakehouse.iceberg.metadata import format_millis
from dbt.adapters.lakehouse.relation import LakehouseRelation
from dbt.adapters.lakehouse.time_travel.as_of import (
    AsOf,
    TimeTravelError,
    check_as_of,
    parse_as_of,
    parse_table_name,
)

T = "`lh`.`s`.`t`"
MS = 1_780_000_000_000  # 2026-05-28 20:26:40 UTC


# ---- as_of ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "clause"),
    [
        ({"timestamp": "2026-11-01 00:00:00"}, "TIMESTAMP AS OF '2026-11-01 00:00:00'"),
        ({"timestamp": "2026-11-01T08:30:00"}, "TIMESTAMP AS OF '2026-11-01 08:30:00'"),
        ({"timestamp": "2026-11-01"}, "TIMESTAMP AS OF '2026-11-01 00:00:00'"),
        ({"timestamp": "2026-11-01 00:00:00.25"}, "TIMESTAMP AS OF '2026-11-01 00:00:00.250000'"),
        ({"timestamp": "2026-11-01 00:00:00+02:00"}, "TIMESTAMP AS OF '2026-11-01 00:00:00+02:00'"),
        ({"timestamp": dt.date(2026, 11, 1)}, "TIMESTAMP AS OF '2026-11-01 00:00:00'"),
        ({"snapshot_id": 8412345678901234567}, "VERSION AS OF 8412345678901234567"),
        ({"snapshot_id": " 42 "}, "VERSION AS OF 42"),
        ({"ref_name": "audit_1"}, "VERSION AS OF 'audit_1'"),
        ({"ref_name": "it's"}, "VERSION AS OF 'it\\'s'"),
        ({"timestamp": None, "snapshot_id": 7, "ref_name": None}, "VERSION AS OF 7"),
    ],
)
def test_as_of_renders_sparks_clause(spec: dict[str, Any], clause: str) -> None:
    assert parse_as_of(spec, "m").clause == clause


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "needs exactly one of timestamp, snapshot_id, ref_name; got none of them"),
        ({"timestamp": None, "snapshot_id": None, "ref_name": None}, "got none of them"),
        ({"timestamp": "2026-01-01", "snapshot_id": 1}, "got timestamp and snapshot_id"),
        ({"at": "2026-01-01"}, "unknown key(s) 'at'. Accepted: exactly one of timestamp"),
        ("2026-01-01", "must be a mapping with exactly one of timestamp"),
        ({"timestamp": "yesterday"}, "timestamp 'yesterday' is not a timestamp. Expected"),
        ({"timestamp": 5}, "timestamp must be text such as '2026-11-01 00:00:00'; got 5"),
        ({"snapshot_id": "abc"}, "snapshot_id must be a whole number"),
        ({"snapshot_id": True}, "snapshot_id must be a whole number"),
        ({"ref_name": " "}, "ref_name must be a branch or tag name"),
    ],
)
def test_as_of_mistakes_are_compile_errors_naming_the_caller(spec: Any, expected: str) -> None:
    with pytest.raises(CompilationError) as caught:
        parse_as_of(spec, "source raw.orders")
    assert "`as_of` of source raw.orders" in str(caught.value)
    assert expected in str(caught.value)


def test_relation_renders_the_clause_but_keeps_its_name() -> None:
    plain = LakehouseRelation.create(database="lh", schema="s", identifier="t")
    travelled = plain.with_time_travel(AsOf("snapshot_id", 42))
    assert str(travelled) == f"{T} VERSION AS OF 42"
    assert travelled.render() == T
    assert hash(travelled) == hash(plain)
    assert travelled.with_time_travel(None) == plain
    # Replacing the point drops the earlier key (incorporate would merge the two).
    moved = travelled.with_time_travel(AsOf("ref_name", "b"))
    assert moved.time_travel == {"ref_name": "b"}
    assert str(moved) == f"{T} VERSION AS OF 'b'"


def test_the_clause_stays_on_the_table_inside_an_empty_limit() -> None:
    relation = LakehouseRelation.create(database="lh", schema="s", identifier="t", limit=0)
    travelled = relation.with_time_travel(AsOf("timestamp", "2026-11-01 00:00:00"))
    assert str(travelled) == (
        f"(select * from {T} TIMESTAMP AS OF '2026-11-01 00:00:00' where false limit 0)"
    )


def _source(config: dict[str, Any]) -> Any:
    return SimpleNamespace(
        database="lh",
        schema="s",
        identifier="t",
        resource_type="source",
        source_name="raw",
        name="t",
        quoting_dict={},
        config=config,
        catalog_name=None,
    )


def test_a_source_config_as_of_applies_to_source_calls_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[tuple[str, AsOf]] = []
    monkeypatch.setattr(
        relation_module,
        "check_source_time_travel",
        lambda relation, as_of: checked.append((relation.render(), as_of)),
    )
    quoting = SimpleNamespace(quoting={})
    source = _source({"as_of": {"snapshot_id": 9}})
    # dbt's source() passes event_time_filter; the manifest's relation_name does not.
    resolved = LakehouseRelation.create_from(quoting, source, limit=None, event_time_filter=None)
    named = LakehouseRelation.create_from(quoting, source)
    assert str(resolved) == f"{T} VERSION AS OF 9"
    assert str(named) == T
    assert checked == [(T, AsOf("snapshot_id", 9))]
    plain = LakehouseRelation.create_from(quoting, _source({}), event_time_filter=None)
    assert str(plain) == T
    with pytest.raises(CompilationError, match="`as_of` of source raw.t needs exactly one"):
        LakehouseRelation.create_from(quoting, _source({"as_of": {}}), event_time_filter=None)


# ---- table names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("analytics.orders", ("lakehouse", "analytics", "orders")),
        ("raw.sales.orders", ("raw", "sales", "orders")),
        ("`raw`.`sal.es`.`or``ders`", ("raw", "sal.es", "or`ders")),
        (" analytics.orders ", ("lakehouse", "analytics", "orders")),
    ],
)
def test_table_names(name: str, parts: tuple[str, str, str]) -> None:
    assert parse_table_name(name, "lakehouse") == parts


@pytest.mark.parametrize("name", ["orders", "a.b.c.d", "a..b", ".a.b", "", None, 5])
def test_other_table_names_are_refused_with_the_forms(name: Any) -> None:
    with pytest.raises(CompilationError) as caught:
        parse_table_name(name, "lakehouse")
    assert "must be <schema>.<table> (in the target's catalog) or <catalog>.<schema>.<table>" in (
        str(caught.value)
    )


# ---- checks against a table's history --------------------------------------------------------


def _query(rows_by_table: dict[str, list[tuple[Any, ...]]]) -> Any:
    def query(sql: str) -> list[tuple[Any, ...]]:
        for suffix, rows in rows_by_table.items():
            if sql.rstrip().endswith(suffix):
                return rows
        raise AssertionError(sql)

    return query


def test_a_timestamp_before_the_oldest_snapshot_names_the_table_and_that_time() -> None:
    history = [(MS - 1, 11, MS), (MS - 1, 12, MS + 5000)]
    with pytest.raises(TimeTravelError) as caught:
        check_as_of(_query({".history": history}), T, AsOf("timestamp", "2026-05-28 20:26:39"))
    assert caught.value.msg == (
        f"Table {T} has no snapshot as of 2026-05-28 20:26:39: its oldest snapshot (11) dates "
        f"from {format_millis(MS)}. Fix: use a timestamp at or after that (UTC unless it "
        "carries an offset)."
    )
    assert format_millis(MS) == "2026-05-28 20:26:40.000 UTC"
    at_oldest = [(MS, 11, MS)]
    check_as_of(_query({".history": at_oldest}), T, AsOf("timestamp", "x"))


def test_a_table_without_snapshots_has_nothing_to_read() -> None:
    with pytest.raises(TimeTravelError, match="has no snapshot yet"):
        check_as_of(_query({".history": []}), T, AsOf("timestamp", "2026-01-01 00:00:00"))


def test_unknown_snapshot_ids_and_refs_name_the_table_and_what_it_has() -> None:
    snapshots = [(11, MS, None), (12, MS + 1000, 11)]
    check_as_of(_query({".snapshots": snapshots}), T, AsOf("snapshot_id", 11))
    with pytest.raises(TimeTravelError) as caught:
        check_as_of(_query({".snapshots": snapshots}), T, AsOf("snapshot_id", 99))
    assert caught.value.msg.startswith(f"Table {T} has no snapshot 99 (expired")
    assert "Its newest snapshots: snapshot 12 (committed 2026-05-28 20:26:41.000 UTC); " in str(
        caught.value
    )
    refs = [("main", "BRANCH", 12), ("v1", "TAG", 11)]
    check_as_of(_query({".refs": refs}), T, AsOf("ref_name", "v1"))
    with pytest.raises(TimeTravelError) as caught:
        check_as_of(_query({".refs": refs}), T, AsOf("ref_name", "audit"))
    assert caught.value.msg == (
        f"Table {T} has no branch or tag 'audit'. Its branches and tags: "
        "main (branch, snapshot 12), v1 (tag, snapshot 11)."
    )
