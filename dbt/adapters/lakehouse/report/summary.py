"""Where a run's time went: its nodes by Spark task time, with rows and bytes written.

The same rows come from a live run (`RunSummary` observes dbt's NodeFinished events and logs the
table through dbt's logger when dbt reports the run's totals) and from any run_results.json
(`dbt-lakehouse report`, `--html` for a page: report/html.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.maintenance.report import human_bytes

logger = AdapterLogger("Lakehouse")

SUMMARIZED_COMMANDS = frozenset({"run", "build", "seed", "snapshot", "test"})
SHOWN = 10  # the heaviest nodes a live run's summary lists


@dataclass(frozen=True)
class NodeCost:
    node: str  # unique id
    status: str
    wall_seconds: float
    spark_seconds: float | None
    spark_jobs: int | None
    rows: int | None
    bytes_written: int | None
    message: str
    # The wall-time split of its statements (report/timing.py); None where Spark cannot say.
    planning_seconds: float | None = None
    jobs_seconds: float | None = None
    catalog_seconds: float | None = None
    # With Comet on (report/native.py): operators it ran, of those it counted, and why not
    native_operators: int | None = None
    native_eligible: int | None = None
    native_fallbacks: tuple[str, ...] = ()
    # Reused as its last build left it (reuse/): None where reuse did not apply to it.
    reused: bool | None = None

    @property
    def dbt_seconds(self) -> float | None:
        """dbt's own work: the node's wall time its statements did not take."""
        parts = (self.planning_seconds, self.jobs_seconds, self.catalog_seconds)
        if any(p is None for p in parts):
            return None
        return max(0.0, self.wall_seconds - sum(p for p in parts if p is not None))

    @property
    def name(self) -> str:
        return self.node.split(".", 2)[-1] if self.node.count(".") >= 2 else self.node


def node_cost(node: str, status: str, wall: float, response: Mapping[str, Any]) -> NodeCost:
    """A node's figures from its adapter_response (numbers may arrive as floats: dbt's event
    carries them in a protobuf Struct); a figure it lacks stays None."""

    def whole(key: str) -> int | None:
        value = response.get(key)
        return None if value is None else int(value)

    def seconds_of(key: str) -> float | None:
        value = response.get(key)
        return None if value is None else float(value)

    return NodeCost(
        node=node,
        status=status,
        wall_seconds=float(wall or 0.0),
        spark_seconds=seconds_of("spark_seconds"),
        spark_jobs=whole("spark_jobs"),
        rows=whole("rows_affected"),
        bytes_written=whole("bytes_written"),
        message=str(response.get("_message") or ""),
        planning_seconds=seconds_of("planning_seconds"),
        jobs_seconds=seconds_of("jobs_seconds"),
        catalog_seconds=seconds_of("catalog_seconds"),
        **_native_of(response.get("native")),
        reused=None if response.get("reused") is None else bool(response["reused"]),
    )


def _native_of(native: Any) -> dict[str, Any]:
    if not isinstance(native, Mapping) or native.get("eligible") is None:
        return {}
    return {
        "native_operators": int(native.get("operators") or 0),
        "native_eligible": int(native["eligible"]),
        "native_fallbacks": tuple(str(r) for r in native.get("fallbacks") or ()),
    }


def from_run_results(document: Mapping[str, Any]) -> list[NodeCost]:
    """The nodes of a run_results.json document."""
    return [
        node_cost(
            str(r.get("unique_id")),
            str(r.get("status")),
            float(r.get("execution_time") or 0.0),
            r.get("adapter_response") or {},
        )
        for r in document.get("results") or ()
    ]


def heaviest(costs: Iterable[NodeCost], limit: int | None = None) -> list[NodeCost]:
    """By Spark task time, then wall time; nodes without Spark figures last."""
    ranked = sorted(costs, key=lambda c: (-(c.spark_seconds or 0.0), -c.wall_seconds, c.node))
    return ranked[:limit] if limit else ranked


def size_text(count: int | None) -> str:
    """Bytes as maintenance reports them (KiB, MiB, ...); "-" when not known."""
    return "-" if count is None else human_bytes(count)


def render(
    costs: list[NodeCost], total: int | None = None, run: Iterable[NodeCost] | None = None
) -> str:
    """A fixed-width table of `costs`, with a heading saying how many of `total` nodes; then,
    when every node of the `run` (default: `costs`) fell back from native execution, a line
    saying so."""
    # The wall time, then its split: dbt's own work, Spark's planning, its jobs, catalog and
    # commit round trips (report/timing.py); then the task time summed over executors.
    header = ("node", "wall s", "dbt s", "plan s", "jobs s", "catalog s", "spark s", "jobs",
              "native", "rows", "written", "result")  # fmt: skip
    rows = [header] + [
        (
            c.name,
            f"{c.wall_seconds:.1f}",
            *(
                _seconds(part)
                for part in (c.dbt_seconds, c.planning_seconds, c.jobs_seconds, c.catalog_seconds)
            ),
            _seconds(c.spark_seconds),
            "-" if c.spark_jobs is None else str(c.spark_jobs),
            "-" if c.native_eligible is None else f"{c.native_operators}/{c.native_eligible}",
            "-" if c.rows is None else f"{c.rows:,}",
            size_text(c.bytes_written),
            c.message or c.status,
        )
        for c in costs
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i in (0, len(header) - 1) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )  # fmt: skip
        for row in rows
    ]
    some = total is not None and total > len(costs)
    shown = f"the {len(costs)} heaviest of {total} nodes" if some else f"{len(costs)} nodes"
    table = f"Where the time went ({shown}, by Spark task time):\n" + "\n".join(lines)
    # Comet's reasons under the table, for the nodes shown (the run's note: all_fell_back).
    fallbacks = [f"  {c.name}: {reason}" for c in costs for reason in c.native_fallbacks]
    if fallbacks:
        table += "\nLeft on Spark's JVM (Comet's reasons):\n" + "\n".join(fallbacks)
    notes = [note for note in (all_fell_back(costs if run is None else run),
                                reused_line(costs if run is None else run)) if note]  # fmt: skip
    return "\n".join([table, *notes])


def reused_line(costs: Iterable[NodeCost]) -> str | None:
    """`31 of 46 nodes reused` (reuse/), when reuse applied to any node of the run."""
    found = list(costs)
    if not any(c.reused is not None for c in found):
        return None
    reused = sum(1 for c in found if c.reused)
    return f"{reused} of {len(found)} nodes reused (each one's reuse_reason in run_results.json)"


def all_fell_back(costs: Iterable[NodeCost]) -> str | None:
    """The line a run with native execution on says when none of its nodes ran an operator
    natively (Comet off in fact: no off-heap memory, say); None otherwise."""
    native = [c for c in costs if c.native_eligible is not None]
    if not native or any(c.native_operators for c in native):
        return None
    reasons = list(dict.fromkeys(r for c in native for r in c.native_fallbacks))[:3]
    said = f" Comet said: {'; '.join(reasons)}." if reasons else ""
    return (
        f"Native execution was on, but none of the {len(native)} nodes with Spark jobs ran an "
        f"operator natively: they all ran on Spark's JVM.{said}"
    )


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


class RunSummary:
    """A live run's nodes, collected from dbt's events, logged once when dbt reports the run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.costs: dict[str, NodeCost] = {}
        # Data tests reuse applied to (reuse/tests.py): counted in the reused line, not costed.
        self.tests: dict[str, NodeCost] = {}
        self.logged = False

    def observe(self, msg: Any) -> None:
        if self is not _CURRENT:  # an earlier invocation's, still registered in this process
            return
        name = getattr(getattr(msg, "info", None), "name", "")
        if name == "NodeFinished":
            data = msg.data
            result = data.run_result
            response = _plain(getattr(result, "adapter_response", None))
            reported = "spark_jobs" in response or "rows_affected" in response
            if not reported and "reused" not in response:
                return  # a test reuse did not apply to, or a node this adapter did not report
            cost = node_cost(
                data.node_info.unique_id,
                str(result.status),
                float(result.execution_time),
                response,
            )
            with self._lock:
                (self.costs if reported else self.tests)[cost.node] = cost
        elif name == "FinishedRunningStats":
            with self._lock:
                if self.logged or not (self.costs or self.tests):
                    return
                self.logged = True
                costs, tests = list(self.costs.values()), list(self.tests.values())
            if costs:
                logger.info(render(heaviest(costs, SHOWN), len(costs), costs + tests))
            elif line := reused_line(tests):  # `dbt test`: no table of its tests' costs
                logger.info(line)


def _plain(struct: Any) -> dict[str, Any]:
    """A protobuf Struct (dbt's event field) as a dict; empty when there is none."""
    if struct is None:
        return {}
    try:
        from google.protobuf.json_format import MessageToDict

        return dict(MessageToDict(struct))
    except Exception:  # not a protobuf message: a mapping already, or nothing usable
        return dict(struct) if isinstance(struct, Mapping) else {}


_CURRENT: RunSummary | None = None


def begin_summary(command: str | None) -> RunSummary | None:
    """A summary for this invocation's nodes when the command runs nodes, else None (replacing
    an earlier invocation's in this process); the caller registers `observe` for dbt's
    events."""
    global _CURRENT
    _CURRENT = RunSummary() if command in SUMMARIZED_COMMANDS else None
    return _CURRENT
