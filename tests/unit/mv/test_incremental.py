"""When a refresh may read only the upstream's appended rows (mv/incremental.py): every
snapshot of main since the recorded one an append, and the upstream named once, at its
current state."""

from __future__ import annotations

from dbt.adapters.lakehouse.mv.incremental import appends_only, delta_sql, linear_leaves

# main: 1 <- 2 (append) <- 3 (append) <- 4 (overwrite) <- 5 (append); 9 off 1 (rolled back).
HISTORY = {
    1: (None, "append"),
    2: (1, "append"),
    3: (2, "append"),
    4: (3, "overwrite"),
    5: (4, "append"),
    9: (1, "append"),
}


def test_appends_only_since_the_recorded_snapshot() -> None:
    assert appends_only(HISTORY, 1, 3)
    assert appends_only(HISTORY, 4, 5)  # the overwrite is the recorded one: before the range
    assert not appends_only(HISTORY, 2, 5)  # an overwrite in between
    assert not appends_only(HISTORY, 9, 3)  # recorded snapshot not on main's line
    assert not appends_only(HISTORY, 7, 3)  # expired: not in the history at all


def test_the_upstream_read_from_the_appended_rows() -> None:
    name = "`lakehouse`.`raw`.`orders`"
    sql = f"select id from {name} where amount > 4"
    assert delta_sql(sql, name, "v") == "select id from v where amount > 4"
    assert delta_sql(f"{sql} union all select id from {name}", name, "v") is None
    assert delta_sql("select 1", name, "v") is None
    assert delta_sql(f"select id from {name} VERSION AS OF 3", name, "v") is None
    assert delta_sql(f"select id from {name} timestamp as of '2026-01-01'", name, "v") is None


def test_a_plan_is_linear_in_the_moved_table_read_once_beside_unmoved_upstreams() -> None:
    moved, dim = "lakehouse.raw.orders", "lakehouse.raw.customers"
    assert linear_leaves([moved], moved, set())
    assert linear_leaves(["Lakehouse.Raw.Orders", dim], moved, {dim})  # an inner join
    assert not linear_leaves([moved, moved], moved, set())  # a self-join
    assert not linear_leaves([moved, dim], moved, set())  # customers is no tracked upstream
    assert not linear_leaves([dim], moved, {dim})  # the moved table is not read
