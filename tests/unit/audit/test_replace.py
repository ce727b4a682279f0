"""Replacing a table on an audit branch: the schema and spec changes it makes first."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.audit.replace import plan_branch_replace
from dbt.adapters.lakehouse.audit.run import AuditError


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
