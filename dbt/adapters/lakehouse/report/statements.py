"""Each statement a node runs, timed for the node's wall-time split (timing.py says how).

The cursor starts a clock around each statement of a node whose materialization reports
(models, seeds, snapshots, and data tests through their reuse hook, reuse/tests.py): the
statement's start and end on this machine's clock, and its `QueryPlanningTracker` (the Spark
object that times its parsing, analysis, optimization and planning), kept as a reference and
read once, when the node reports: a query's tracker gains its optimization and planning when
its rows are fetched. That costs two py4j calls per statement and two more per statement at
the node's end. A Spark Connect client has no tracker to read: no clock runs and the split is
left out.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.report import work
from dbt.adapters.lakehouse.report.timing import StatementTime, parse_phases

logger = AdapterLogger("Lakehouse")
# The nodes whose materialization reports its costs: node_response (macros/materializations/
# report.sql), a data test's node_costs (macros/materializations/test.sql).
REPORTED_TYPES = frozenset({"model", "seed", "snapshot", "test"})


def now_ms() -> float:
    return time.time() * 1000.0


class StatementClock:
    """One statement's time; `entry` is None where nothing is timed."""

    def __init__(self, spark: Any, node: str | None, commits: bool) -> None:
        self.entry: StatementTime | None = None
        if (node or "").split(".", 1)[0] in REPORTED_TYPES and not runtime.is_connect(spark):
            from dbt_common.invocation import get_invocation_id

            self.entry = StatementTime(now_ms(), 0.0, commits)
            work.record_statement(get_invocation_id(), str(node), self.entry)

    def ran(self, df: Any) -> None:
        """The statement returned (a command ran; a query was analyzed)."""
        if self.entry is None:
            return
        self.entry.end_ms = now_ms()
        try:
            self.entry.tracker = df._jdf.queryExecution().tracker()
        except Exception as exc:  # a DataFrame of another kind: its time stays, unphased
            logger.debug(f"no planning tracker for a statement: {exc}")

    def checked(self) -> None:
        """The adapter read the snapshot the statement committed (a catalog round trip)."""
        if self.entry is not None:
            self.entry.check_ms = now_ms() - self.entry.end_ms

    def fetched(self) -> None:
        """A query's rows came back: its jobs ran until now."""
        if self.entry is not None and not self.entry.check_ms:
            self.entry.end_ms = now_ms()


def read_phases(statements: Iterable[StatementTime]) -> None:
    """Fill each statement's phases from its tracker (and let the tracker go)."""
    for statement in statements:
        tracker = getattr(statement, "tracker", None)
        if tracker is None:
            continue
        try:
            statement.phases = parse_phases(str(tracker.phases().toString()))
        except Exception as exc:  # the session is gone: the statement's time stays whole
            logger.debug(f"planning phases not read: {exc}")
        statement.tracker = None
