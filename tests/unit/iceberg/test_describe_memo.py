"""A node's kept DESCRIBE results: answered only while on, and forgotten when a statement may
have changed them (iceberg/describe_memo.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.iceberg.describe import RelationDescription
from dbt.adapters.lakehouse.iceberg.describe_memo import DescribeMemo

QUERY_COMMENT = '/* {"app": "dbt", "node_id": "snapshot.p.s"} */\n'
TABLE = DescribeMemo.key("`lakehouse`.`jaffle`.`customers_snapshot`", "table")
OTHER = DescribeMemo.key("`lakehouse`.`jaffle`.`orders`", "table")
STAGING = DescribeMemo.key("`jaffle__customers_snapshot__dbt_tmp`", "view")


def _described(view: bool = False) -> RelationDescription:
    details = {"View Text": "select 1"} if view else {"Provider": "iceberg"}
    return RelationDescription(columns=[], details=details, partitioning=[])


def _memo() -> DescribeMemo:
    memo = DescribeMemo()
    memo.start()
    memo.keep(TABLE, _described())
    memo.keep(OTHER, _described())
    memo.keep(STAGING, _described(view=True))
    return memo


def _kept(memo: DescribeMemo) -> set[tuple[tuple[str, ...], str]]:
    return {key for key in (TABLE, OTHER, STAGING) if memo.get(key) is not None}


def test_nothing_is_kept_or_answered_while_off() -> None:
    memo = DescribeMemo()
    memo.keep(TABLE, _described())
    assert memo.get(TABLE) is None
    memo = _memo()
    memo.stop()
    assert _kept(memo) == set()


@pytest.mark.parametrize(
    "statement",
    [
        "select * from `lakehouse`.`jaffle`.`customers_snapshot` where false limit 0",
        QUERY_COMMENT + "describe table extended `lakehouse`.`jaffle`.`customers_snapshot`",
        "-- a comment\nshow tables in `lakehouse`.`jaffle`",
        "EXPLAIN select 1",
    ],
)
def test_a_statement_that_only_reads_keeps_everything(statement: str) -> None:
    memo = _memo()
    memo.statement_ran(statement)
    assert _kept(memo) == {TABLE, OTHER, STAGING}


@pytest.mark.parametrize(
    "statement",
    [
        "alter table `lakehouse`.`jaffle`.`customers_snapshot` add columns (fn1 string)",
        QUERY_COMMENT + "merge into lakehouse.jaffle.CUSTOMERS_SNAPSHOT as t using s on true "
        "when matched then delete",
        "insert into jaffle.customers_snapshot select 1",
        # A leading WITH's expressions are read past, to the INSERT Spark runs.
        "with n as (select 1) insert into lakehouse.jaffle.customers_snapshot select * from n",
    ],
)
def test_a_write_forgets_its_relation_and_every_view(statement: str) -> None:
    memo = _memo()
    memo.statement_ran(statement)
    assert _kept(memo) == {OTHER}


def test_a_new_staging_view_forgets_only_views() -> None:
    memo = _memo()
    memo.statement_ran(
        "create or replace temporary view jaffle__customers_snapshot__dbt_tmp as select 1"
    )
    assert _kept(memo) == {TABLE, OTHER}


@pytest.mark.parametrize(
    "statement",
    [
        "call lakehouse.system.rollback_to_snapshot('jaffle.orders', 1)",
        "drop schema if exists lakehouse.jaffle cascade",
        "refresh table lakehouse.jaffle.orders",
    ],
)
def test_any_other_statement_forgets_everything(statement: str) -> None:
    memo = _memo()
    memo.statement_ran(statement)
    assert _kept(memo) == set()


def test_a_dropped_view_is_forgotten_by_name() -> None:
    memo = _memo()
    memo.forget("jaffle__customers_snapshot__dbt_tmp")
    assert _kept(memo) == {TABLE, OTHER}
    memo.forget("ORDERS")
    assert _kept(memo) == {TABLE}
