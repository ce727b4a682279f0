"""Audited runs: branch names, which runs may publish, and the changes a branch replace makes."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from dbt.adapters.lakehouse.audit.run import (
    AuditError,
    BranchState,
    Head,
    RunAudit,
    begin_run,
    branch_for,
    checked_branch,
    conflict_message,
    current_run,
    end_run,
    ordered_by_branch_time,
    plan_branch_replace,
    publish,
    unpublished_message,
)
from dbt.adapters.lakehouse.iceberg.table_name import TableName


def event(name: str, unique_id: str, status: str = "") -> SimpleNamespace:
    return SimpleNamespace(
        info=SimpleNamespace(name=name),
        data=SimpleNamespace(
            node_info=SimpleNamespace(unique_id=unique_id, node_status=status),
            run_result=SimpleNamespace(status=status),
        ),
    )


def test_branch_is_audit_and_the_first_8_characters_of_the_invocation() -> None:
    assert branch_for("1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d") == "audit_1a2b3c4d"


@pytest.mark.parametrize("name", ["main", "", None, "audit 1", "a'b", "x" * 101, "`x`"])
def test_user_given_branch_names_are_checked(name: object) -> None:
    with pytest.raises(AuditError, match="Expected the audit branch of a run"):
        checked_branch(name)


def test_a_valid_branch_name_passes_trimmed() -> None:
    assert checked_branch(" audit_1a2b3c4d ") == "audit_1a2b3c4d"


@pytest.mark.parametrize(
    ("enabled", "command", "expected"),
    [
        (True, "build", "audit_abcdef12"),
        (True, "run", "audit_abcdef12"),
        (True, "seed", "audit_abcdef12"),
        (True, "snapshot", "audit_abcdef12"),
        (True, "test", None),
        (True, "run-operation", None),
        (True, "show", None),
        (False, "build", None),
    ],
)
def test_only_writing_commands_under_the_key_audit(
    enabled: bool, command: str, expected: str | None
) -> None:
    run = begin_run("abcdef12-0000", enabled, command)
    try:
        assert (run.branch if run else None) == expected
        assert current_run() is run
    finally:
        end_run()
    assert current_run() is None


def test_a_run_publishes_only_when_every_started_node_passed() -> None:
    run = RunAudit(branch="audit_x", invocation_id="x")
    for node, status in [("model.p.a", "success"), ("test.p.t", "pass"), ("test.p.w", "warn")]:
        run.observe(event("NodeStart", node))
        run.observe(event("NodeFinished", node, status))
    run.observe(event("MainReportVersion", "ignored"))
    assert run.problems() == []
    run.observe(event("NodeStart", "test.p.bad"))
    run.observe(event("NodeFinished", "test.p.bad", "fail"))
    run.observe(event("NodeStart", "model.p.cut"))  # interrupted: never finished
    assert run.problems() == ["test.p.bad: fail", "model.p.cut: did not finish"]


def test_tables_are_recorded_once_in_the_order_written() -> None:
    run = RunAudit(branch="audit_x", invocation_id="x")
    a, b = TableName("c", "s", "a"), TableName("c", "s", "b")
    assert run.record(a, "model.p.a") and run.record(b, "model.p.b")
    assert not run.record(a, "model.p.a")
    assert list(run.tables) == [a, b]


def test_table_names_are_quoted_for_sql_and_procedures() -> None:
    table = TableName("cat", "my`ns", "t")
    assert table.sql_name == "`cat`.`my``ns`.`t`"
    assert table.in_catalog == "'`my``ns`.`t`'"
    assert str(table) == "cat.my`ns.t"


def test_unpublished_message_names_the_branch_failures_and_both_commands() -> None:
    text = unpublished_message("audit_x", ["test.p.t: fail"], [TableName("c", "s", "t")])
    assert "Audited run not published: 1 node(s) did not pass:\n  - test.p.t: fail" in text
    assert "on branch audit_x of: c.s.t" in text
    assert "dbt run-operation lakehouse_publish --args '{branch: audit_x}'" in text
    assert "dbt run-operation lakehouse_discard --args '{branch: audit_x}'" in text


def head(snapshot_id: int, second: int) -> Head:
    return Head(snapshot_id, datetime(2026, 11, 1, 0, 0, second, tzinfo=UTC))


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


def test_branch_replace_plans_added_dropped_and_widened_columns() -> None:
    plan = plan_branch_replace(
        "m",
        "c.s.t",
        new_columns=[("id", "bigint"), ("Amount", "decimal(12,2)"), ("note", "string")],
        table_columns=[("id", "int"), ("amount", "decimal(10,2)"), ("old", "date")],
        new_partitioning=[],
        table_partitioning=[],
    )
    assert plan.add == [("note", "string")]
    assert plan.drop == ["old"]
    assert plan.widen == [("id", "bigint"), ("amount", "decimal(12,2)")]
    assert plan.partition_drop == plan.partition_add == []


def test_branch_replace_ignores_type_spellings_and_keeps_an_equal_spec() -> None:
    plan = plan_branch_replace(
        "m",
        "c.s.t",
        [("id", "smallint"), ("ts", "timestamp")],
        [("id", "int"), ("ts", "timestamp")],
        new_partitioning=["days(`ts`)", "bucket(16, `id`)"],
        table_partitioning=["days(ts)", "bucket(16, id)"],
    )
    assert (plan.add, plan.drop, plan.widen, plan.partition_add) == ([], [], [], [])


def test_branch_replace_replaces_a_changed_spec() -> None:
    plan = plan_branch_replace(
        "m",
        "c.s.t",
        [("ts", "timestamp")],
        [("ts", "timestamp")],
        new_partitioning=["months(`ts`)"],
        table_partitioning=["days(ts)"],
    )
    assert plan.partition_drop == ["days(ts)"]
    assert plan.partition_add == ["months(`ts`)"]


def test_branch_replace_refuses_a_type_change_iceberg_cannot_make_in_place() -> None:
    with pytest.raises(AuditError) as raised:
        plan_branch_replace("orders", "c.s.t", [("id", "string")], [("id", "int")], [], [])
    assert "Model 'orders' cannot be audited on a branch this run" in raised.value.msg
    assert "id: table has int, model gives string" in raised.value.msg
    assert "write_audit_publish: false" in raised.value.msg
