"""The statements that fold the aggregate over appended rows into a view (mv/aggregate.py). The
MERGE: keys matched NULL-safely, counts added, sums added with an all-NULL side keeping the
other's, min / max by least / greatest (which skip NULLs). The rewrite of a small view: its rows
and the appended groups regrouped by the keys (GROUP BY puts NULL keys in one group), counts and
sums summed (sum skips NULLs), min of mins, max of maxes. Which plans qualify is read from Spark's
analyzed plan: tests/functional/lakehouse/mv/test_materialized_view_properties.py."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.mv.aggregate import (
    REGROUP_MAX_BYTES,
    Column,
    fold_sql,
    merge_sql,
    regroup_max_bytes,
    regroup_sql,
)

COLUMNS = [
    Column("region", "key"),
    Column("customer", "key"),
    Column("total", "Sum"),
    Column("orders", "Count"),
    Column("first", "Min"),
    Column("last`s", "Max"),
]


def test_the_merge_of_appended_groups() -> None:
    sql = merge_sql("`c`.`s`.`v`", COLUMNS, "select 1")
    assert sql.splitlines() == [
        "merge into `c`.`s`.`v` as `__mv_view`",
        "using (",
        "select 1",
        ") as `__mv_appended`",
        "on `__mv_view`.`region` <=> `__mv_appended`.`region` and "
        "`__mv_view`.`customer` <=> `__mv_appended`.`customer`",
        "when matched then update set "
        "`total` = coalesce(`__mv_view`.`total` + `__mv_appended`.`total`, "
        "`__mv_view`.`total`, `__mv_appended`.`total`), "
        "`orders` = `__mv_view`.`orders` + `__mv_appended`.`orders`, "
        "`first` = least(`__mv_view`.`first`, `__mv_appended`.`first`), "
        "`last``s` = greatest(`__mv_view`.`last``s`, `__mv_appended`.`last``s`)",
        "when not matched then insert *",
    ]


def test_keys_alone_only_insert_new_groups() -> None:
    sql = merge_sql("v", [Column("k", "key")], "q")
    assert "when matched" not in sql and sql.endswith("when not matched then insert *")


def test_a_small_view_is_rewritten_with_its_groups_and_the_appended_ones_regrouped() -> None:
    sql = regroup_sql("`c`.`s`.`v`", COLUMNS, "select 1")
    assert sql.splitlines() == [
        "-- lakehouse:conf spark.sql.sources.partitionOverwriteMode=static",
        "insert overwrite table `c`.`s`.`v`",
        "select `region`, `customer`, sum(`total`) as `total`, sum(`orders`) as `orders`, "
        "min(`first`) as `first`, max(`last``s`) as `last``s` from (",
        "select * from `c`.`s`.`v`",
        "union all",
        "select * from (",
        "select 1",
        ") as `__mv_appended`",
        ") as `__mv_view`",
        "group by `region`, `customer`",
    ]


def test_the_views_size_picks_the_statement() -> None:
    def fold(view_bytes: int | None, limit: int = REGROUP_MAX_BYTES) -> str:
        return fold_sql("v", [Column("k", "key")], "q", view_bytes, limit).split()[0]

    assert fold(0) == fold(REGROUP_MAX_BYTES) == "--"  # the rewrite, its conf line first
    assert fold(REGROUP_MAX_BYTES + 1) == fold(None) == "merge"  # larger, or size unknown
    assert fold(1, limit=0) == fold(0, limit=0) == "merge"  # 0: always MERGE
    assert fold(10, limit=10) == "--" and fold(11, limit=10) == "merge"


@pytest.mark.parametrize("value", [-1, 1.5, "64MB", True])
def test_mv_regroup_max_bytes_is_a_whole_number_of_bytes(value: object) -> None:
    assert regroup_max_bytes(None) == REGROUP_MAX_BYTES and regroup_max_bytes(0) == 0
    with pytest.raises(DbtRuntimeError, match="mv_regroup_max_bytes must be a whole number"):
        regroup_max_bytes(value)
