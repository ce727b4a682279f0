"""Audited runs: branch names, and which runs may publish."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.lakehouse.audit.run import (
    AuditError,
    RunAudit,
    begin_run,
    branch_for,
    checked_branch,
    current_run,
    end_run,
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
