"""What the `materialized_view` materialization and `lakehouse.mv_status` call (through impl.py):
a refresh plan from the view's record and its upstreams' `main`, the record to write, the
relation type of a listed view, and a view's freshness as rows."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg import lineage
from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal
from dbt.adapters.lakehouse.mv import aggregate, freshness, incremental, metadata, reading
from dbt.adapters.lakehouse.mv.state import (
    CONFIG_HASH,
    CONFIGURATION_CHANGE_MODES,
    WATCHED_CONFIGS,
    Recorded,
    RefreshPlan,
    UpstreamState,
    plan_refresh,
    properties_of,
    record_properties,
    stale_properties,
)
from dbt.adapters.lakehouse.reuse.session_state import kept_conf

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")

MATERIALIZED = "materialized_view"


def refresh_plan(
    adapter: LakehouseAdapter,
    relation: Any,
    existing: Any,
    upstreams: list[Any],
    untracked: list[str],
    sql: str,
    config: dict[str, Any],
    full_refresh: bool,
    on_change: str | None,
    node_id: str,
) -> dict[str, Any]:
    """What this run does to the view `relation`, as the materialization reads it:
    `action` (create, rebuild, overwrite, noop, skip), `message` for the log, `properties` to
    write with the rows, and `unset`: recorded upstreams the view no longer reads."""
    mode = (on_change or "apply").lower()
    if mode not in CONFIGURATION_CHANGE_MODES:
        raise DbtRuntimeError(
            f"on_configuration_change {on_change!r} is not supported. Accepted: "
            f"{', '.join(CONFIGURATION_CHANGE_MODES)}."
        )
    # Checked on every run, not only when a GROUP BY is folded in: a typo fails at once.
    regroup_max_bytes = aggregate.regroup_max_bytes(config.get("mv_regroup_max_bytes"))
    target = TableName.of(relation)
    query = adapter._metadata_rows
    with adapter._spark_session(f"plan the refresh of {target}") as spark:
        branch = kept_conf(spark, lineage.WAP_BRANCH_CONF)
        # Without lineage (Spark Connect) the rows' commit cannot carry the record.
        tokens = lineage.lineage_off_reason(spark) is None
        read = metadata.reader(spark, query)
    if branch:
        # Its upstreams' rows in this run are on the branch, not main, and table properties are
        # not branched: a view built here would record one state and hold another.
        return _plan_dict(
            "skip",
            f"materialized view {target} is not refreshed in an audited run (branch {branch}): "
            "it refreshes from main on the next run that is not audited",
        )
    record: Recorded | None = None
    mirror: Recorded | None = None
    built = None
    if existing is not None and not existing.is_view:
        if tokens:
            # The record committed with the rows `main` holds; the properties mirror it.
            trusted, mirror = reading.view_record(read, target)
            record = trusted if trusted.is_view else mirror
            built = trusted.refreshed_at
        else:
            record = reading.recorded(query, target)
    states, untracked = _upstream_states(query, read, upstreams, list(untracked))
    plan = plan_refresh(record, states, untracked, sql, config, full_refresh, built, tokens)
    if plan.config_changed and plan.action != "create" and not full_refresh:
        # Named as dbt renders the relation, as dbt's own message does.
        plan = _configuration_change(plan, mode, str(relation))
    if plan.action == "noop" and record is not None and mirror is not None:
        lagging = _mirror_repair(record, mirror)
        if lagging:
            message = (
                f"{_message(target, plan)}; its table properties did not mirror the record "
                "committed with its rows: rewritten"
            )
            return {**_plan_dict("noop", message, *lagging), "mirror": True}
    extra: dict[str, str] = {}
    if plan.action == "rebuild" and plan.appendable and not tokens:
        # The rows' commit cannot carry the record here, and a refresh in two commits could
        # leave the record claiming rows the view does not hold: rebuild in one.
        plan = RefreshPlan(
            "rebuild", (*plan.reasons, "not incremental: this session's commits carry no record")
        )
    if plan.action == "rebuild" and plan.appendable and not plan.config_changed and record:
        found = _appended(
            adapter,
            read,
            plan.appendable,
            upstreams,
            record,
            states,
            sql,
            node_id,
            relation,
            regroup_max_bytes,
        )
        if isinstance(found, str):
            plan = RefreshPlan("rebuild", (*plan.reasons, f"not incremental: {found}"))
        else:
            extra = {"sql": found["sql"], "view": found["view"]}
            plan = RefreshPlan(found["kind"], (*plan.reasons, "every commit since was an append"))
    refreshed_at = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    properties = record_properties(states, sql, config, refreshed_at)
    if plan.action == "overwrite" and record is not None and record.config_hash is not None:
        properties[CONFIG_HASH] = record.config_hash  # continue: the old settings stay
    # What the properties hold: the mirror, or the record itself without lineage.
    shown = mirror if mirror is not None and mirror.is_view else record
    unset = stale_properties(shown, states) if shown is not None else []
    if tokens and plan.action not in ("noop", "skip"):
        # The rows' commit carries the whole record (state.py says why): lineage adds it to
        # every commit of this node from now on in this invocation.
        lineage.add_node_entries(_invocation_id(), node_id, properties)
    return {**_plan_dict(plan.action, _message(target, plan), properties, unset), **extra}


def _appended(
    adapter: LakehouseAdapter,
    read: metadata.Reader,
    name: str,
    upstreams: list[Any],
    record: Recorded,
    states: list[UpstreamState],
    sql: str,
    node_id: str,
    target: Any,
    regroup_max_bytes: int,
) -> dict[str, str] | str:
    """{kind, sql, view} of an incremental refresh (`append`: rows to insert; `merge`: the
    statement folding the aggregate in) when incremental.py proves it exact, else why not."""
    upstream = next(u for u in upstreams if str(TableName.of(u)) == name)
    start, end = record.upstreams[name], next(s.snapshot_id for s in states if s.name == name)
    if start is None or end is None:
        return f"{name} had no snapshot"
    unchanged = {s.name for s in states if s.name != name}
    history = read(TableName.of(upstream)).snapshots
    # The view's size at main picks how a GROUP BY is folded in (aggregate.fold_sql).
    view = read(TableName.of(target))
    head = view.snapshots.get(view.main) if view.main is not None else None
    view_bytes = head.total_bytes if head is not None else None
    found = incremental.appended_rows_sql(
        adapter,
        sql,
        upstream,
        history,
        start,
        end,
        node_id,
        str(target),
        unchanged,
        (view_bytes, regroup_max_bytes),
    )
    return (
        found if isinstance(found, str) else {"kind": found[0], "sql": found[1], "view": found[2]}
    )


def _mirror_repair(record: Recorded, mirror: Recorded) -> tuple[dict[str, str], list[str]] | None:
    """(properties to set, keys to unset) when the properties do not mirror the record of the
    build `main` holds (the write after its commit failed, or the table was rolled back)."""
    wanted, shown = properties_of(record), properties_of(mirror)
    if wanted == shown:
        return None
    return wanted, [key for key in shown if key not in wanted]


def _invocation_id() -> str:
    from dbt_common.invocation import get_invocation_id

    return str(get_invocation_id())


def _configuration_change(plan: RefreshPlan, mode: str, target: str) -> RefreshPlan:
    # dbt's own wording for on_configuration_change, so its users find it.
    watched = ", ".join(WATCHED_CONFIGS)
    if mode == "fail":
        raise DbtRuntimeError(
            f"Configuration changes were identified and `on_configuration_change` was set to "
            f"`fail` for `{target}` (watched: {watched}). Nothing was written. Fix: set "
            "on_configuration_change to apply, or run with --full-refresh."
        )
    if mode == "continue":
        logger.warning(
            f"Configuration changes were identified and `on_configuration_change` was set to "
            f"`continue` for `{target}`: refreshed with its current settings (watched: {watched})"
        )
        if plan.action == "rebuild":
            return RefreshPlan("overwrite", plan.reasons, True)
        return plan
    if plan.action == "noop":
        return RefreshPlan(
            "rebuild", ("its configuration changed (on_configuration_change: apply)",), True
        )
    return plan


def _upstream_states(
    query: reading.Query, read: metadata.Reader, upstreams: list[Any], untracked: list[str]
) -> tuple[list[UpstreamState], list[str]]:
    states: list[UpstreamState] = []
    for upstream in upstreams:
        table = TableName.of(upstream)
        try:
            states.append(reading.upstream_state(query, read, table))
        except (RelationMissingError, NamespaceMissingError):
            # A view has no snapshots; a missing table fails the query itself, naming it.
            untracked.append(str(table))
    return states, untracked


def _message(target: TableName, plan: RefreshPlan) -> str:
    if plan.action == "noop":
        return (
            f"materialized view {target} is fresh: no upstream's main moved, its SQL and settings "
            "are unchanged; nothing refreshed (only metadata was read, no Spark job read data)"
        )
    return f"materialized view {target}: {plan.action} ({'; '.join(plan.reasons)})"


def _plan_dict(
    action: str,
    message: str,
    properties: dict[str, str] | None = None,
    unset: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "action": action,
        "message": message,
        "properties": properties or {},
        "unset": unset or [],
    }


def mark_materialized_views(adapter: LakehouseAdapter, relations: list[Any]) -> list[Any]:
    """Listed tables that are materialized views, typed so (dbt's cache, get_relation, docs).

    Only tables a materialized_view model of the project names are checked (one properties
    read each), so listing a namespace stays one catalog call for every other table."""
    names = _view_names(adapter)
    if not names:
        return relations
    marked: list[Any] = []
    for relation in relations:
        key = (str(relation.schema).lower(), str(relation.identifier).lower())
        if relation.type == RelationType.Table and key in names:
            try:
                record = reading.recorded(adapter._metadata_rows, TableName.of(relation))
            except (RelationMissingError, NamespaceMissingError):
                record = Recorded()
            if record.is_view:
                relation = relation.incorporate(type=RelationType.MaterializedView)
        marked.append(relation)
    return marked


def _view_names(adapter: LakehouseAdapter) -> set[tuple[str, str]]:
    manifest = adapter.get_macro_resolver()
    nodes = getattr(manifest, "nodes", None) or {}
    return {
        (str(node.schema).lower(), str(node.alias or node.name).lower())
        for node in nodes.values()
        if getattr(getattr(node, "config", None), "materialized", None) == MATERIALIZED
    }


def check_freshness(value: Any, model: str) -> str:
    """A materialized_view model's `mv_freshness`, refused when the run starts if malformed
    (else a typo would surface only in `mv_status` or `mv status`, long after)."""
    try:
        freshness.parse(value)
    except ValueError as exc:
        raise DbtRuntimeError(f"materialized_view model '{model}': {exc}") from exc
    return ""


def _view_config(adapter: LakehouseAdapter, relation: Any) -> Any:
    """The config of the project's materialized_view model that builds `relation` (its
    `mv_freshness`), or None when no model of the project does."""
    nodes = getattr(adapter.get_macro_resolver(), "nodes", None) or {}
    key = (str(relation.schema).lower(), str(relation.identifier).lower())
    for node in nodes.values():
        config = getattr(node, "config", None)
        if getattr(config, "materialized", None) != MATERIALIZED:
            continue
        if (str(node.schema).lower(), str(node.alias or node.name).lower()) == key:
            return config
    return None


STATUS_COLUMNS = (
    "upstream",
    "status",
    "recorded_snapshot",
    "current_snapshot",
    "snapshots_behind",
    "moved_since",
    "note",
    "refreshed_at",
    "freshness",
)


def status_sql(adapter: LakehouseAdapter, relation: Any, execute: bool) -> str:
    """`lakehouse.mv_status(ref(...))`: one row per upstream of the view, as a subquery."""
    empty = (
        "(select "
        + ", ".join(f"{_literal(None, c)} as {c}" for c in STATUS_COLUMNS)
        + " where false)"
    )
    if not execute:
        return empty
    table = TableName.of(relation)
    try:
        with adapter._spark_session(f"read the metadata of {table}") as spark:
            read = metadata.reader(spark, adapter._metadata_rows)
        record, statuses = reading.view_status(adapter._metadata_rows, read, table)
    except (RelationMissingError, NamespaceMissingError) as exc:
        raise DbtRuntimeError(f"lakehouse.mv_status: {table} does not exist.") from exc
    if not record.is_view:
        raise DbtRuntimeError(
            f"lakehouse.mv_status: {table} is not a materialized view (it has no "
            "lakehouse.mv.sql_hash property). Build it with materialized: materialized_view."
        )
    if not statuses:
        return empty
    try:
        threshold = freshness.of_config(_view_config(adapter, relation))
    except ValueError as exc:
        raise DbtRuntimeError(f"lakehouse.mv_status: {table}: {exc}") from exc
    now_ms = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    rows = []
    for s in statuses:
        # Each upstream judged alone: the view's own level is the worst of its rows.
        judged = freshness.judge(threshold, [s], record.refreshed_at, now_ms)
        values = (
            s.name,
            "fresh" if s.fresh else "stale",
            s.recorded,
            s.current,
            s.behind,
            s.since,
            s.note or None,
            record.refreshed_at,
            judged.level,
        )
        rows.append(
            "("
            + ", ".join(_literal(v, c) for v, c in zip(values, STATUS_COLUMNS, strict=True))
            + ")"
        )
    return f"(select * from values {', '.join(rows)} as mv_status({', '.join(STATUS_COLUMNS)}))"


_NUMBERS = ("recorded_snapshot", "current_snapshot", "snapshots_behind")


def _literal(value: Any, column: str) -> str:
    # Typed in every row, so a column that is NULL in one row and set in another is one type.
    kind = "bigint" if column in _NUMBERS else "string"
    text = (
        "null"
        if value is None
        else (str(value) if kind == "bigint" else string_literal(str(value)))
    )
    return f"cast({text} as {kind})"
