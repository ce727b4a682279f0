"""An audit branch on each table an audited run wrote: where it and `main` stand, and ending
it: publishing (fast-forwarding every table's `main` to it, all or none) or discarding it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dbt.adapters.lakehouse.audit.run import AuditError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.tables import java_tables, load_table

# ---- the table as Iceberg sees it --------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    snapshot_id: int
    committed_at: datetime

    def describe(self) -> str:
        return f"snapshot {self.snapshot_id} (committed {self.committed_at:%Y-%m-%d %H:%M:%S} UTC)"


@dataclass(frozen=True)
class BranchState:
    table: TableName
    main: Head | None  # None: the table has no `main` yet (created by an audited run)
    branch: Head
    main_is_ancestor: bool
    refs: tuple[str, ...]


def _head(snapshot: Any) -> Head | None:
    if snapshot is None:
        return None
    millis = snapshot.timestampMillis()
    return Head(int(snapshot.snapshotId()), datetime.fromtimestamp(millis / 1000, timezone.utc))


def branch_state(spark: Any, table: TableName, branch: str) -> BranchState | None:
    """Where `main` and the branch stand on a table; None if the table lacks the branch."""
    loaded = load_table(spark, table)
    if loaded is None:
        return None
    branch_head = _head(loaded.snapshot(branch))
    if branch_head is None:
        return None
    main = _head(loaded.snapshot("main"))
    is_ancestor_of = java_tables(spark).is_ancestor_of
    ancestor = main is None or bool(
        is_ancestor_of(loaded, branch_head.snapshot_id, main.snapshot_id)
    )
    refs = tuple(sorted(str(r) for r in loaded.refs().keySet()))
    return BranchState(table, main, branch_head, ancestor, refs)


# ---- publishing and discarding ----------------------------------------------------------------


def end_commands(branch: str) -> str:
    return (
        f"  dbt run-operation lakehouse_publish --args '{{branch: {branch}}}'\n"
        f"  dbt run-operation lakehouse_discard --args '{{branch: {branch}}}'"
    )


def unpublished_message(branch: str, problems: Sequence[str], tables: Iterable[TableName]) -> str:
    shown = "\n".join(f"  - {line}" for line in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    written = ", ".join(str(t) for t in tables)
    return (
        f"Audited run not published: {len(problems)} node(s) did not pass:\n{shown}{more}\n"
        f"No table's main moved; readers still see the rows from before this run. This run's "
        f"rows are on branch {branch} of: {written}.\n"
        f"Read them with `select * from <table> version as of '{branch}'`. End the branch with "
        f"one of:\n{end_commands(branch)}"
    )


def conflict_message(branch: str, conflicts: Sequence[BranchState]) -> str:
    lines = [
        f"  - {state.table}: main is at {state.main.describe() if state.main else 'none'}, "
        f"which is not an ancestor of {branch} at {state.branch.describe()}"
        for state in conflicts
    ]
    return (
        f"Cannot publish branch {branch}: another writer committed to main after this run "
        f"branched from it:\n" + "\n".join(lines) + "\n"
        f"No table's main was moved, and the branch keeps this run's rows on every table. "
        f"Rebuild on top of the other writer's rows (rerun the models; then drop this branch "
        f"with `dbt run-operation lakehouse_discard --args '{{branch: {branch}}}'`), or read the "
        f"branch with `version as of '{branch}'` to compare."
    )


def states_with_branch(spark: Any, tables: Iterable[TableName], branch: str) -> list[BranchState]:
    return [s for s in (branch_state(spark, t, branch) for t in tables) if s is not None]


def publish(spark: Any, states: Sequence[BranchState], branch: str) -> list[str]:
    """Fast-forward `main` of every table to its branch, in the given order, then drop the
    branch. Checks every table first: one that cannot move stops all of them."""
    conflicts = [s for s in states if not s.main_is_ancestor]
    if conflicts:
        raise AuditError(conflict_message(branch, conflicts))
    published: list[str] = []
    for state in states:
        table = state.table
        if state.main is None or state.main.snapshot_id != state.branch.snapshot_id:
            try:
                spark.sql(
                    f"CALL {table.procedures}.fast_forward({table.in_catalog}, 'main', '{branch}')"
                ).collect()
            except Exception as exc:
                done = ", ".join(published) or "none"
                raise AuditError(
                    f"Publishing branch {branch} stopped at {table}: {str(exc).splitlines()[0]}\n"
                    f"Already published: {done}. The branch stays on every table not yet "
                    f"published; run `dbt run-operation lakehouse_publish --args "
                    f"'{{branch: {branch}}}'` again once the cause is fixed."
                ) from exc
        published.append(str(table))
    for state in states:
        _drop_branch(spark, state.table, branch)
    return published


def discard(spark: Any, states: Sequence[BranchState], branch: str) -> list[str]:
    """Drop the branch from every table. A table whose only ref was the branch was created by
    the audited run and never published: it is dropped too, as it did not exist before."""
    dropped: list[str] = []
    for state in states:
        _drop_branch(spark, state.table, branch)
        if state.main is None and set(state.refs) <= {branch}:
            spark.sql(f"DROP TABLE IF EXISTS {state.table.sql_name}").collect()
            dropped.append(f"{state.table} (created by the audited run; dropped)")
        else:
            dropped.append(str(state.table))
    return dropped


def _drop_branch(spark: Any, table: TableName, branch: str) -> None:
    spark.sql(f"ALTER TABLE {table.sql_name} DROP BRANCH IF EXISTS `{branch}`").collect()


def ordered_by_branch_time(states: Iterable[BranchState]) -> list[BranchState]:
    """A run's tables in the order it wrote them: parents commit before their children start."""
    return sorted(states, key=lambda s: (s.branch.committed_at, str(s.table)))
