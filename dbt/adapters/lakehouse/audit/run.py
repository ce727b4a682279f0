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
  ask `plan_branch_replace`, audit/replace.py, what schema changes that needs), and a new
  table is created by a CTAS carrying the property, whose only ref is then the branch.
- Which nodes passed: dbt tells adapters nothing about results, so the run's node events are
  observed (NodeStart / NodeFinished); a node that started and did not finish (an interrupt)
  counts as a failure.
- Publishing (audit/branches.py): every table's `main` must be an ancestor of its branch head
  before any is moved, so a table that another writer changed meanwhile stops the whole
  publish and nothing moves.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.session_state import set_kept_conf

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
    """Make the session write to and read from `branch` (None: `main` only). Every connection's
    open asks: the conf is kept on the session (session_state.kept_conf), not read each time."""
    set_kept_conf(spark, BRANCH_CONF, branch)
