"""Views reused: `CREATE OR REPLACE VIEW` skipped when the view already holds this definition.

A view holds no rows, so only its definition matters, not whether its tables moved or its query
is deterministic: the digest of the query's analyzed plan (reuse/inputs.py: the meaning of its
SQL and the columns of everything it reads, so an upstream's new column is a new definition),
the settings the view statement and its grants carry, kept in the view's own property
`lakehouse.build.view` when it is created. An equal digest on the view there now: reused."""

from __future__ import annotations

import hashlib
import os
import threading
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.state import BUILD_PREFIX
from dbt.adapters.lakehouse.reuse.inputs import plan_inputs
from dbt.adapters.lakehouse.reuse.plan import also_watched, switch
from dbt.adapters.lakehouse.reuse.status import mark_reused_results
from dbt.adapters.lakehouse.reuse.verdicts import record_verdict

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

VIEW_KEY = BUILD_PREFIX + "view"
# node -> the digest its CREATE VIEW is to carry (the create_view_as macro asks for it).
_PENDING: dict[tuple[str, str], str] = {}
_LOCK = threading.Lock()


def view_plan(
    adapter: LakehouseAdapter,
    relation: Any,
    existing: Any,
    query: str,
    model: Any,
    full_refresh: bool,
    has_hooks: bool,
) -> dict[str, Any]:
    """{reuse, reason} for a view model; when built, the digest its statement records."""
    from dbt_common.invocation import get_invocation_id

    node_id, config = str(model["unique_id"]), model["config"]
    invocation = str(get_invocation_id())
    decided = switch(config.get("reuse"), adapter.config.credentials.reuse, os.environ)
    if not decided.on:
        return _built(invocation, node_id, decided.why_off)
    mark_reused_results()
    if has_hooks and config.get("reuse") is not True:
        why = "it has pre- or post-hooks (set reuse: true on it to reuse it anyway)"
        return _built(invocation, node_id, f"not reusable: {why}")
    target = TableName.of(relation)
    with adapter._spark_session(f"decide whether view {target} is reused") as spark:
        if runtime.is_connect(spark):
            why = "Spark Connect (the query's plan is not readable from the client)"
            return _built(invocation, node_id, f"not reusable: {why}")
        digest = plan_inputs(spark, query).digest
    definition = hashlib.sha256(f"{digest}\n{also_watched(model)}".encode()).hexdigest()
    with _LOCK:
        _PENDING[(invocation, node_id)] = definition
    if full_refresh:
        return _built(invocation, node_id, "--full-refresh")
    if existing is None or not existing.is_view:
        return _built(invocation, node_id, "no view there yet")
    if _recorded(adapter, target) != definition:
        return _built(invocation, node_id, "its definition changed (or was not recorded)")
    reason = "the view already holds this definition"
    record_verdict(invocation, node_id, True, reason)
    return {"reuse": True, "reason": reason}


def pending_definition(node_id: str) -> str | None:
    """The digest the node's CREATE VIEW records (None: reuse is off for it)."""
    from dbt_common.invocation import get_invocation_id

    with _LOCK:
        return _PENDING.pop((str(get_invocation_id()), node_id), None)


def _recorded(adapter: LakehouseAdapter, target: TableName) -> str | None:
    try:
        rows = adapter._metadata_rows(f"show tblproperties {target.sql_name}")
    except (RelationMissingError, NamespaceMissingError):
        return None
    return next((str(r[1]) for r in rows if str(r[0]) == VIEW_KEY), None)


def _built(invocation: str, node_id: str, reason: str | None) -> dict[str, Any]:
    if reason:
        record_verdict(invocation, node_id, False, reason)
    return {"reuse": False, "reason": reason or ""}
