"""Views reused: `CREATE OR REPLACE VIEW` skipped when the view already holds this definition.

A view holds no rows, so only what its statement would store matters, not whether its tables
moved nor what the views it reads mean: its query's text as the view stores it, the columns the
query returns (names, types, comments: an upstream's new column under `select *` is a new
definition), the catalog and namespace its names resolve in, and the settings the view statement
and its grants carry (reuse/plan.py view_definition), kept as a digest in the view's own property
`lakehouse.build.view` when it is created. An equal digest on the view there now: reused.

The query is analysed over this run's stand-ins (reuse/stand_ins.py), and what it reads is
recorded for the readers of the view's own stand-in, so no decision analyses a stack of views
twice."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.checkpoints.catalog_views import stored_property
from dbt.adapters.lakehouse.checkpoints.registry import compute_read, with_checkpoints
from dbt.adapters.lakehouse.engine import prepared, runtime
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.state import BUILD_PREFIX
from dbt.adapters.lakehouse.reuse import memo
from dbt.adapters.lakehouse.reuse.adapter import (
    audited_refusal,
    built,
    node_of,
    prefetch_test_results,
    refusal,
    remembered,
)
from dbt.adapters.lakehouse.reuse.inputs import PlanInputs, node_inputs
from dbt.adapters.lakehouse.reuse.plan import also_watched, view_definition
from dbt.adapters.lakehouse.reuse.session_state import name_context
from dbt.adapters.lakehouse.reuse.stand_ins import remember
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
    invocation, node_id, _ = node_of(model)
    prepared.forget_stand_in()  # another view's, whose stand-in was never made
    refused = refusal(adapter, model, has_hooks)
    if refused is not None:
        return refused
    target = TableName.of(relation)
    attempt = None
    if existing is not None and existing.is_view and not full_refresh:
        parts = ("view", query, also_watched(model), existing.type)
        found = memo.recall(adapter, target.catalog, model, str(target), parts, (query,))
        if isinstance(found, memo.Remembered):
            if found.inputs is not None:  # what the readers of its stand-in take as its reads
                remember(str(relation), restored(found.inputs))
            return remembered(invocation, node_id, found.reason)
        attempt = found
    objects = inputs = None
    with adapter._spark_session(f"decide whether view {target} is reused") as spark:
        audited = audited_refusal(spark)
        if audited:
            return built(invocation, node_id, f"not reusable: {audited}")
        # A test of this view decided in full reads the tests' store: read meanwhile.
        prefetch_test_results(adapter, spark, invocation, target.catalog)
        if runtime.is_connect(spark):  # the plan is not readable from a client: columns only
            analysed = with_checkpoints(query, shapes=True)
            compute_read(analysed, spark)  # the shapes it reads, made where not yet
            frame = runtime.query_frame(spark, analysed)  # its schema: one round trip
        else:
            inputs = node_inputs(spark, query)
            objects = memo.objects_of((target,), inputs.objects)
            # a reader of its stand-in watches the view too (its definition may change)
            inputs = replace(inputs, objects=objects)
            remember(str(relation), inputs)
            analysed, frame = inputs.query, inputs.frame
        # The view's stand-in, made after its statement, reads this same query (no second
        # analysis of a stack of views).
        prepared.keep_for_stand_in(spark, analysed, frame)
        context = name_context(spark)
        definition = view_definition(query, frame.schema.json(), context, model)
    if full_refresh:
        why = "--full-refresh"
    elif existing is None or not existing.is_view:
        why = "no view there yet"
    elif _recorded(adapter, target) != definition:
        why = "its definition changed (or was not recorded)"
    else:
        reason = "the view already holds this definition"
        record_verdict(invocation, node_id, True, reason)
        if attempt is not None and inputs is not None:
            attempt.remember(objects, reason, inputs=kept(inputs))
        return {"reuse": True, "reason": reason}
    with _LOCK:  # taken by the view's CREATE statement (pending_definition)
        _PENDING[(invocation, node_id)] = definition
    return built(invocation, node_id, why)


def pending_definition(node_id: str) -> str | None:
    """The digest the node's CREATE VIEW records (None: reuse is off for it)."""
    from dbt_common.invocation import get_invocation_id

    with _LOCK:
        return _PENDING.pop((str(get_invocation_id()), node_id), None)


def _recorded(adapter: LakehouseAdapter, target: TableName) -> str | None:
    """The digest the view there records: through its Iceberg catalog where it can be, else
    SHOW TBLPROPERTIES."""
    with adapter._spark_session(f"read view {target}'s recorded definition") as spark:
        answered, recorded = stored_property(spark, target, VIEW_KEY)
    if answered:
        return recorded
    try:
        rows = adapter._metadata_rows(f"show tblproperties {target.sql_name}")
    except (RelationMissingError, NamespaceMissingError):
        return None
    return next((str(r[1]) for r in rows if str(r[0]) == VIEW_KEY), None)


def kept(inputs: PlanInputs) -> dict[str, Any]:
    """What a view's query reads, as its remembered decision keeps it, with what its decision
    watched (for its stand-in's readers' decisions to be remembered too)."""
    return {
        "tables": [_parts(t) for t in inputs.tables],
        "untracked": list(inputs.untracked),
        "varying": list(inputs.varying),
        "digest": inputs.digest,
        "objects": None if inputs.objects is None else [_parts(t) for t in inputs.objects],
    }


def restored(inputs: Mapping[str, Any]) -> PlanInputs:
    objects = inputs.get("objects")  # absent from an entry of an earlier version: unknown
    return PlanInputs(
        tuple(TableName(*t) for t in inputs["tables"]),
        tuple(inputs["untracked"]),
        tuple(inputs["varying"]),
        str(inputs["digest"]),
        objects=None if objects is None else tuple(TableName(*t) for t in objects),
    )


def _parts(name: TableName) -> list[str]:
    return [name.catalog, name.namespace, name.name]
