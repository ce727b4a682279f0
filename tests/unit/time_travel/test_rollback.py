"""`lakehouse_rollback`: its `to:` target, the plan against main's line with each refusal's
reason, the procedure call and the report."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot
from dbt.adapters.lakehouse.time_travel.as_of import AsOf, TimeTravelError
from dbt.adapters.lakehouse.time_travel.history import LogEntry, TableHistory
from dbt.adapters.lakehouse.time_travel.rollback import (
    parse_rollback_target,
    plan_rollback,
    rollback_report,
    rollback_sql,
)

T = "`lh`.`s`.`t`"
MS = 1_780_000_000_000  # 2026-05-28 20:26:40 UTC


@pytest.mark.parametrize(
    ("to", "expected"),
    [
        (8412345678901234567, AsOf("snapshot_id", 8412345678901234567)),
        ("123", AsOf("snapshot_id", 123)),
        (dt.datetime(2026, 11, 1, 8, 0), AsOf("timestamp", "2026-11-01 08:00:00")),  # YAML
        (dt.date(2026, 11, 1), AsOf("timestamp", "2026-11-01 00:00:00")),
        ("2026-11-01 08:00:00", AsOf("timestamp", "2026-11-01 08:00:00")),
    ],
)
def test_rollback_targets(to: Any, expected: AsOf) -> None:
    assert parse_rollback_target(to) == expected


@pytest.mark.parametrize("to", [None, True, 1.5, "soon"])
def test_other_rollback_targets_are_refused(to: Any) -> None:
    with pytest.raises(CompilationError) as caught:
        parse_rollback_target(to)
    text = str(caught.value)
    assert "snapshot id" in text or "not a timestamp" in text


# ---- rollback planning -----------------------------------------------------------------------


def _history(
    snapshots: list[tuple[int, int, int | None]],
    log: list[int],
    refs: dict[str, tuple[str, int]],
) -> TableHistory:
    by_id = {
        s: Snapshot(snapshot_id=s, committed_ms=MS + at * 1000, parent_id=parent)
        for s, at, parent in snapshots
    }
    return TableHistory(
        T,
        by_id,
        tuple(LogEntry(s, by_id[s].committed_ms) for s in log),
        tuple(Ref(name, kind, s) for name, (kind, s) in refs.items()),
    )


# 1 <- 2 <- 3 on main; 4 on branch b from 2.
LINE = _history(
    [(1, 0, None), (2, 10, 1), (3, 20, 2), (4, 30, 2)],
    [1, 2, 3],
    {"main": ("branch", 3), "b": ("branch", 4)},
)


def test_rollback_to_an_ancestor_by_id_and_by_timestamp() -> None:
    plan = plan_rollback(LINE, AsOf("snapshot_id", 1))
    assert (plan.before.snapshot_id, plan.target.snapshot_id, plan.changes) == (3, 1, True)
    # The newest ancestor committed strictly before the time, as Iceberg picks it.
    assert plan_rollback(LINE, AsOf("timestamp", "t"), MS + 20_000).target.snapshot_id == 2
    assert plan_rollback(LINE, AsOf("timestamp", "t"), MS + 20_001).target.snapshot_id == 3
    assert not plan_rollback(LINE, AsOf("snapshot_id", 3)).changes


def test_a_timestamp_before_main_s_line_is_refused_naming_the_oldest() -> None:
    with pytest.raises(TimeTravelError) as caught:
        plan_rollback(LINE, AsOf("timestamp", "2026-05-28 20:26:40"), MS)
    assert caught.value.msg == (
        f"lakehouse_rollback refused: no snapshot of main's line in table {T} was committed "
        "before 2026-05-28 20:26:40; the oldest is snapshot 1 (committed "
        "2026-05-28 20:26:40.000 UTC). Nothing was changed. Fix: use a later timestamp."
    )


def test_a_branch_snapshot_is_refused_naming_the_branch() -> None:
    with pytest.raises(TimeTravelError) as caught:
        plan_rollback(LINE, AsOf("snapshot_id", 4))
    text = caught.value.msg
    assert text.startswith(
        f"lakehouse_rollback refused: snapshot 4 of table {T} is not an ancestor of main's "
        "current snapshot 3 (committed 2026-05-28 20:27:00.000 UTC): it belongs to branch 'b', "
        "not to main. Nothing was changed. Fix: roll back to a snapshot of main's line, newest "
        "first: snapshot 3 "
    )


def test_a_snapshot_rolled_back_past_is_refused_with_that_reason() -> None:
    # main was 1 <- 2 <- 3, then rolled back to 1.
    history = _history(
        [(1, 0, None), (2, 10, 1), (3, 20, 2)], [1, 2, 3, 1], {"main": ("branch", 1)}
    )
    with pytest.raises(TimeTravelError, match="main was rolled back past it"):
        plan_rollback(history, AsOf("snapshot_id", 3))


def test_a_snapshot_before_a_rebuild_is_refused_with_that_reason() -> None:
    # CREATE OR REPLACE: snapshot 2 starts a new line (no parent).
    history = _history([(1, 0, None), (2, 10, None)], [1, 2], {"main": ("branch", 2)})
    with pytest.raises(TimeTravelError, match=r"the table was rebuilt \(CREATE OR REPLACE"):
        plan_rollback(history, AsOf("snapshot_id", 1))


def test_unknown_snapshots_and_tables_without_main_are_refused() -> None:
    with pytest.raises(TimeTravelError, match=f"table {T} has no snapshot 99"):
        plan_rollback(LINE, AsOf("snapshot_id", 99))
    branch_only = _history([(1, 0, None)], [], {"audit": ("branch", 1)})
    with pytest.raises(TimeTravelError, match="has no main branch"):
        plan_rollback(branch_only, AsOf("snapshot_id", 1))


def test_rollback_statements_and_report() -> None:
    plan = plan_rollback(LINE, AsOf("snapshot_id", 1))
    assert rollback_sql("lh", "s", "t", plan, AsOf("snapshot_id", 1)) == (
        "call `lh`.system.rollback_to_snapshot('`s`.`t`', 1)"
    )
    at = AsOf("timestamp", "2026-05-28 20:26:45")
    assert rollback_sql("lh", "s", "t", plan, at) == (
        "call `lh`.system.rollback_to_timestamp('`s`.`t`', TIMESTAMP '2026-05-28 20:26:45')"
    )
    assert rollback_report(plan, plan.target) == [
        f"lakehouse_rollback: rolled back main of {T}",
        "  before: snapshot 3 (committed 2026-05-28 20:27:00.000 UTC)",
        "  after:  snapshot 1 (committed 2026-05-28 20:26:40.000 UTC)",
    ]
    unchanged = plan_rollback(LINE, AsOf("snapshot_id", 3))
    assert rollback_report(unchanged, unchanged.before) == [
        f"lakehouse_rollback: main of {T} is already at snapshot 3 (committed "
        "2026-05-28 20:27:00.000 UTC); nothing to do."
    ]
