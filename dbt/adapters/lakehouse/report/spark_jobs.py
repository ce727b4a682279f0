"""The Spark jobs a node ran and the task time they took, read from Spark's own status store.

Every statement of a node runs under its connection's job group (connections.LakehouseHandle),
which names the invocation too, so a warm engine's earlier runs of the same node are not
counted. Spark's status tracker lists the group's jobs; its application status store (the one
the Spark UI shows, kept whether or not the UI is on) has each stage's executor run time. Only
metadata is read: no job runs. The store is filled by Spark's listener bus a moment after a job
ends, so a job still shown running is waited for briefly. A Spark Connect session has neither:
then nothing is reported (absent, not zero).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.report.timing import Span

logger = AdapterLogger("Lakehouse")
_SETTLE_TRIES = 50  # at most a second, and only while the bus is behind
_SETTLE_SECONDS = 0.02


@dataclass(frozen=True)
class JobsDone:
    jobs: int
    task_seconds: float
    # each job's start and end (ms since the epoch), for the node's wall-time split
    spans: tuple[Span, ...] = ()
    job_ids: tuple[int, ...] = ()  # for the plans they ran (native.py)


def node_jobs(spark: Any, group: str) -> JobsDone | None:
    """The jobs of `group` and their summed task time, or None where Spark cannot say."""
    if runtime.is_connect(spark):
        return None
    try:
        # The JVM's tracker, asked for the jobs and below for the stages: PySpark's wrapper
        # would fetch one more of it, and turn each stage's answer into a tuple field by field.
        tracker = spark.sparkContext._jsc.statusTracker()
        job_ids = [int(job_id) for job_id in tracker.getJobIdsForGroup(group)]
        store = spark.sparkContext._jsc.sc().statusStore()
    except Exception as exc:  # no status tracker to ask (a stopped context)
        logger.debug(f"no Spark job figures for {group}: {exc}")
        return None
    stages: set[int] = set()
    spans: list[Span] = []
    for job_id in job_ids:
        job = _settled_job(tracker, store, job_id)
        if job is None:
            continue
        span = _span(job)
        if span is not None:
            spans.append(span)
        ids = job.stageIds()
        stages.update(int(ids.apply(i)) for i in range(ids.size()))
    millis = 0
    for stage in stages:
        # A stage that never ran (skipped) has no attempt to read. The tracker says so with a
        # null; asking the store would raise, and PySpark's conversion of that error on its way
        # back takes 50-100 ms (py4j name lookups of a dozen classes through every jar).
        if tracker.getStageInfo(stage) is None:
            continue
        try:
            millis += int(store.lastStageAttempt(stage).executorRunTime())
        except Exception:  # evicted meanwhile
            continue
    return JobsDone(len(job_ids), millis / 1000.0, tuple(spans), tuple(map(int, job_ids)))


def _span(job: Any) -> Span | None:
    """When the job started and ended; a job still running ends now."""
    try:
        start = float(job.submissionTime().get().getTime())
        done = job.completionTime()
        end = float(done.get().getTime()) if done.isDefined() else time.time() * 1000.0
    except Exception:  # a job the store never saw submitted
        return None
    return start, end


def _settled_job(tracker: Any, store: Any, job_id: int) -> Any:
    """The job as the store has it once its end is recorded; waited for a moment when the
    listener bus is behind (a loaded machine), else as it is; None when the store lost it.
    The tracker answers null for a job not recorded yet, where the store would raise (an
    error PySpark converts on its way back, 50-100 ms)."""
    for _ in range(_SETTLE_TRIES):
        info = tracker.getJobInfo(job_id)
        if info is not None and str(info.status()) != "RUNNING":
            break
        time.sleep(_SETTLE_SECONDS)
    try:
        return store.job(job_id)
    except Exception:  # never recorded, or already evicted
        return None
