"""Data tests reused: a test whose query, settings and every table it reads are where they were
when it last ran returns that run's result (its failure count, warn and error flags) without
running its query (docs/reuse.md, "Data tests").

What decides it is a models' decision over another record: the plan digest of the test's whole
query (fail_calc, warn_if, error_if and limit are in it; views it reads are inlined, so a test
on a view reads the view's tables), the settings that shape its outcome, and each input's
`main` snapshot and columns (mv/reading.py `upstream_state`), recorded with the result in the
store of the test's catalog (reuse/test_store.py) and compared by mv/state.py's `plan_refresh`,
which also words why a test ran. The switches, the audited-run and Spark Connect refusals are
the models' (reuse/adapter.py).

Not reused: a test storing its failures (its failures table is written by every run; reusing
its result would leave a table from another run or none), a query whose rows may differ from
run to run (reuse/inputs.py), one reading anything but Iceberg tables of mounted catalogs.
Unit tests are not covered: their inputs are fixtures, and dbt's diff needs their rows.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import prepared
from dbt.adapters.lakehouse.mv import metadata
from dbt.adapters.lakehouse.mv.state import (
    BUILD_PREFIX,
    UpstreamState,
    plan_refresh,
    record_properties,
    recorded_of,
)
from dbt.adapters.lakehouse.report.response import LakehouseAdapterResponse
from dbt.adapters.lakehouse.reuse import memo, test_store
from dbt.adapters.lakehouse.reuse.adapter import (
    built,
    node_of,
    refusal,
    remembered,
    session_refusal,
)
from dbt.adapters.lakehouse.reuse.plan import build_reasons
from dbt.adapters.lakehouse.reuse.test_store import Row, Stored
from dbt.adapters.lakehouse.reuse.tracked import tracked_inputs
from dbt.adapters.lakehouse.reuse.verdicts import record_verdict, take_verdict

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")

# The test configs that shape its outcome. fail_calc, warn_if, error_if, limit and where are in
# its query's plan as well; severity only decides how dbt reads the flags, watched all the same
# so that a changed test visibly runs.
TEST_SETTINGS = (
    "severity", "fail_calc", "warn_if", "error_if", "limit", "where", "store_failures",
    "store_failures_as",
)  # fmt: skip
REUSED = "nothing it reads moved; its query and settings are unchanged"
NO_RECORD = "no recorded result"
STORES_FAILURES = (
    "it stores its failures (store_failures: its failures table is written by each run)"
)


def identity_text(digest: str, config: Mapping[str, Any], sql_header: str | None) -> str:
    """The text standing for the test's query and settings (its hash is recorded)."""
    settings: dict[str, Any] = {key: config.get(key) for key in TEST_SETTINGS}
    settings["sql_header"] = sql_header or None
    return f"-- plan {digest}\n-- settings " + json.dumps(settings, sort_keys=True, default=str)


def verdict_of(
    stored: Stored | None, states: Sequence[UpstreamState], identity: str
) -> tuple[bool, str]:
    """(reused, why) from the recorded result and what the test would read now."""
    if stored is None:
        return False, NO_RECORD
    record = recorded_of(stored.record, BUILD_PREFIX)
    if not record.is_view:  # no query hash: not a record of ours
        return False, NO_RECORD
    plan = plan_refresh(record, states, [], identity, {}, False, check_built=False)
    if plan.action == "noop":
        return True, REUSED
    return False, build_reasons(plan)


# The columns dbt's test runner reads from a test's one row, in order.
RESULT_COLUMNS = ("failures", "should_warn", "should_error")


def result_table(stored: Stored) -> Any:
    """The recorded result as the one-row table dbt's test runner reads (no statement runs)."""
    import agate

    row = [int(stored.failures), bool(stored.should_warn), bool(stored.should_error)]
    types = [agate.Number(), agate.Boolean(), agate.Boolean()]
    return agate.Table([row], list(RESULT_COLUMNS), types)


def result_of(columns: Sequence[str], values: Sequence[Any]) -> Stored:
    """The executed test's row (failures, should_warn, should_error) as dbt's runner reads it:
    a flag may come back as a boolean, a number or a string."""
    row = dict(zip((c.lower() for c in columns), values, strict=True))

    def flag(value: Any) -> bool:
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "t", "yes", "y", "on")
        return bool(value)

    failures = int(row["failures"] or 0)
    return Stored(failures, flag(row["should_warn"]), flag(row["should_error"]), {})


@dataclass(frozen=True)
class _Pending:
    """What an executed test's row will record, decided before it ran."""

    catalog: str
    relation: str
    record: Mapping[str, str]


_PENDING: dict[tuple[str, str], _Pending] = {}
_LOCK = threading.Lock()


def decide(
    adapter: LakehouseAdapter,
    model: Any,
    query: str,
    sql_header: str | None,
    stores_failures: bool,
) -> dict[str, Any]:
    """{reuse, reason, table}: `table` is the recorded result as the one-row table dbt reads,
    when reused. When the test runs, what it is run over is kept for its result's row
    (finish)."""
    invocation, node_id, config = node_of(model)
    refused = refusal(adapter, model, has_hooks=False)
    if refused is not None:
        return refused
    if stores_failures:
        return built(invocation, node_id, f"not reusable: {STORES_FAILURES}")
    catalog = str(model["database"])
    relation = ".".join(str(model[k]) for k in ("database", "schema", "alias"))
    texts = (query, sql_header or "")
    found = memo.recall(adapter, catalog, model, relation, ("test", query, sql_header), texts)
    if isinstance(found, memo.Remembered) and found.result is not None:
        table = result_table(Stored(*found.result, record={}))
        return {**remembered(invocation, node_id, found.reason), "table": table}
    attempt = found if isinstance(found, memo.Attempt) else None
    with adapter._spark_session(f"decide whether {node_id} is reused") as spark:
        why = session_refusal(spark)
        if why is not None:
            return built(invocation, node_id, f"not reusable: {why}")
        read = metadata.reader(spark, adapter._metadata_rows)
        tracked = tracked_inputs(adapter, spark, read, query, None)
        store_state = test_store.jvm_state(spark)
    if isinstance(tracked, str):
        return built(invocation, node_id, f"not reusable: {tracked}")
    inputs, states = tracked
    identity = identity_text(inputs.digest, config, sql_header)
    stored = test_store.recorded(
        adapter._metadata_rows, invocation, catalog, (node_id, relation), store_state
    )
    reused, reason = verdict_of(stored, states, identity)
    if reused and stored is not None:
        record_verdict(invocation, node_id, True, reason)
        logger.debug(f"{node_id}: reused: {reason}")
        if attempt is not None:
            result = (stored.failures, stored.should_warn, stored.should_error)
            attempt.remember(inputs.objects, reason, result)
        return {"reuse": True, "reason": reason, "table": result_table(stored)}
    if not sql_header:  # a header's statements run first, and may change what it means
        prepared.keep(spark, query, inputs.frame)
    ran_at = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record = record_properties(states, identity, {}, ran_at, BUILD_PREFIX)
    with _LOCK:
        _PENDING[(invocation, node_id)] = _Pending(catalog, relation, record)
    return built(invocation, node_id, reason)


def finish(model: Any, response: Any, table: Any, reused: bool, costs: Mapping[str, Any]) -> Any:
    """The test's response with its verdict (`reused`, `reuse_reason`) and `costs` (its Spark
    jobs and wall-time split, report/response.py); an executed test's result buffered for the
    store (written at the invocation's end)."""
    invocation, node_id, _ = node_of(model)
    prepared.forget()  # its statement ran (or never will): not for the thread's next node
    with _LOCK:
        pending = _PENDING.pop((invocation, node_id), None)
    if pending is not None and not reused and table is not None and len(table.rows) == 1:
        result = result_of(list(table.column_names), list(table.rows[0]))
        test_store.buffer(
            Row(
                pending.catalog,
                node_id,
                pending.relation,
                replace(result, record=pending.record),
                invocation,
                dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
            )
        )
    verdict = {**take_verdict(invocation, node_id), **costs}
    if not verdict:
        return response
    if hasattr(response, "reuse_reason"):
        return replace(response, **verdict)
    fields = {k: getattr(response, k) for k in ("_message", "code", "rows_affected", "query_id")}
    return LakehouseAdapterResponse(**fields, **verdict)


def forget_pending() -> None:
    """The invocation's end: what a test that failed before its result came back would have
    recorded is dropped."""
    with _LOCK:
        _PENDING.clear()
