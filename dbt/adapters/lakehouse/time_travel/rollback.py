"""`lakehouse_rollback`: moves `main` back to an earlier snapshot of its own line. Anything else
is refused with the reason before the procedure runs, so a refusal changes nothing.

The rules are Iceberg 1.10's: rollback_to_snapshot needs an ancestor of main's current
snapshot; rollback_to_timestamp takes the newest such ancestor committed strictly before the
time. A table rebuilt with CREATE OR REPLACE starts a new line of ancestors, so rollback does
not reach its old snapshots (time travel does).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.iceberg.metadata import Snapshot, format_millis
from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal
from dbt.adapters.lakehouse.time_travel.as_of import (
    AsOf,
    TimeTravelError,
    normalize_timestamp,
    parse_snapshot_id,
)
from dbt.adapters.lakehouse.time_travel.history import (
    SHOWN,
    Query,
    TableHistory,
    listed,
)


def parse_rollback_target(to: Any) -> AsOf:
    """`to:` of lakehouse_rollback: a snapshot id (a whole number) or a timestamp."""
    snapshot_id = parse_snapshot_id(to)
    if snapshot_id is not None:
        return AsOf("snapshot_id", snapshot_id)
    if to is None or isinstance(to, bool) or not isinstance(to, (str, dt.date)):
        raise CompilationError(
            "lakehouse_rollback needs `to:`, a snapshot id (a whole number from "
            "`<table>.snapshots`) or a timestamp such as '2026-11-01 00:00:00' (UTC); "
            f"got {to!r}."
        )
    return AsOf("timestamp", normalize_timestamp(to, "lakehouse_rollback `to:`"))


def timestamp_millis(query: Query, timestamp: str) -> int:
    """A timestamp literal in epoch milliseconds, read by Spark as its procedures read it."""
    return int(query(f"select unix_millis(cast({string_literal(timestamp)} as timestamp))")[0][0])


@dataclass(frozen=True)
class RollbackPlan:
    table: str
    before: Snapshot
    target: Snapshot

    @property
    def changes(self) -> bool:
        return self.before.snapshot_id != self.target.snapshot_id


def plan_rollback(history: TableHistory, to: AsOf, at_ms: int | None = None) -> RollbackPlan:
    """The snapshot main moves back to, or a refusal naming the table and the reason.

    `at_ms`: the timestamp of a `to: <timestamp>` in epoch milliseconds (timestamp_millis).
    """
    table = history.table
    main = history.main
    if main is None:
        raise TimeTravelError(
            f"lakehouse_rollback refused: table {table} has no main branch (no snapshot yet, "
            "or created by an audited run that was never published). Nothing was changed."
        )
    line = history.line(main.snapshot_id)
    recent = listed((s.describe() for s in line[:SHOWN]), len(line))
    if to.key == "snapshot_id":
        target = history.snapshots.get(int(to.value))
        if target is None:
            raise TimeTravelError(
                f"lakehouse_rollback refused: table {table} has no snapshot {to.value} "
                f"(expired, or from another table). Nothing was changed. main's line, newest "
                f"first: {recent}."
            )
        if target not in line:
            raise TimeTravelError(
                f"lakehouse_rollback refused: snapshot {target.snapshot_id} of table {table} is "
                f"not an ancestor of main's current {main.describe()}: "
                f"{why_not_ancestor(history, target, line)}. Nothing was changed. Fix: roll back "
                f"to a snapshot of main's line, newest first: {recent}."
            )
        return RollbackPlan(table, main, target)
    assert at_ms is not None, "a timestamp target needs its milliseconds"
    older = [s for s in line if s.committed_ms < at_ms]
    if not older:
        oldest = line[-1]
        raise TimeTravelError(
            f"lakehouse_rollback refused: no snapshot of main's line in table {table} was "
            f"committed before {to.value}; the oldest is {oldest.describe()}. Nothing was "
            "changed. Fix: use a later timestamp."
        )
    return RollbackPlan(table, main, max(older, key=lambda s: s.committed_ms))


def why_not_ancestor(history: TableHistory, target: Snapshot, line: list[Snapshot]) -> str:
    """Why main's current state does not descend from `target`, as far as metadata tells."""
    holders = [
        ref
        for ref in sorted(history.refs, key=lambda r: r.name)
        if ref.name != "main" and target in history.line(ref.snapshot_id)
    ]
    if holders:
        named = ", ".join(f"{r.kind} {r.name!r}" for r in holders)
        return f"it belongs to {named}, not to main"
    entry = next((e for e in history.log if e.snapshot_id == target.snapshot_id), None)
    if entry is None:
        return "it was never main's current snapshot (written to a branch since dropped)"
    root = line[-1] if line else None
    if root is not None and root.parent_id is None and root.committed_ms > target.committed_ms:
        return (
            f"the table was rebuilt (CREATE OR REPLACE: a `table` model or --full-refresh) at "
            f"{format_millis(root.committed_ms)}, which started a new line of snapshots"
        )
    return (
        f"main was rolled back past it (it was main's state from "
        f"{format_millis(entry.made_current_ms)}, then replaced by a later rollback)"
    )


def rollback_sql(catalog: str, namespace: str, table: str, plan: RollbackPlan, to: AsOf) -> str:
    """The Iceberg procedure call that moves main as planned."""
    name = TableName(catalog, namespace, table)
    if to.key == "timestamp":
        return (
            f"call {name.procedures}.rollback_to_timestamp({name.in_catalog}, "
            f"TIMESTAMP {string_literal(str(to.value))})"
        )
    return (
        f"call {name.procedures}.rollback_to_snapshot({name.in_catalog}, {plan.target.snapshot_id})"
    )


def rollback_report(plan: RollbackPlan, after: Snapshot | None) -> list[str]:
    """What lakehouse_rollback prints: main before and after."""
    if not plan.changes:
        return [
            f"lakehouse_rollback: main of {plan.table} is already at {plan.before.describe()}; "
            "nothing to do.",
        ]
    now = after.describe() if after is not None else "(not found)"
    return [
        f"lakehouse_rollback: rolled back main of {plan.table}",
        f"  before: {plan.before.describe()}",
        f"  after:  {now}",
    ]
