"""A materialized view's record and refresh plan (mv/state.py): property names and parsing,
what makes a refresh a no-op, a rebuild or a create, the build token, and freshness per
upstream."""

from __future__ import annotations

from dbt.adapters.lakehouse.mv.state import (
    CONFIG_HASH,
    REFRESHED_AT,
    SQL_HASH,
    Recorded,
    UpstreamState,
    built_entries,
    config_hash,
    plan_refresh,
    properties_of,
    record_properties,
    recorded_of,
    schema_hash,
    sql_hash,
    stale_properties,
    upstream_status,
)

SQL = "select customer, sum(amount) from lakehouse.raw.orders group by customer"
CONFIG = {"partition_by": None, "table_properties": {"a": "1"}}
ORDERS = UpstreamState("lakehouse.raw.orders", 12, "s3")
EMPTY = UpstreamState("lakehouse.raw.refunds", None, "s0")
WHEN = "2026-11-27T23:00:00.000000Z"


def built() -> Recorded:
    return recorded_of(record_properties([ORDERS, EMPTY], SQL, CONFIG, WHEN))


def test_property_names_round_trip() -> None:
    properties = record_properties([ORDERS, EMPTY], SQL, CONFIG, WHEN)
    assert properties == {
        "lakehouse.mv.sql_hash": sql_hash(SQL),
        "lakehouse.mv.config_hash": config_hash(CONFIG),
        "lakehouse.mv.refreshed_at": WHEN,
        "lakehouse.mv.upstream.lakehouse.raw.orders": "12",
        "lakehouse.mv.upstream_schema.lakehouse.raw.orders": "s3",
        "lakehouse.mv.upstream.lakehouse.raw.refunds": "none",
        "lakehouse.mv.upstream_schema.lakehouse.raw.refunds": "s0",
    }
    record = recorded_of({**properties, "write.format.default": "parquet"})
    assert record.is_view
    assert record.upstreams == {"lakehouse.raw.orders": 12, "lakehouse.raw.refunds": None}
    assert record.schemas == {"lakehouse.raw.orders": "s3", "lakehouse.raw.refunds": "s0"}
    assert (record.sql_hash, record.refreshed_at) == (sql_hash(SQL), WHEN)
    assert not recorded_of({"write.format.default": "parquet"}).is_view


def test_hashes_ignore_what_is_no_change() -> None:
    columns = [("id", "int"), ("amount", "int")]
    assert schema_hash(columns) == schema_hash(list(columns))
    assert schema_hash([("id", "int"), ("total", "int")]) != schema_hash(columns)  # renamed
    assert schema_hash([*columns, ("note", "string")]) != schema_hash(columns)
    assert sql_hash(f"\n  {SQL}  \n") == sql_hash(SQL)
    assert sql_hash(SQL + " having count(*) > 1") != sql_hash(SQL)
    assert config_hash({"partition_by": None}) == config_hash({})
    assert config_hash({"partition_by": ["customer"]}) != config_hash({})
    # Settings the view does not watch are no configuration change.
    assert config_hash({"grants": {"select": ["x"]}}) == config_hash({})


def plan(record: Recorded | None, *upstreams: UpstreamState, **kwargs: object):
    given: dict = {
        "untracked": [],
        "sql": SQL,
        "config": CONFIG,
        "full_refresh": False,
        "built": WHEN,
        **kwargs,
    }
    return plan_refresh(record, list(upstreams) or [ORDERS, EMPTY], **given)


def test_nothing_moved_is_a_noop() -> None:
    assert plan(built()).action == "noop"
    assert not plan(built()).config_changed


def test_each_change_rebuilds_and_says_why() -> None:
    assert plan(None).action == "create"
    assert plan(Recorded()).action == "create"  # a table that records nothing: not ours
    moved = plan(built(), UpstreamState("lakehouse.raw.orders", 13, "s3"), EMPTY)
    assert moved.action == "rebuild"
    assert moved.reasons == ("lakehouse.raw.orders moved from snapshot 12 to 13",)
    first_write = plan(built(), ORDERS, UpstreamState("lakehouse.raw.refunds", 5, "s0"))
    assert first_write.reasons == ("lakehouse.raw.refunds moved from snapshot None to 5",)
    schema = plan(built(), UpstreamState("lakehouse.raw.orders", 12, "s4"), EMPTY)
    assert schema.reasons == ("the schema of lakehouse.raw.orders changed",)
    new = plan(built(), ORDERS, EMPTY, UpstreamState("lakehouse.raw.fx", 1, "s0"))
    assert new.reasons == ("lakehouse.raw.fx is a new upstream",)
    assert plan(built(), sql=SQL + " limit 1").reasons == ("the model's SQL changed",)
    assert plan(built(), full_refresh=True).reasons == ("--full-refresh",)
    untracked = plan(built(), untracked=["model.p.eph"])
    assert untracked.action == "rebuild" and "model.p.eph" in untracked.reasons[0]


def test_rows_not_from_the_recorded_build_rebuild() -> None:
    assert plan(built(), built=None).action == "rebuild"
    assert plan(built(), built="2026-01-01T00:00:00.000000Z").action == "rebuild"
    # A session without commit lineage cannot check it (Spark Connect).
    assert plan(built(), built=None, check_built=False).action == "noop"


def test_a_changed_setting_is_flagged_not_decided() -> None:
    changed = plan(built(), config={"partition_by": ["customer"]})
    assert (changed.action, changed.config_changed) == ("noop", True)


def test_the_build_record_skips_compactions_only() -> None:
    # 1 (build A) <- 2 (compaction) <- 3 (build B) <- 4 (compaction)
    a, b = {REFRESHED_AT: "A", SQL_HASH: "h"}, {REFRESHED_AT: "B", SQL_HASH: "h"}
    history = {
        1: (None, "overwrite", a),
        2: (1, "replace", {}),
        3: (2, "overwrite", b),
        4: (3, "replace", {}),
    }
    assert built_entries(history, 4) == b
    assert built_entries(history, 2) == a  # set back to the first build
    assert built_entries({**history, 5: (4, "append", {})}, 5) is None  # another writer
    assert built_entries(history, None) is None


def test_a_record_reads_back_as_the_properties_that_hold_it() -> None:
    written = record_properties([ORDERS, EMPTY], SQL, {"partition_by": ["c"]}, WHEN)
    assert properties_of(recorded_of(written)) == written
    assert properties_of(Recorded()) == {}


def test_upstreams_no_longer_read_are_unset() -> None:
    record = built()
    assert stale_properties(record, [ORDERS]) == [
        "lakehouse.mv.upstream.lakehouse.raw.refunds",
        "lakehouse.mv.upstream_schema.lakehouse.raw.refunds",
    ]
    assert stale_properties(record, [ORDERS, EMPTY]) == []


def test_status_counts_snapshots_of_main_since_the_recorded_one() -> None:
    # main: 1 <- 2 <- 3 <- 4; 9 branched off 1 (rolled back away).
    parents = {1: None, 2: 1, 3: 2, 4: 3, 9: 1}
    committed = {n: f"t{n}" for n in parents}
    fresh = upstream_status("o", 4, 4, parents, committed)
    assert fresh.fresh and fresh.behind == 0
    stale = upstream_status("o", 2, 4, parents, committed)
    assert (stale.fresh, stale.behind, stale.since) == (False, 2, "t3")
    first = upstream_status("o", None, 2, parents, committed)
    assert (first.behind, first.since) == (2, "t1")
    expired = upstream_status("o", 7, 4, parents, committed)
    assert expired.behind is None and "no longer in its history" in expired.note
    rolled = upstream_status("o", 9, 4, parents, committed)
    assert rolled.behind is None and "no ancestor of main" in rolled.note


def test_names() -> None:
    assert (SQL_HASH, CONFIG_HASH, REFRESHED_AT) == (
        "lakehouse.mv.sql_hash",
        "lakehouse.mv.config_hash",
        "lakehouse.mv.refreshed_at",
    )


def test_only_one_upstream_that_only_moved_may_refresh_incrementally() -> None:
    # Two upstreams, refunds where it was: orders may be read incrementally (an inner join's
    # changed side; incremental.py checks the query's shape).
    two = plan(built(), UpstreamState("lakehouse.raw.orders", 13, "s3"), EMPTY)
    assert (two.action, two.appendable) == ("rebuild", "lakehouse.raw.orders")
    both = plan(
        built(),
        UpstreamState("lakehouse.raw.orders", 13, "s3"),
        UpstreamState("lakehouse.raw.refunds", 2, "s0"),
    )
    assert both.appendable is None  # both moved
    # refunds no longer read (its record is unset): rebuilt whole.
    assert plan(built(), UpstreamState("lakehouse.raw.orders", 13, "s3")).appendable is None
    record = recorded_of(record_properties([ORDERS], SQL, CONFIG, WHEN))
    moved = plan(record, UpstreamState("lakehouse.raw.orders", 13, "s3"))
    assert (moved.action, moved.appendable) == ("rebuild", "lakehouse.raw.orders")
    # Its schema changed as well, or the SQL, or the build is not the recorded one: no.
    assert plan(record, UpstreamState("lakehouse.raw.orders", 13, "s4")).appendable is None
    assert plan(record, UpstreamState("lakehouse.raw.orders", 13, "s3"), sql="x").appendable is None
    assert (
        plan(record, UpstreamState("lakehouse.raw.orders", 13, "s3"), built=None).appendable is None
    )
    first = recorded_of(record_properties([EMPTY], SQL, CONFIG, WHEN))
    assert plan(first, UpstreamState("lakehouse.raw.refunds", 5, "s0")).appendable is None
