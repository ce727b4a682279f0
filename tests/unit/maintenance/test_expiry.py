"""The expiry plan against Iceberg's own rules, keeping each branch's own line
(maintenance/expiry.py)."""

from __future__ import annotations

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot
from dbt.adapters.lakehouse.maintenance.audit_branches import open_audit_branches
from dbt.adapters.lakehouse.maintenance.expiry import plan_expiry, timestamp_literal

DAY = 86_400_000
NOW = 100 * DAY


def chain(*ids: int, start_day: int = 1, parent: int | None = None) -> list[Snapshot]:
    """Snapshots each a day after the previous, each the parent of the next."""
    found = []
    for offset, snapshot_id in enumerate(ids):
        found.append(
            Snapshot(
                snapshot_id=snapshot_id, parent_id=parent, committed_ms=(start_day + offset) * DAY
            )
        )
        parent = snapshot_id
    return found


def test_expiry_keeps_what_retention_says_on_main():
    snapshots = chain(*range(1, 11), start_day=85)  # days 85..94; now is day 100
    refs = [Ref("main", "BRANCH", 10)]
    plan = plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    # cutoff day 93: days 93 and 94 stay (snapshots 9, 10)
    assert plan.expired == frozenset(range(1, 9))
    plan = plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=3)
    assert plan.expired == frozenset(range(1, 8))
    assert plan.effective_cutoff_ms == plan.cutoff_ms and not plan.refused


def test_tags_keep_their_snapshot():
    snapshots = chain(1, 2, 3, 4)
    refs = [Ref("main", "BRANCH", 4), Ref("t", "TAG", 2)]
    assert plan_expiry(snapshots, refs, NOW, 0, 1).expired == frozenset({1, 3})


def test_a_branch_keeps_its_own_line_back_to_main():
    # main: 1-2-3; branch audit_x forked at 2 with 10, 11 (days 50, 51), old enough to expire.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=2)
    refs = [Ref("main", "BRANCH", 3), Ref("audit_0123abcd", "BRANCH", 11)]
    plan = plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    assert 10 not in plan.expired and 11 not in plan.expired
    assert plan.effective_cutoff_ms == 50 * DAY < plan.cutoff_ms
    assert plan.kept_for_branches == {"audit_0123abcd": 2}
    # The fork point 2 is main's, not the branch's own: main (moved on to 3) lets it go.
    assert plan.expired == frozenset({1, 2})
    assert open_audit_branches(refs) == ["audit_0123abcd"]


def test_a_branch_from_mains_head_stays_publishable():
    # The audited-run case: main is still where the branch left it, so fast_forward needs the
    # whole chain 11 -> 10 -> 3, and retain_last 1 alone would keep only 11 on the branch.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=3)
    refs = [Ref("main", "BRANCH", 3), Ref("audit_0123abcd", "BRANCH", 11)]
    plan = plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=1)
    assert plan.expired == frozenset({1, 2})


def test_a_ref_with_its_own_retention_that_would_lose_snapshots_is_refused():
    snapshots = chain(1, 2) + chain(10, 11, 12, start_day=50, parent=2)
    refs = [
        Ref("main", "BRANCH", 2),
        Ref("dev", "BRANCH", 12, min_snapshots_to_keep=1, max_snapshot_age_ms=DAY),
        Ref("old", "TAG", 1, max_ref_age_ms=DAY),
    ]
    plan = plan_expiry(snapshots, refs, NOW, 7, 1)
    assert any("branch 'dev' has its own snapshot retention" in r for r in plan.refused)
    assert any("tag 'old' is older than its max reference age" in r for r in plan.refused)
    # The table-wide default max ref age counts too.
    plan = plan_expiry(chain(1, 2), [Ref("main", "BRANCH", 2), Ref("t", "TAG", 1)], NOW, 7, 1, DAY)
    assert plan.refused == [
        f"tag 't' is older than its max reference age ({DAY} ms), so Iceberg would remove the "
        "tag itself"
    ]


def test_timestamp_literal_is_utc_millis():
    assert timestamp_literal(1_700_000_000_123) == "TIMESTAMP '2023-11-14 22:13:20.123'"
