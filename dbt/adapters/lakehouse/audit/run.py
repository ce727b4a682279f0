"""Audited runs (write-audit-publish) on Iceberg branches.

Under the target key `write_audit_publish: true`, one dbt invocation writes every table commit
to one branch, `audit_<first 8 chars of the invocation id>`, and fast-forwards each table's
`main` to it only after every node of the invocation passed. Iceberg does the branching: with
the session conf `spark.wap.branch` set, a table whose property `write.wap.enabled` is true
takes INSERT / MERGE / INSERT OVERWRITE commits on that branch, and reads in the session see
the branch (falling back to `main` for tables without it). Without the property the conf is
ignored and a write lands on `main` silently, so every table an audited node writes gets the
property before its first write, and a node that opts out gets it turned off.

The parts Iceberg leaves to us:
- CREATE OR REPLACE under the conf replaces the table and leaves it without `main`; an
  existing table is therefore replaced on the branch by INSERT OVERWRITE (the materializations
  ask `plan_branch_replace` what schema changes that needs), and a new table is created by a
  CTAS carrying the property, whose only ref is then the branch.
- Which nodes passed: dbt tells adapters nothing about results, so the run's node events are
  observed (NodeStart / NodeFinished); a node that started and did not finish (an interrupt)
  counts as a failure.
- Publishing: every table's `main` must be an ancestor of its branch head before any is moved,
  so a table that another writer changed meanwhile stops the whole publish and nothing moves.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.iceberg.table_name import TableName

logger = AdapterLogger("Lakehouse")

# What reads a table's Java object (refs, properties, schema ids) and so needs the driver here.
JAVA_TABLE_FEATURES = "Audited publishing (write_audit_publish) and dual-format tables"
WITHOUT_CONNECT = (
    "run audited or dual-format (table_formats: [iceberg, delta]) work with a local or "
    "cluster spark.master, or drop write_audit_publish / table_formats for this target."
)

BRANCH_CONF = "spark.wap.branch"
WAP_ENABLED = "write.wap.enabled"
# Commands whose nodes write tables; `test` alone writes nothing worth auditing, and its reads
# must see `main`.
AUDITED_COMMANDS = frozenset({"build", "run", "seed", "snapshot"})
# NodeFinished statuses that let a run publish (a warning test passed with a warning).
PASSING = frozenset({"success", "pass", "warn", "no-op"})
_BRANCH_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]{0,99}$")


class AuditError(DbtRuntimeError):
    """An audited run could not be published or discarded as asked."""

    CODE = 10105
    MESSAGE = "Lakehouse audit error"


def branch_for(invocation_id: str) -> str:
    return "audit_" + invocation_id.replace("-", "")[:8]


def checked_branch(name: Any) -> str:
    """A branch name given by a user (run-operation args), or an error saying what is wanted."""
    text = str(name or "").strip()
    if not _BRANCH_NAME.match(text) or text == "main":
        raise AuditError(
            f"Expected the audit branch of a run, such as `audit_1a2b3c4d` (letters, digits, _ "
            f"and -; not `main`), got {name!r}. The run that left it printed its name."
        )
    return text


@dataclass
class RunAudit:
    """One dbt invocation's audit: its branch, the tables it wrote there (in the order their
    nodes started, which is dependency order), and how its nodes ended."""

    branch: str
    invocation_id: str
    tables: dict[TableName, str] = field(default_factory=dict)  # table -> node unique id
    started: set[str] = field(default_factory=set)
    finished: dict[str, str] = field(default_factory=dict)  # node unique id -> status
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, table: TableName, node: str) -> bool:
        """Note a table this run writes on its branch; False when it was noted already."""
        with self._lock:
            if table in self.tables:
                return False
            self.tables[table] = node
            return True

    def observe(self, msg: Any) -> None:
        """dbt event callback: keep each node's start and final status."""
        name = getattr(getattr(msg, "info", None), "name", "")
        if name not in ("NodeStart", "NodeFinished"):
            return
        data = msg.data
        unique_id = data.node_info.unique_id
        with self._lock:
            if name == "NodeStart":
                self.started.add(unique_id)
            else:
                self.finished[unique_id] = data.run_result.status or data.node_info.node_status

    def problems(self) -> list[str]:
        """Why this run must not publish: failed or unfinished nodes, one line each."""
        with self._lock:
            lines = [
                f"{node}: {status}"
                for node, status in sorted(self.finished.items())
                if status not in PASSING
            ]
            lines += [
                f"{node}: did not finish" for node in sorted(self.started - set(self.finished))
            ]
        return lines


_CURRENT: RunAudit | None = None


def begin_run(invocation_id: str | None, enabled: bool, command: str | None) -> RunAudit | None:
    """Start this invocation's audit (or none), replacing any earlier invocation's in-process
    state; the caller registers `observe` for dbt's events."""
    global _CURRENT
    _CURRENT = None
    if enabled and invocation_id and command in AUDITED_COMMANDS:
        _CURRENT = RunAudit(branch=branch_for(invocation_id), invocation_id=invocation_id)
    return _CURRENT


def current_run() -> RunAudit | None:
    return _CURRENT


def end_run() -> RunAudit | None:
    global _CURRENT
    run, _CURRENT = _CURRENT, None
    return run


def point_session(spark: Any, branch: str | None) -> None:
    """Make the session write to and read from `branch` (None: `main` only)."""
    if branch is None:
        if spark.conf.get(BRANCH_CONF, None) is not None:
            spark.conf.unset(BRANCH_CONF)
    elif spark.conf.get(BRANCH_CONF, None) != branch:
        spark.conf.set(BRANCH_CONF, branch)


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
    return Head(int(snapshot.snapshotId()), datetime.fromtimestamp(millis / 1000, UTC))


def load_table(spark: Any, table: TableName) -> Any | None:
    """The Iceberg table (Java), freshly read from its catalog; None when it does not exist."""
    jvm = engine.driver_jvm(spark, JAVA_TABLE_FEATURES, WITHOUT_CONNECT)
    try:
        loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, table.sql_name
        )
    except Exception as exc:
        if any(sign in str(exc) for sign in ("NoSuchTable", "TABLE_OR_VIEW_NOT_FOUND")):
            return None
        raise
    loaded.refresh()
    return loaded


def table_location(spark: Any, table: TableName) -> str | None:
    """The table's root folder; None when it does not exist. Under Spark Connect from
    DESCRIBE (no Java table there), so maintenance and rollback can look for a Delta log."""
    if not engine.is_connect(spark):
        loaded = load_table(spark, table)
        return None if loaded is None else str(loaded.location())
    try:
        rows = spark.sql(f"describe table extended {table.sql_name}").collect()
    except Exception as exc:
        if any(sign in str(exc) for sign in ("NoSuchTable", "TABLE_OR_VIEW_NOT_FOUND")):
            return None
        raise
    return next((str(row[1]) for row in rows if str(row[0]).strip() == "Location"), None)


def table_property(spark: Any, table: TableName, key: str) -> tuple[bool, str | None]:
    """(exists, the table property's value)."""
    loaded = load_table(spark, table)
    if loaded is None:
        return False, None
    value = loaded.properties().get(key)
    return True, None if value is None else str(value)


def branch_state(spark: Any, table: TableName, branch: str) -> BranchState | None:
    """Where `main` and the branch stand on a table; None if the table lacks the branch."""
    loaded = load_table(spark, table)
    if loaded is None:
        return None
    branch_head = _head(loaded.snapshot(branch))
    if branch_head is None:
        return None
    main = _head(loaded.snapshot("main"))
    jvm = engine.driver_jvm(spark, JAVA_TABLE_FEATURES, WITHOUT_CONNECT)
    ancestor = main is None or bool(
        jvm.org.apache.iceberg.util.SnapshotUtil.isAncestorOf(
            loaded, branch_head.snapshot_id, main.snapshot_id
        )
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


# ---- replacing an existing table on the branch --------------------------------------------------


@dataclass
class BranchReplacePlan:
    """What an audited replace must change on the table before INSERT OVERWRITE on the branch.

    Iceberg keeps one schema and partition spec per table, shared by every branch: these
    changes are seen by `main` readers at once (added columns read as NULL; dropped columns
    disappear; old rows keep their data files and are still read through `main`)."""

    add: list[tuple[str, str]] = field(default_factory=list)  # (column, type)
    drop: list[str] = field(default_factory=list)
    widen: list[tuple[str, str]] = field(default_factory=list)  # (column, new type)
    partition_drop: list[str] = field(default_factory=list)
    partition_add: list[str] = field(default_factory=list)


def _normal_field(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("`", "")).lower()


def plan_branch_replace(
    model_name: str,
    relation: str,
    new_columns: Sequence[tuple[str, str]],
    table_columns: Sequence[tuple[str, str]],
    new_partitioning: Sequence[str],
    table_partitioning: Sequence[str],
) -> BranchReplacePlan:
    """The schema and spec changes that make `relation` take the model's rows on a branch.

    Column types follow Iceberg's in-place promotions (int to bigint, float to double, decimal
    precision up); another type change cannot be made without replacing the table for every
    reader, so it is refused before anything changes.
    """
    from dbt.adapters.lakehouse.models.incremental import iceberg_type, is_widening

    plan = BranchReplacePlan()
    existing = {name.lower(): (name, dtype) for name, dtype in table_columns}
    wanted = {name.lower() for name, _ in new_columns}
    refused: list[str] = []
    for name, dtype in new_columns:
        found = existing.get(name.lower())
        if found is None:
            plan.add.append((name, dtype))
        elif iceberg_type(found[1]) != iceberg_type(dtype):
            if is_widening(found[1], dtype):
                plan.widen.append((found[0], dtype))
            else:
                refused.append(f"{found[0]}: table has {found[1]}, model gives {dtype}")
    if refused:
        raise AuditError(
            f"Model '{model_name}' cannot be audited on a branch this run: it changes column "
            f"types of {relation} that Iceberg cannot change in place:\n  - "
            + "\n  - ".join(refused)
            + "\nIceberg keeps one schema per table, shared by main and every branch, so the "
            "change would reach main's readers before the audit. Run this model once without "
            "auditing (config `write_audit_publish: false`, or a run without the target key). "
            "Nothing was written."
        )
    plan.drop = [name for key, (name, _) in existing.items() if key not in wanted]
    current = [_normal_field(f) for f in table_partitioning]
    target = [_normal_field(f) for f in new_partitioning]
    if current != target:
        plan.partition_drop = list(table_partitioning)
        plan.partition_add = list(new_partitioning)
    return plan
