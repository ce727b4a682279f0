"""Audit branches: the messages of an unpublished run, and publishing all tables or none."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from dbt.adapters.lakehouse.audit.branches import (
    BranchState,
    Head,
    conflict_message,
    ordered_by_branch_time,
    publish,
    unpublished_message,
)
from dbt.adapters.lakehouse.audit.run import AuditError
from dbt.adapters.lakehouse.iceberg.table_name import TableName


def test_unpublished_message_names_the_branch_failures_and_both_commands() -> None:
    text = unpublished_message("audit_x", ["test.p.t: fail"], [TableName("c", "s", "t")])
    assert "Audited run not published: 1 node(s) did not pass:\n  - test.p.t: fail" in text
    assert "on branch audit_x of: c.s.t" in text
    assert "dbt run-operation lakehouse_publish --args '{branch: audit_x}'" in text
    assert "dbt run-operation lakehouse_discard --args '{branch: audit_x}'" in text


def head(snapshot_id: int, second: int) -> Head:
    return Head(snapshot_id, datetime(2026, 11, 1, 0, 0, second, tzinfo=timezone.utc))


def test_a_moved_main_stops_the_publish_before_anything_moves() -> None:
    moved = BranchState(
        TableName("c", "s", "t"), head(5, 3), head(4, 2), False, ("audit_x", "main")
    )
    fine = BranchState(TableName("c", "s", "u"), head(1, 0), head(2, 1), True, ("audit_x", "main"))

    class NoSql:
        def sql(self, statement: str) -> None:
            raise AssertionError(f"nothing may run: {statement}")

    with pytest.raises(AuditError) as raised:
        publish(NoSql(), [fine, moved], "audit_x")
    assert str(raised.value.msg) == conflict_message("audit_x", [moved])
    assert (
        "c.s.t: main is at snapshot 5 (committed 2026-11-01 00:00:03 UTC), which is not an "
        "ancestor of audit_x at snapshot 4 (committed 2026-11-01 00:00:02 UTC)" in raised.value.msg
    )


def test_publish_fast_forwards_in_order_then_drops_the_branch() -> None:
    new = BranchState(TableName("c", "s", "new"), None, head(2, 1), True, ("audit_x",))
    same = BranchState(
        TableName("c", "s", "same"), head(3, 0), head(3, 0), True, ("audit_x", "main")
    )
    ran: list[str] = []

    class Recorder:
        def sql(self, statement: str) -> SimpleNamespace:
            ran.append(statement)
            return SimpleNamespace(collect=lambda: [])

    assert publish(Recorder(), [new, same], "audit_x") == ["c.s.new", "c.s.same"]
    assert ran == [
        "CALL `c`.system.fast_forward('`s`.`new`', 'main', 'audit_x')",
        "ALTER TABLE `c`.`s`.`new` DROP BRANCH IF EXISTS `audit_x`",
        "ALTER TABLE `c`.`s`.`same` DROP BRANCH IF EXISTS `audit_x`",
    ]


def test_branch_order_follows_commit_time() -> None:
    late = BranchState(TableName("c", "s", "child"), None, head(9, 5), True, ())
    early = BranchState(TableName("c", "s", "parent"), None, head(8, 1), True, ())
    assert ordered_by_branch_time([late, early]) == [early, late]
