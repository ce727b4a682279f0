"""What `lakehouse.changes` reads: the recorded snapshot found in the model's history, and the
plan against the upstream's history (changes/plan.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.changes.plan import (
    ChangesPlan,
    plan_changes,
    record_key,
    recorded_snapshot,
)
from dbt.adapters.lakehouse.iceberg.lineage import add_node_entries, commit_properties

# Upstream history: 1 <- 2 <- 3 on main; 4 branched off 2 (a rolled back line).
UPSTREAM = {1: None, 2: 1, 3: 2, 4: 2}


def test_the_record_is_the_newest_main_ancestor_that_has_one() -> None:
    # The model's table: 10 <- 11 (records 2) <- 12 (maintenance, no record) <- 13 (records 3);
    # 14 records 4 on an abandoned line.
    parents = {10: None, 11: 10, 12: 11, 13: 12, 14: 11}
    records = {11: "2", 13: "3", 14: "4"}
    assert recorded_snapshot(parents, records, 13) == 3
    assert recorded_snapshot(parents, {11: "2", 14: "4"}, 13) == 2
    assert recorded_snapshot(parents, records, 14) == 4
    assert recorded_snapshot(parents, {}, 13) is None
    assert recorded_snapshot(parents, records, None) is None


def test_not_incremental_reads_everything_without_a_loss() -> None:
    assert plan_changes("c.s.t", False, 2, UPSTREAM, 3) == ChangesPlan("everything", 3)
    assert plan_changes("c.s.t", False, None, {}, None) == ChangesPlan("everything", None)


def test_an_incremental_run_reads_the_range_after_the_record() -> None:
    assert plan_changes("c.s.t", True, 1, UPSTREAM, 3) == ChangesPlan("range", 3, start=1)
    assert plan_changes("c.s.t", True, 3, UPSTREAM, 3) == ChangesPlan("nothing", 3)


@pytest.mark.parametrize(
    ("recorded", "head", "reason"),
    [
        (None, 3, "records no snapshot of c.s.t it consumed"),
        (9, 3, "snapshot 9 of c.s.t, consumed last, is no longer in its history"),
        (3, 4, "snapshot 3 of c.s.t, consumed last, is not an ancestor of its current snapshot 4"),
        (3, None, "is no longer in its history"),
    ],
)
def test_lost_changes_read_everything_and_say_why(
    recorded: int | None, head: int | None, reason: str
) -> None:
    parents = {} if head is None else UPSTREAM
    plan = plan_changes("c.s.t", True, recorded, parents, head)
    assert (plan.kind, plan.end) == ("everything", head)
    assert plan.lost is not None and reason in plan.lost


def test_a_node_s_commits_carry_what_it_consumed() -> None:
    add_node_entries("inv-changes", "model.pkg.current", {record_key("c.s.orders"): "42"})
    assert commit_properties("inv-changes", "model.pkg.current") == {
        "dbt.invocation_id": "inv-changes",
        "dbt.node": "model.pkg.current",
        "dbt.changes.c.s.orders": "42",
    }
    # Not another node's, nor another invocation's, nor a connection that is no node.
    assert "dbt.changes.c.s.orders" not in commit_properties("inv-changes", "model.pkg.other")
    assert "dbt.changes.c.s.orders" not in commit_properties("inv-2", "model.pkg.current")
    assert commit_properties("inv-changes", "master") == {"dbt.invocation_id": "inv-changes"}
