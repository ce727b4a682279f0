"""What the `table` materialization asks before it builds (through impl.py): reuse the table
as it is, or build it, recording in the build's own commit what it was built from.

The record is the materialized view's (mv/state.py), under `lakehouse.build.`: the statement's
shape and the query's plan digest (reuse/inputs.py), the watched settings, and each input
table's `main` snapshot and columns. It rides on the commit that writes the rows (commit
lineage), so a table's `main` holds its rows and their record together or neither; a rollback,
another writer or a compaction-free commit by anyone else leaves no record on `main`'s rows and
the next run builds.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import prepared
from dbt.adapters.lakehouse.iceberg import lineage
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv import metadata
from dbt.adapters.lakehouse.mv.state import (
    BUILD_PREFIX,
    SQL_CHANGED,
    RefreshPlan,
    UpstreamState,
    built_entries,
    plan_refresh,
    record_properties,
    recorded_of,
    rows_commit,
)
from dbt.adapters.lakehouse.reuse import memo, test_store
from dbt.adapters.lakehouse.reuse.inputs import PlanInputs
from dbt.adapters.lakehouse.reuse.plan import (
    INCREMENTAL_SETTINGS,
    SNAPSHOT_SETTINGS,
    Switch,
    also_watched,
    build_reasons,
    seed_identity,
    statement_shape,
    switch,
)
from dbt.adapters.lakehouse.reuse.session_state import kept_conf
from dbt.adapters.lakehouse.reuse.status import mark_reused_results
from dbt.adapters.lakehouse.reuse.tracked import tracked_inputs
from dbt.adapters.lakehouse.reuse.verdicts import record_verdict

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


def reuse_plan(
    adapter: LakehouseAdapter,
    relation: Any,
    existing: Any,
    query: str,
    statement: str,
    model: Any,
    full_refresh: bool,
    has_hooks: bool,
    settings: tuple[str, ...] = (),
    mode: str | None = None,
) -> dict[str, Any]:
    """{reuse: bool, reason: str} for a model written by one statement over `query` (a table,
    an incremental model, a snapshot). When the node is built, its build's commits carry the
    record (when reuse applies to it at all). `settings`: the node kind's own watched configs.
    `mode`: an incremental model's `full` build or `incremental` run; its query reads its own
    table then, whose state is the record on its `main`."""

    analysed: list[tuple[Any, PlanInputs]] = []

    def identify(spark: Any, read: metadata.Reader, target: TableName) -> Identity | str:
        has_table = existing is not None and not existing.is_view and not full_refresh
        reads_itself = mode == INCREMENTAL_RUN
        tracked = tracked_inputs(adapter, spark, read, query, target, reads_itself, has_table)
        if isinstance(tracked, str):
            return tracked
        inputs, states = tracked
        analysed.append((spark, inputs))
        shape = statement_shape(statement, query)
        text = (shape, f"-- plan {inputs.digest}", also_watched(model, settings))
        return Identity(states, "\n".join(text), {MODE: mode} if mode else {}, inputs.objects)

    def known() -> Known:
        return (mode, query, statement, settings, also_watched(model, settings)), (query, statement)

    decided = _decide(adapter, relation, existing, model, full_refresh, has_hooks, identify, known)
    if analysed and statement and not decided["reuse"] and not has_hooks:
        # Its CREATE TABLE, the thread's next statement, runs over this analysis.
        spark, inputs = analysed[0]
        if inputs.frame is not None and inputs.query.strip() == query.strip():
            prepared.keep_for_write(spark, statement, query, inputs.frame)
    return decided


def seed_plan(
    adapter: LakehouseAdapter,
    relation: Any,
    existing: Any,
    model: Any,
    full_refresh: bool,
    has_hooks: bool,
) -> dict[str, Any]:
    """{reuse: bool, reason: str} for a seed: its CSV's content and the settings that shape its
    rows are what its build recorded."""

    identity = functools.cache(lambda: seed_identity(model))  # a large CSV is read to hash it

    def identify(spark: Any, read: metadata.Reader, target: TableName) -> Identity | str:
        return Identity([], identity(), objects=())

    def known() -> Known:
        return ("seed", identity()), ()

    return _decide(adapter, relation, existing, model, full_refresh, has_hooks, identify, known)


@dataclass(frozen=True)
class Identity:
    """What a node is built from: its input tables now, the text standing for the rest, and
    entries its record carries beside them (an incremental model's mode)."""

    states: list[UpstreamState]
    text: str
    extra: dict[str, str] = field(default_factory=dict)
    # The catalog objects its query's analysis resolved (None: not all could be told).
    objects: tuple[TableName, ...] | None = None


# What a decision reads besides the catalog (reuse/memo.py's key), and the SQL it runs.
Known = tuple[tuple[Any, ...], tuple[str, ...]]
# An incremental model's record says which of its two queries built it: its first build's (or
# a --full-refresh's) query differs from its incremental runs' (the is_incremental() branch).
MODE = BUILD_PREFIX + "mode"
INCREMENTAL_RUN = "incremental"
# Each kind of node reuse_plan decides for: (its own watched settings, its record's mode).
KINDS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "table": ((), None),
    "full": (INCREMENTAL_SETTINGS, "full"),
    INCREMENTAL_RUN: (INCREMENTAL_SETTINGS, INCREMENTAL_RUN),
    "snapshot": (SNAPSHOT_SETTINGS, None),
}


def audited_refusal(spark: Any) -> str | None:
    """Why nothing is reused in an audited run (views too): its inputs are on its branch, and
    every node's own statement is what the audit checks before publishing."""
    branch = kept_conf(spark, lineage.WAP_BRANCH_CONF)
    return f"an audited run (branch {branch})" if branch else None


def session_refusal(spark: Any) -> str | None:
    """Why no node is reused in this session (data tests ask it too, reuse/tests.py): an
    audited run, whose inputs are on its branch, or commits that carry no record (a Spark
    Connect session that cannot be cloned); None when neither."""
    audited = audited_refusal(spark)
    if audited:
        return audited
    lineage_off = lineage.lineage_off_reason(spark)
    if lineage_off:
        return f"this session's commits carry no record ({lineage_off})"
    return None


def _decide(
    adapter: LakehouseAdapter,
    relation: Any,
    existing: Any,
    model: Any,
    full_refresh: bool,
    has_hooks: bool,
    identify: Callable[[Any, metadata.Reader, TableName], Identity | str],
    known: Callable[[], Known],
) -> dict[str, Any]:
    invocation, node_id, config = node_of(model)
    refused = refusal(adapter, model, has_hooks)
    if refused is not None:
        return refused
    target = TableName.of(relation)
    attempt = None
    if existing is not None and not existing.is_view and not full_refresh:
        parts, texts = known()
        found = memo.recall(
            adapter, target.catalog, model, str(target), (*parts, existing.type), texts
        )
        if isinstance(found, memo.Remembered):
            return remembered(invocation, node_id, found.reason)
        attempt = found
    with adapter._spark_session(f"decide whether {target} is reused") as spark:
        why = session_refusal(spark)
        if why is not None:
            return built(invocation, node_id, f"not reusable: {why}")
        prefetch_test_results(adapter, spark, invocation, target.catalog)
        read = metadata.reader(spark, adapter._metadata_rows)
        identity = identify(spark, read, target)
    if isinstance(identity, str):
        return built(invocation, node_id, f"not reusable: {identity}")
    entries, altered = None, None
    if existing is not None and not existing.is_view and not full_refresh:
        entries, altered = _built_record(read(target))
    record = None if entries is None else recorded_of(entries, BUILD_PREFIX)
    states = identity.states
    plan = plan_refresh(record, states, [], identity.text, config, full_refresh, check_built=False)
    if plan.action == "noop" and altered:
        plan = RefreshPlan("rebuild", (altered,))
    if plan.action != "create" and entries and entries.get(MODE) != identity.extra.get(MODE):
        # Another of its two queries built it (a full build, an incremental run): built, even
        # when the two read alike (no is_incremental() branch), as docs/reuse.md says.
        plan = _first_incremental_run(plan if plan.action == "rebuild" else RefreshPlan("rebuild"))
    if plan.action == "noop":
        reason = "nothing it reads moved; its query and settings are unchanged"
        record_verdict(invocation, node_id, True, reason)
        logger.debug(f"{node_id}: reused: {reason}")
        if attempt is not None:
            attempt.remember(memo.objects_of((target,), identity.objects), reason)
        return {"reuse": True, "reason": reason}
    built_at = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record_entries = record_properties(states, identity.text, config, built_at, BUILD_PREFIX)
    lineage.add_node_entries(invocation, node_id, {**record_entries, **identity.extra})
    return built(invocation, node_id, "--full-refresh" if full_refresh else build_reasons(plan))


def prefetch_test_results(
    adapter: LakehouseAdapter, spark: Any, invocation: str, catalog: str
) -> None:
    """A command that runs data tests reads their results' store before the first test needs
    it; one that selected none (`build --resource-type model`) does not."""
    from dbt.flags import get_flags

    from dbt import selected_resources

    if str(getattr(get_flags(), "WHICH", "")) not in test_store.TESTING_COMMANDS:
        return
    if not any(str(node).startswith("test.") for node in selected_resources.SELECTED_RESOURCES):
        return
    test_store.prefetch(spark, invocation, catalog)


def _first_incremental_run(plan: RefreshPlan) -> RefreshPlan:
    """An incremental model's first incremental run after a full build runs its other query:
    said as such, not as an edit (its inputs' moves are still said)."""
    others = tuple(r for r in plan.reasons if r != SQL_CHANGED)
    return RefreshPlan("rebuild", (FIRST_INCREMENTAL_RUN, *others), plan.config_changed)


# Its query then differs from the full build's (is_incremental()), so an edit cannot be told.
FIRST_INCREMENTAL_RUN = (
    "its first incremental run since a full build (or its query or settings changed)"
)


def _built_record(found: metadata.TableMetadata) -> tuple[Mapping[str, str] | None, str | None]:
    """The record entries of the build whose rows the table's `main` holds, and why its table
    is not as that build left it when its columns were altered since (an ALTER commits no
    snapshot)."""
    history = {k: (s.parent, s.operation, s.entries) for k, s in found.snapshots.items()}
    entries = built_entries(history, found.main, BUILD_PREFIX)
    commit = rows_commit(history, found.main, BUILD_PREFIX)
    if not entries or commit is None:
        return None, None
    built = found.snapshots[commit]
    columns = getattr(found, "schema_columns", {})
    now = columns.get(getattr(found, "current_schema_id", None))
    if now is None or now != columns.get(built.schema_id):
        return entries, (
            "its table's columns are not those its last build wrote (altered since, or not "
            "readable here)"
        )
    return entries, None


def node_of(model: Any) -> tuple[str, str, Any]:
    """(this invocation's id, the node's unique id, its config)."""
    from dbt_common.invocation import get_invocation_id

    return str(get_invocation_id()), str(model["unique_id"]), model["config"]


def switch_of(adapter: LakehouseAdapter, model: Any) -> Switch:
    """The node's switch: its config, the profile's `reuse`, LAKEHOUSE_REUSE."""
    return switch(model["config"].get("reuse"), adapter.config.credentials.reuse, os.environ)


def refusal(adapter: LakehouseAdapter, model: Any, has_hooks: bool) -> dict[str, Any] | None:
    """The build verdict of a node reuse does not apply to (the switches, a Python model, hooks);
    None when it applies, and dbt's `reused` status is then set for the run's reused nodes."""
    invocation, node_id, config = node_of(model)
    decided = switch_of(adapter, model)
    if not decided.on:
        if decided.why_off:
            return built(invocation, node_id, f"not reusable: {decided.why_off}")
        return {"reuse": False, "reason": ""}
    mark_reused_results()
    if _building_empty():
        # Its rows are none, not a build's: recording them would let the next run reuse an
        # empty seed (a model's query under --empty differs, a seed's content does not).
        return built(invocation, node_id, "not reusable: --empty (the run builds no rows)")
    if model.get("language") == "python":
        why = "a Python model (its rows are whatever its code returns)"
        return built(invocation, node_id, f"not reusable: {why}")
    if has_hooks and config.get("reuse") is not True:
        why = "it has pre- or post-hooks (set reuse: true on it to reuse it anyway)"
        return built(invocation, node_id, f"not reusable: {why}")
    return None


def _building_empty() -> bool:
    from dbt.flags import get_flags

    return bool(getattr(get_flags(), "EMPTY", False))


def remembered(invocation: str, node_id: str, reason: str) -> dict[str, Any]:
    """A node reused as its remembered decision says (memo.py): no Spark call was made."""
    record_verdict(invocation, node_id, True, reason)
    logger.debug(f"{node_id}: reused: {reason} (remembered: every object it reads is unchanged)")
    return {"reuse": True, "reason": reason}


def built(invocation: str, node_id: str, reason: str) -> dict[str, Any]:
    record_verdict(invocation, node_id, False, reason)
    logger.debug(f"{node_id}: built: {reason}")
    return {"reuse": False, "reason": reason}
