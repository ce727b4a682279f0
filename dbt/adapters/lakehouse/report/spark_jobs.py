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

logger = AdapterLogger("Lakehouse")
_SETTLE_TRIES = 5
_SETTLE_SECONDS = 0.02


@dataclass(frozen=True)
class JobsDone:
    jobs: int
    task_seconds: float


def node_jobs(spark: Any, group: str) -> JobsDone | None:
    """The jobs of `group` and their summed task time, or None where Spark cannot say."""
    if runtime.is_connect(spark):
        return None
    try:
        job_ids = list(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
        if not job_ids:
            return JobsDone(0, 0.0)
        store = spark.sparkContext._jsc.sc().statusStore()
        stages: set[int] = set()
        for job_id in job_ids:
            job = _settled_job(store, job_id)
            ids = job.stageIds()
            stages.update(int(ids.apply(i)) for i in range(ids.size()))
        millis = sum(int(store.lastStageAttempt(stage).executorRunTime()) for stage in stages)
        return JobsDone(len(job_ids), millis / 1000.0)
    except Exception as exc:  # a job or stage the store no longer keeps: report nothing
        logger.debug(f"no Spark job figures for {group}: {exc}")
        return None


def _settled_job(store: Any, job_id: int) -> Any:
    job = store.job(job_id)
    for _ in range(_SETTLE_TRIES):
        if str(job.status()) != "RUNNING":
            break
        time.sleep(_SETTLE_SECONDS)
        job = store.job(job_id)
    return job
