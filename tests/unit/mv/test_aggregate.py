"""The MERGE that folds the aggregate over appended rows into a view (mv/aggregate.py): keys
matched NULL-safely, counts added, sums added with an all-NULL side keeping the other's,
min / max by least / greatest (which skip NULLs). Which plans qualify is read from Spark's
analyzed plan: tests/functional/lakehouse/test_materialized_view_properties.py."""

from __future__ import annotations

from dbt.adapters.lakehouse.mv.aggregate import Column, merge_sql

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
