"""How much of a node's plans ran natively (Comet, `engine: {native: comet}`), and why the rest
did not.

A session with Comet runs with Spark's `spark.sql.extendedExplainProviders` naming Comet's
`ExtendedExplainInfo` (engine/native.py), so the plan text Spark keeps for each SQL execution
in its status store (the one the Spark UI shows, updated when adaptive execution settles the
final plan) ends with Comet's own account: the plan with each operator that stayed on the JVM
marked `[COMET: <reason>]`, and `Comet accelerated N out of M eligible operators`. A node's SQL
executions are those its Spark jobs ran in (the status store maps a job to its execution):
a CTAS's nested write included, which the statement's own plan does not reach. Metadata only,
read when the node reports, and only in a session where Comet is on. Under Spark Connect, or
with Comet off, nothing is reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime

logger = AdapterLogger("Lakehouse")

COMET_SECTION = "== Extended Information (Comet) =="
_ACCELERATED = re.compile(r"Comet accelerated (\d+) out of (\d+) eligible operators")
# `+- Project [COMET: java_method is not supported]`; `[COMET-INFO: ...]` is advice, not a
# fallback.
_FALLBACK = re.compile(r"(\w+) \[COMET: (.*)\]\s*$")
_FALLBACKS_KEPT = 10  # a node's distinct reasons in its response, at most


@dataclass(frozen=True)
class NativeShare:
    operators: int  # operators Comet ran
    eligible: int  # operators Comet counts (writes among them: they stay on the JVM)
    fallbacks: tuple[str, ...]  # "<operator>: <Comet's reason>", distinct, in plan order

    def fields(self) -> dict[str, Any]:
        return {
            "operators": self.operators,
            "eligible": self.eligible,
            "fallbacks": list(self.fallbacks),
        }


def parse_share(description: str) -> NativeShare | None:
    """Comet's account of one plan, from the plan text; None when it has none."""
    start = description.find(COMET_SECTION)
    if start < 0:
        return None
    section = description[start + len(COMET_SECTION) :]
    counted = _ACCELERATED.search(section)
    if counted is None:
        return None
    reasons = [
        f"{m.group(1)}: {m.group(2).strip()}"
        for m in map(_FALLBACK.search, section[: counted.start()].splitlines())
        if m
    ]
    return NativeShare(int(counted.group(1)), int(counted.group(2)), tuple(reasons))


def summed(shares: Iterable[NativeShare]) -> NativeShare | None:
    """The node's plans together; None when none had Comet's account."""
    found = list(shares)
    if not found:
        return None
    reasons = dict.fromkeys(r for share in found for r in share.fallbacks)
    return NativeShare(
        sum(s.operators for s in found),
        sum(s.eligible for s in found),
        tuple(reasons)[:_FALLBACKS_KEPT],
    )


def comet_on(spark: Any) -> bool:
    """Whether this session asks for Comet: one conf read per node. (A plugin that did not
    start writes no account of its own, and then nothing is reported.)"""
    if runtime.is_connect(spark):
        return False
    try:
        return str(spark.conf.get("spark.comet.enabled", "false")).strip().lower() == "true"
    except Exception:  # a stopped session: nothing to say
        return False


def node_share(spark: Any, job_ids: Sequence[int]) -> NativeShare | None:
    """Comet's account of the plans the node's jobs ran in; None where Comet is off."""
    if not job_ids or not comet_on(spark):
        return None
    try:
        store = spark.sparkContext._jsc.sc().statusStore()
        sql_store = spark._jsparkSession.sharedState().statusStore()
        executions: dict[int, None] = {}
        for job_id in job_ids:
            execution = store.jobWithAssociatedSql(job_id)._2()
            if execution.isDefined():
                executions[int(execution.get())] = None
        shares = []
        for execution_id in executions:
            found = sql_store.execution(execution_id)
            if found.isDefined():
                share = parse_share(str(found.get().physicalPlanDescription()))
                if share is not None:
                    shares.append(share)
    except Exception as exc:  # the store evicted them, or the session is gone
        logger.debug(f"no native share read: {exc}")
        return None
    return summed(shares)
