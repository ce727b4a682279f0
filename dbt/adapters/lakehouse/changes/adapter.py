"""`lakehouse.changes(upstream)` when a node compiles: read both histories, plan (plan.py), have
the node's commits record what it consumes, and render the rows to read.

The rows are the upstream's columns plus Iceberg's changelog columns `_change_type` (INSERT or
DELETE; an update is a DELETE of the old row and an INSERT of the new one), `_change_ordinal`
(the order of the snapshot that made the change) and `_commit_snapshot_id` (rows.py reads them).
"""

from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.changes import rows
from dbt.adapters.lakehouse.changes.plan import (
    LOST_CHANGES_MODES,
    ChangesPlan,
    plan_changes,
    record_key,
    recorded_snapshot,
)
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg import lineage
from dbt.adapters.lakehouse.iceberg.history import ancestors
from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal
from dbt.adapters.lakehouse.reuse.session_state import kept_conf

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")

CHANGE_COLUMNS = ("_change_type", "_change_ordinal", "_commit_snapshot_id")

# How a merge applies changelog rows unless the model configures otherwise: the latest change
# per key (an update's INSERT before its DELETE, which share a snapshot), and a DELETE deletes.
MERGE_DEFAULTS: dict[str, Any] = {
    "latest_by": ["_change_ordinal", "_change_type = 'INSERT'"],
    "delete_condition": "_change_type = 'DELETE'",
}

# Per (invocation id, node): the nodes that read changes, those whose table is rebuilt (their
# upstream changes lost), and those whose rows carry the changelog columns (applied by the
# materialization).
_READS: set[tuple[str, str]] = set()
_REBUILD: set[tuple[str, str]] = set()
_APPLIES: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


class LostChangesError(DbtRuntimeError):
    """A model set on_lost_changes: fail, and what it consumed last cannot be read on from."""


def changes_sql(
    adapter: LakehouseAdapter,
    relation: Any,
    this: Any,
    node_id: str | None,
    incremental: bool,
    on_lost_changes: str | None,
    execute: bool,
) -> str:
    """The rows of `relation` changed since the snapshot the model `this` consumed last, as a
    relation to select from (a temporary view or a parenthesised query)."""
    if not execute:
        return str(relation)
    mode = (on_lost_changes or "full").lower()
    if mode not in LOST_CHANGES_MODES:
        raise DbtRuntimeError(
            f"on_lost_changes {on_lost_changes!r} is not supported. Accepted: "
            f"{', '.join(LOST_CHANGES_MODES)}."
        )
    if getattr(relation, "is_cte", False):
        # A unit test's fixture rows or an ephemeral model: no history, every row an insert.
        return rows.everything_sql(str(relation), None)
    upstream = TableName.of(relation)
    with adapter._spark_session(f"read the changes of {upstream}") as spark:
        if runtime.is_connect(spark):
            raise DbtRuntimeError(
                f"lakehouse.changes({upstream}) is not available under Spark Connect yet: the "
                "model's commits must record the snapshot it consumed, which is wired for a "
                "driver in dbt's process only. Fix: run this model with a local or cluster "
                "spark.master."
            )
        branch = kept_conf(spark, lineage.WAP_BRANCH_CONF)
        off = lineage.lineage_off_reason(spark)
        if off is not None:
            raise DbtRuntimeError(
                f"lakehouse.changes({upstream}) needs commit lineage, which is off in this "
                f"session: {off}"
            )
    parents, head, branch_head, with_deletes = _history(adapter, upstream, branch)
    key = record_key(str(upstream))
    recorded = _recorded(adapter, TableName.of(this), key) if incremental else None
    plan = plan_changes(str(upstream), incremental, recorded, parents, head)
    invocation = _invocation_id()
    if plan.lost is not None:
        _lost(adapter, str(upstream), plan, mode, node_id, invocation)
    if node_id:
        with _LOCK:
            _READS.add((invocation, node_id))
        if plan.end is not None:
            lineage.add_node_entries(invocation, node_id, {key: str(plan.end)})
    # In an audited run, an upstream this run wrote is read on the run's branch, its head.
    on_branch = branch is not None and head is not None and head == branch_head
    if plan.kind == "range":
        assert plan.start is not None and plan.end is not None
        between = ancestors(parents, plan.end) - ancestors(parents, plan.start)
        return rows.range_rows(
            adapter,
            upstream,
            plan.start,
            plan.end,
            f"__dbt_lakehouse_changes_{_digest(node_id, upstream)}",
            apart=on_branch,
            diff=bool(between & with_deletes),
        )
    return rows.everything_sql(
        upstream.sql_name, plan.end, pin=not on_branch, empty=plan.kind == "nothing"
    )


def rebuilds(node_id: str) -> bool:
    """Whether the node's table is rebuilt on this run, its upstream changes lost."""
    with _LOCK:
        return (_invocation_id(), node_id) in _REBUILD


def reads_changes(node_id: str) -> bool:
    with _LOCK:
        return (_invocation_id(), node_id) in _READS


def applied_columns(node_id: str, column_names: list[str]) -> list[str]:
    """The changelog columns among a model's, when it reads changes and its rows carry
    `_change_type`: the materialization applies them and writes the other columns."""
    key = (_invocation_id(), node_id)
    names = {name.lower() for name in column_names}
    with _LOCK:
        if key not in _READS or "_change_type" not in names:
            _APPLIES.discard(key)
            return []
        _APPLIES.add(key)
    return [name for name in CHANGE_COLUMNS if name in names]


def merge_default(node_id: str, name: str) -> Any:
    """A merge setting's value for a model applying changelog rows, when it sets none."""
    with _LOCK:
        applies = (_invocation_id(), node_id) in _APPLIES
    return MERGE_DEFAULTS.get(name) if applies else None


def _lost(
    adapter: LakehouseAdapter,
    upstream: str,
    plan: ChangesPlan,
    mode: str,
    node_id: str | None,
    invocation: str,
) -> None:
    if mode == "fail":
        raise LostChangesError(
            f"lakehouse.changes({upstream}): {plan.lost}, so the changes since then cannot be "
            "read. Nothing was written. Fix: run the model with --full-refresh to rebuild it "
            "from the whole upstream, or set on_lost_changes: full to do that by itself."
        )
    logger.warning(
        f"lakehouse.changes({upstream}): {plan.lost}; reading the whole upstream and "
        "rebuilding the model's table (on_lost_changes: full)."
    )
    if node_id:
        with _LOCK:
            _REBUILD.add((invocation, node_id))


def _invocation_id() -> str:
    from dbt_common.invocation import get_invocation_id

    return str(get_invocation_id())


def _digest(node_id: str | None, upstream: TableName) -> str:
    return hashlib.sha1(f"{node_id}|{upstream}".encode()).hexdigest()[:12]


def _history(
    adapter: LakehouseAdapter, table: TableName, branch: str | None
) -> tuple[dict[int, int | None], int | None, int | None, set[int]]:
    """The upstream's snapshots (id -> parent), the head read (the audited run's branch when
    the upstream has it: this run wrote it, and its readers read the branch; else main), the
    branch's head (None: no such branch), and the snapshots with live delete files."""
    try:
        found = adapter._metadata_rows(
            f"select snapshot_id, parent_id, summary['total-delete-files'] "
            f"from {table.sql_name}.snapshots"
        )
        refs = dict(
            (str(r[0]), int(r[1]))
            for r in adapter._metadata_rows(f"select name, snapshot_id from {table.sql_name}.refs")
        )
    except (RelationMissingError, NamespaceMissingError) as exc:
        raise DbtRuntimeError(
            f"lakehouse.changes: table {table} does not exist (or is a view, which has no "
            "snapshots). Fix: build the upstream table before the model that reads its changes."
        ) from exc
    parents = {int(r[0]): (None if r[1] is None else int(r[1])) for r in found}
    with_deletes = {int(r[0]) for r in found if r[2] not in (None, "", "0")}
    branch_head = refs.get(branch) if branch else None
    head = branch_head if branch_head is not None else refs.get("main")
    return parents, head, branch_head, with_deletes


def _recorded(adapter: LakehouseAdapter, target: TableName, key: str) -> int | None:
    try:
        rows = adapter._metadata_rows(
            f"select snapshot_id, parent_id, summary[{string_literal(key)}] "
            f"from {target.sql_name}.snapshots"
        )
        heads = adapter._metadata_rows(
            f"select snapshot_id from {target.sql_name}.refs where name = 'main'"
        )
    except (RelationMissingError, NamespaceMissingError):
        return None
    parents = {int(r[0]): (None if r[1] is None else int(r[1])) for r in rows}
    records = {int(r[0]): r[2] for r in rows if r[2]}
    return recorded_snapshot(parents, records, int(heads[0][0]) if heads else None)
