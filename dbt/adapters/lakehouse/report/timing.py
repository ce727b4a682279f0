"""Where a node's wall time went, statement by statement: Spark's analysis and planning, its
jobs, and catalog and commit round trips; the rest of the node's wall time is dbt's own work.

Each statement the cursor runs for a node is timed (its start and end on the machine's clock)
with the phases Spark's `QueryPlanningTracker` measured for it (parsing, analysis,
optimization, planning: start and end in the JVM's milliseconds, the same clock, since the
driver runs on this machine). The node's Spark jobs come with their start and end
(spark_jobs.py). Within one statement each millisecond is counted once:

- inside a job of the statement (from its first job's start to its last job's end): **jobs**;
- inside a tracked phase, or before the statement's first job: **planning**. A write's own
  optimization and planning (and Iceberg's scan planning) run inside the command, in a plan
  Spark tracks apart from the statement's; they fall before its first job;
- after a committing statement's last job, in a statement that ran no job (DDL, a view, SHOW,
  DESCRIBE), and the adapter's read of the snapshot it committed: **catalog**;
- after a query's last job (its rows coming back): **jobs**.

Jobs outside every statement (a Python model's) count as jobs. Pure: no Spark here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

Span = tuple[float, float]  # start and end, milliseconds since the epoch
# QueryPlanningTracker.phases' text: `Map(parsing -> PhaseSummary(<start ms>, <end ms>), ...)`
# (PhaseSummary.toString, the same on Spark 3.5 and 4.1).
_PHASE = re.compile(r"(\w+) -> PhaseSummary\((\d+), (\d+)\)")


@dataclass
class StatementTime:
    start_ms: float
    end_ms: float
    commits: bool  # the statement can commit a snapshot (lineage.commit_target)
    phases: tuple[Span, ...] = ()
    check_ms: float = 0.0  # the adapter's read of the snapshot it committed, afterwards
    # Spark's QueryPlanningTracker of the statement, until its phases are read (statements.py)
    tracker: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class WallSplit:
    """Seconds of wall time; they sum to the statements' time and the jobs outside them."""

    planning: float
    jobs: float
    catalog: float


def parse_phases(text: str) -> tuple[Span, ...]:
    """The phases' spans from the tracker's text; empty when it says none."""
    return tuple((float(start), float(end)) for _, start, end in _PHASE.findall(text))


def _union(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: Iterable[Span]) -> float:
    return sum(end - start for start, end in _union(spans))


def _clip(spans: Iterable[Span], window: Span) -> list[Span]:
    low, high = window
    return [(max(s, low), min(e, high)) for s, e in spans if min(e, high) > max(s, low)]


def statement_split(statement: StatementTime, jobs: Sequence[Span]) -> WallSplit:
    """One statement's milliseconds by bucket (WallSplit in milliseconds here); `jobs` are
    the node's, those started inside the statement are its own."""
    window = (statement.start_ms, max(statement.end_ms, statement.start_ms))
    wall = window[1] - window[0]
    own = [j for j in jobs if window[0] <= j[0] < window[1]]
    phases = _clip(statement.phases, window)
    if not own:
        planning = _length(phases)
        return WallSplit(planning, 0.0, wall - planning + statement.check_ms)
    running = (min(j[0] for j in own), min(max(j[1] for j in own), window[1]))
    ran = running[1] - running[0]
    before = running[0] - window[0]
    after = window[1] - running[1]
    # Phases tracked after the last job (a query's planning of its collect, say) are planning.
    late_phases = _length(_clip(phases, (running[1], window[1])))
    tail = after - late_phases
    catalog = (tail if statement.commits else 0.0) + statement.check_ms
    planning = before + late_phases
    return WallSplit(planning, ran + (0.0 if statement.commits else tail), catalog)


def node_split(statements: Sequence[StatementTime], jobs: Sequence[Span]) -> WallSplit:
    """The node's split in seconds: its statements', and its jobs outside them."""
    planning = ran = catalog = 0.0
    for statement in statements:
        part = statement_split(statement, jobs)
        planning, ran, catalog = planning + part.planning, ran + part.jobs, catalog + part.catalog
    windows = [(s.start_ms, s.end_ms) for s in statements]
    outside = [j for j in jobs if not any(w[0] <= j[0] < w[1] for w in windows)]
    ran += _length(outside)
    return WallSplit(planning / 1000.0, ran / 1000.0, catalog / 1000.0)
