"""Maintenance planning, validation and formatting (maintenance.py), without Spark."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.lakehouse import maintenance as m

DAY = 86_400_000
NOW = 100 * DAY


# ---- configuration ------------------------------------------------------------------------


def test_no_config_runs_nothing_and_has_the_defaults():
    plan = m.parse_config(None, "model 'x'")
    assert plan.operations == ()
    assert plan.options["snapshot_expiry"] == {"retain_days": 7, "retain_last": 1}
    assert plan.options["orphan_cleanup"] == {"older_than_days": 3, "dry_run": False}
    assert plan.options["compaction"]["target_file_size_mb"] == 128
    assert plan.options["compaction"]["min_input_files"] == 5
    assert plan.options["metadata_cleanup"] == {"previous_versions_max": 100}


def test_after_run_is_put_in_the_safe_order_and_options_merge_with_defaults():
    plan = m.parse_config(
        {
            "after_run": ["metadata_cleanup", "snapshot_expiry", "compaction"],
            "compaction": {"target_file_size_mb": 64},
        },
        "model 'x'",
    )
    assert plan.operations == ("compaction", "snapshot_expiry", "metadata_cleanup")
    assert plan.options["compaction"] == {
        "target_file_size_mb": 64,
        "min_input_files": 5,
        "strategy": "binpack",
    }


def test_full_maintenance_is_all_four_in_order():
    assert m.parse_config({"after_run": ["full_maintenance"]}, "x").operations == m.ORDER
    assert m.ORDER == ("compaction", "snapshot_expiry", "orphan_cleanup", "metadata_cleanup")
    assert m.parse_operations(["orphan_cleanup", "full_maintenance"]) == m.ORDER


def test_every_problem_is_reported_at_once_with_what_is_accepted():
    with pytest.raises(m.MaintenanceConfigError) as raised:
        m.parse_config(
            {
                "after_run": ["compact", "snapshot_expiry"],
                "snapshot_expiry": {"retain_last": 0, "keep": 3},
                "orphan_cleanup": {"older_than_days": 0},
                "compaction": {"strategy": "shuffle", "min_input_files": -1},
                "schedule": "daily",
            },
            "model 'orders'",
        )
    text = raised.value.msg
    assert text.startswith("Invalid maintenance config for model 'orders':")
    assert (
        "unknown key(s) 'schedule'; accepted: after_run, compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup" in text
    )
    assert (
        "after_run has unknown operation(s) 'compact'; accepted: compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup, full_maintenance" in text
    )
    assert (
        "snapshot_expiry has unknown option(s) 'keep'; accepted: retain_days, retain_last" in text
    )
    assert "snapshot_expiry.retain_last is 0" in text
    assert "orphan_cleanup.older_than_days is 0: a write in flight" in text
    assert "compaction.strategy must be one of binpack, sort, zorder, got 'shuffle'" in text
    assert "compaction.min_input_files must be a whole number of at least 1, got -1" in text
    assert text.endswith("Nothing was written.")


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("compaction", "expected a mapping"),
        ({"after_run": 3}, "after_run must be a list of operation names, got 3"),
        ({"snapshot_expiry": {"retain_days": True}}, "retain_days must be a whole number"),
        ({"orphan_cleanup": {"dry_run": "yes"}}, "dry_run must be true or false, got 'yes'"),
        ({"metadata_cleanup": {"previous_versions_max": 0}}, "previous_versions_max must be"),
    ],
)
def test_bad_values(config: Any, fragment: str):
    with pytest.raises(m.MaintenanceConfigError, match=fragment):
        m.parse_config(config, "x")


def test_run_operation_needs_known_operations():
    with pytest.raises(m.MaintenanceConfigError, match="operations is required; accepted: "):
        m.parse_operations(None)
    with pytest.raises(m.MaintenanceConfigError, match="unknown operation\\(s\\) 'vacuum'"):
        m.parse_operations(["vacuum"])
    assert m.parse_operations("compaction") == ("compaction",)


def test_sort_order_comes_from_write_order_by():
    assert m.sort_order("binpack", None, "x") is None
    assert m.sort_order("sort", ["a desc", "b"], "x") == "a desc, b"
    assert m.sort_order("zorder", ["a desc nulls last", "b"], "x") == "zorder(a, b)"
    with pytest.raises(m.MaintenanceConfigError, match="has no `write_order_by` config"):
        m.sort_order("sort", None, "model 'x'")


# ---- expiry planning ----------------------------------------------------------------------


def chain(*ids: int, start_day: int = 1, parent: int | None = None) -> list[m.Snapshot]:
    """Snapshots each a day after the previous, each the parent of the next."""
    found = []
    for offset, snapshot_id in enumerate(ids):
        found.append(m.Snapshot(snapshot_id, parent, (start_day + offset) * DAY))
        parent = snapshot_id
    return found


def test_expiry_keeps_what_retention_says_on_main():
    snapshots = chain(*range(1, 11), start_day=85)  # days 85..94; now is day 100
    refs = [m.Ref("main", "BRANCH", 10)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    # cutoff day 93: days 93 and 94 stay (snapshots 9, 10)
    assert plan.expired == frozenset(range(1, 9))
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=3)
    assert plan.expired == frozenset(range(1, 8))
    assert plan.effective_cutoff_ms == plan.cutoff_ms and not plan.refused


def test_tags_keep_their_snapshot():
    snapshots = chain(1, 2, 3, 4)
    refs = [m.Ref("main", "BRANCH", 4), m.Ref("t", "TAG", 2)]
    assert m.plan_expiry(snapshots, refs, NOW, 0, 1).expired == frozenset({1, 3})


def test_a_branch_keeps_its_own_line_back_to_main():
    # main: 1-2-3; branch audit_x forked at 2 with 10, 11 (days 50, 51), old enough to expire.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=2)
    refs = [m.Ref("main", "BRANCH", 3), m.Ref("audit_0123abcd", "BRANCH", 11)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    assert 10 not in plan.expired and 11 not in plan.expired
    assert plan.effective_cutoff_ms == 50 * DAY < plan.cutoff_ms
    assert plan.kept_for_branches == {"audit_0123abcd": 2}
    # The fork point 2 is main's, not the branch's own: main (moved on to 3) lets it go.
    assert plan.expired == frozenset({1, 2})
    assert m.open_audit_branches(refs) == ["audit_0123abcd"]


def test_a_branch_from_mains_head_stays_publishable():
    # The audited-run case: main is still where the branch left it, so fast_forward needs the
    # whole chain 11 -> 10 -> 3, and retain_last 1 alone would keep only 11 on the branch.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=3)
    refs = [m.Ref("main", "BRANCH", 3), m.Ref("audit_0123abcd", "BRANCH", 11)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=1)
    assert plan.expired == frozenset({1, 2})


def test_a_ref_with_its_own_retention_that_would_lose_snapshots_is_refused():
    snapshots = chain(1, 2) + chain(10, 11, 12, start_day=50, parent=2)
    refs = [
        m.Ref("main", "BRANCH", 2),
        m.Ref("dev", "BRANCH", 12, min_snapshots_to_keep=1, max_snapshot_age_ms=DAY),
        m.Ref("old", "TAG", 1, max_ref_age_ms=DAY),
    ]
    plan = m.plan_expiry(snapshots, refs, NOW, 7, 1)
    assert any("branch 'dev' has its own snapshot retention" in r for r in plan.refused)
    assert any("tag 'old' is older than its max reference age" in r for r in plan.refused)
    # The table-wide default max ref age counts too.
    plan = m.plan_expiry(
        chain(1, 2), [m.Ref("main", "BRANCH", 2), m.Ref("t", "TAG", 1)], NOW, 7, 1, DAY
    )
    assert plan.refused == [
        f"tag 't' is older than its max reference age ({DAY} ms), so Iceberg would remove the "
        "tag itself"
    ]


def test_timestamp_literal_is_utc_millis():
    assert m.timestamp_literal(1_700_000_000_123) == "TIMESTAMP '2023-11-14 22:13:20.123'"


def test_merge_on_read_detection():
    assert m.is_merge_on_read({"write.update.mode": "merge-on-read"})
    assert not m.is_merge_on_read({"write.update.mode": "copy-on-write"})


# ---- formatting ---------------------------------------------------------------------------


def test_lines():
    compaction = m.Effect(
        "lh.s.t",
        "compaction",
        1.234,
        files_before=20,
        files_after=1,
        bytes_before=20 * 1024,
        bytes_after=15 * 1024,
        notes=["20 rewritten into 1"],
    )
    assert m.format_effect(compaction) == (
        "lh.s.t compaction: data files 20 → 1 (avg 1.0 KiB → 15.0 KiB); 20 rewritten into 1; 1.23 s"
    )
    expiry = m.Effect("lh.s.t", "snapshot_expiry", 0.5, snapshots_before=22, snapshots_after=4)
    assert m.format_effect(expiry) == (
        "lh.s.t snapshot_expiry: expired 18 snapshot(s), 22 → 4; 0.50 s"
    )
    orphans = m.Effect(
        "lh.s.t", "orphan_cleanup", 2, dry_run=True, orphan_files=1, orphan_bytes=1000
    )
    assert m.format_effect(orphans) == (
        "lh.s.t orphan_cleanup (dry run): would remove 1 orphan file(s), 1000 B; 2.00 s"
    )
    skipped = m.Effect("lh.s.t", "compaction", skipped="the table holds open audit branch(es) x")
    assert m.format_effect(skipped) == (
        "lh.s.t compaction: skipped: the table holds open audit branch(es) x"
    )
    assert m.human_bytes(3 * 1024 * 1024) == "3.0 MiB"


def test_failure_summary_counts_tables():
    text = m.failure_summary([("a.b.c", "compaction", "boom"), ("a.b.c", "orphan_cleanup", "x")], 3)
    assert text.startswith("lakehouse_maintain: 2 operation(s) failed on 1 of 3 table(s):\n")
    assert "  - a.b.c compaction: boom\n" in text


def test_maintain_goes_on_after_a_failure():
    """A fake catalog: one table's metadata reads fail, the other's answer."""

    def query(sql: str) -> list[tuple[Any, ...]]:
        if "`bad`" in sql:
            raise RuntimeError("Table not found\nstack")
        if ".refs" in sql:
            return [("main", "BRANCH", 1, None, None, None)]
        if ".snapshots" in sql:
            return [(1, None, NOW - DAY)]
        if sql.startswith("show tblproperties"):
            return []
        if sql.startswith("CALL"):
            return [(0, 0, 0, 0, 0, 0)]
        raise AssertionError(sql)

    plan = m.parse_config(None, "x")
    targets = [m.Target("lh", "s", name, plan.options) for name in ("bad", "good")]
    lines: list[str] = []
    effects, failed = m.maintain(
        query, lambda _: {}, targets, ["snapshot_expiry"], False, lines.append
    )
    assert failed == [("lh.s.bad", "snapshot_expiry", "Table not found")]
    assert [e.table for e in effects] == ["lh.s.good"]
    assert lines[0] == "lh.s.bad snapshot_expiry: FAILED: Table not found"
    assert lines[1].startswith("lh.s.good snapshot_expiry: expired 0 snapshot(s), 1 → 1; ")
