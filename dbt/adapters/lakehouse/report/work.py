"""A node's commits in this invocation, and what they add up to.

Every statement that commits an Iceberg snapshot under a node's name (iceberg/lineage.py) is
recorded here with the figures of its snapshot summary; at the end of the node's
materialization they are summed for its adapter_response (response.py). Nothing is queried:
the summary is the one the commit check already read.

What a summary tells depends on the statement (checked on Iceberg 1.12, Spark 4.1 and 3.5):

- INSERT INTO, CREATE [OR REPLACE] TABLE AS: `added-records` are the rows inserted.
- INSERT OVERWRITE: `added-records` inserted, `deleted-records` the rows replaced.
- DELETE: copy-on-write rewrites the files it touches, so the rows deleted are
  `deleted-records` - `added-records`; merge-on-read writes `added-position-deletes` (and
  deletion vectors count there too) or `added-equality-deletes`; a metadata-only delete
  drops whole files, `deleted-records`.
- MERGE: Spark 4.1 writes its own counts into the summary (`spark.merge-into.num-target-rows-
  inserted|updated|deleted`); Spark 3.5 does not, and a copy-on-write merge's added and deleted
  records count the rows it copied too, so there its inserted, updated and deleted rows are not
  known (absent from the response, never guessed).
- UPDATE: merge-on-read's `added-records` are the rows updated; copy-on-write's are not known.

An INSERT OVERWRITE in a node that reports a merge (a materialized view's GROUP BY folded in by
rewriting the view whole) replaces each group's row: as many rows as it removed count as
updated, not as inserted and deleted.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse.report.timing import StatementTime

# The summary entries read from each snapshot.
SUMMARY_KEYS = (
    "added-records",
    "deleted-records",
    "added-position-deletes",
    "added-equality-deletes",
    "added-data-files",
    "deleted-data-files",
    "added-delete-files",
    "removed-delete-files",
    "added-files-size",
    "spark.merge-into.num-target-rows-inserted",
    "spark.merge-into.num-target-rows-updated",
    "spark.merge-into.num-target-rows-deleted",
)
_MERGE_PREFIX = "spark.merge-into.num-target-rows-"
# Commits that change no row: maintenance rewriting files, the Delta log mirroring a snapshot.
UNCHANGED_ROWS = ("rewrite", "mirror")


@dataclass(frozen=True)
class Commit:
    table: str
    snapshot_id: int
    operation: str  # Iceberg's: append, overwrite, delete, replace
    # what made it: insert, overwrite, delete, update, merge, create, truncate (statements);
    # rewrite (a maintenance procedure), mirror (the Delta log)
    statement: str
    summary: Mapping[str, str]

    def count(self, key: str) -> int:
        return int(self.summary.get(key) or 0)

    def rows(self, in_place: bool = False) -> dict[str, int | None]:
        """inserted / updated / deleted rows of this commit; None where it cannot tell.
        `in_place`: an overwrite's replaced rows are updates (the node merges)."""
        kind = self.statement
        if kind in UNCHANGED_ROWS:
            return {"inserted": 0, "updated": 0, "deleted": 0}
        added, deleted = self.count("added-records"), self.count("deleted-records")
        row_deletes = self.count("added-position-deletes") + self.count("added-equality-deletes")
        if kind in ("insert", "create"):
            return {"inserted": added, "updated": 0, "deleted": 0}
        if kind == "overwrite":
            replaced = min(added, deleted) if in_place else 0
            return {
                "inserted": added - replaced,
                "updated": replaced,
                "deleted": deleted - replaced,
            }
        if kind in ("delete", "truncate"):
            return {"inserted": 0, "updated": 0, "deleted": deleted - added + row_deletes}
        if kind == "merge":
            if f"{_MERGE_PREFIX}inserted" in self.summary:
                return {
                    name: self.count(f"{_MERGE_PREFIX}{name}")
                    for name in ("inserted", "updated", "deleted")
                }
            return {"inserted": None, "updated": None, "deleted": None}
        if kind == "update" and not self.count("deleted-data-files"):
            return {"inserted": 0, "updated": added, "deleted": 0}
        return {"inserted": None, "updated": None, "deleted": None}


@dataclass
class NodeWork:
    commits: list[Commit] = field(default_factory=list)
    # every statement the node ran, timed (statements.py), for its wall-time split
    statements: list[StatementTime] = field(default_factory=list)

    def rows(self, in_place: bool = False) -> dict[str, int | None]:
        """Each of inserted / updated / deleted summed over the commits; None when a commit
        could not tell it. `in_place`: Commit.rows's."""
        totals: dict[str, int | None] = {"inserted": 0, "updated": 0, "deleted": 0}
        for commit in self.commits:
            for name, value in commit.rows(in_place).items():
                before = totals[name]
                totals[name] = None if before is None or value is None else before + value
        return totals

    def files(self) -> dict[str, int]:
        def summed(*keys: str) -> int:
            return sum(c.count(k) for c in self.commits for k in keys)

        return {
            "files_added": summed("added-data-files", "added-delete-files"),
            "files_removed": summed("deleted-data-files", "removed-delete-files"),
            "bytes_written": summed("added-files-size"),
        }


_LOCK = threading.Lock()
_WORK: dict[tuple[str, str], NodeWork] = {}
# A node that failed before reporting leaves its work here; the oldest go past this many.
_KEPT = 4096


def _node(invocation_id: str, node: str) -> NodeWork:
    # under _LOCK
    if len(_WORK) >= _KEPT and (invocation_id, node) not in _WORK:
        _WORK.pop(next(iter(_WORK)))
    return _WORK.setdefault((invocation_id, node), NodeWork())


def record(invocation_id: str, node: str, commit: Commit) -> None:
    with _LOCK:
        _node(invocation_id, node).commits.append(commit)


def record_statement(invocation_id: str, node: str, statement: StatementTime) -> None:
    with _LOCK:
        _node(invocation_id, node).statements.append(statement)


def record_snapshot(snapshot: Any, table: str, kind: str, invocation_id: str, node: str) -> None:
    """Record a commit from its Iceberg Snapshot (the Java object the commit check found):
    the summary entries SUMMARY_KEYS names, one lookup each."""
    summary = snapshot.summary()
    figures = {}
    for key in SUMMARY_KEYS:
        value = summary.get(key)
        if value is not None:
            figures[key] = str(value)
    commit = Commit(table, int(snapshot.snapshotId()), str(snapshot.operation()), kind, figures)
    record(invocation_id, node, commit)


def record_new_snapshots(
    table_object: Any, before: int | None, table: str, kind: str, invocation_id: str, node: str
) -> None:
    """Record the snapshots a step outside SQL statements committed to a table (a maintenance
    procedure): those from its current one back to `before`, oldest first."""
    found: list[Any] = []
    snapshot = table_object.currentSnapshot()
    while snapshot is not None and int(snapshot.snapshotId()) != before and len(found) < 16:
        found.append(snapshot)
        parent = snapshot.parentId()
        snapshot = None if parent is None else table_object.snapshot(parent)
    for made in reversed(found):
        record_snapshot(made, table, kind, invocation_id, node)


def take(invocation_id: str, node: str) -> NodeWork:
    """The node's work so far, forgotten here: a node reports once."""
    with _LOCK:
        return _WORK.pop((invocation_id, node), NodeWork())


def statement_kind(statement_head: str) -> str:
    """The kind of a committing statement from its first keywords (lineage.commit_target's
    match): `insert overwrite`, `merge into`, `create or replace table` ..."""
    words = statement_head.lower().split()
    first = words[0] if words else ""
    if first == "insert":
        return "overwrite" if len(words) > 1 and words[1] == "overwrite" else "insert"
    if first in ("create", "replace"):
        return "create"
    return first  # merge, delete, update, truncate
