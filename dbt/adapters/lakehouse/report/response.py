"""A node's adapter_response: what its commits did (work.py), its Spark jobs (spark_jobs.py) and
where its wall time went (timing.py), under the code of what the materialization did.

`rows_affected` is dbt's own field, so dbt's console line shows it (`[MERGE 1,234 in 4.2s]`):
per code, the rows the user would count as changed. A figure that cannot be known is left out
(None), never given as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.lakehouse.report.native import NativeShare
from dbt.adapters.lakehouse.report.spark_jobs import JobsDone
from dbt.adapters.lakehouse.report.timing import node_split
from dbt.adapters.lakehouse.report.work import NodeWork


@dataclass
class LakehouseAdapterResponse(AdapterResponse):
    """dbt's response, plus the Iceberg snapshot the statement committed (iceberg/lineage.py), so
    run_results.json ties each node to the table version it wrote. Here, under connections.py,
    because reuse/tests.py makes one for a data test too."""

    snapshot_id: int | None = None
    # What the node did and cost, summed over its statements (report/): set at its end.
    rows_inserted: int | None = None
    rows_updated: int | None = None
    rows_deleted: int | None = None
    files_added: int | None = None
    files_removed: int | None = None
    bytes_written: int | None = None
    snapshots: list[dict[str, Any]] | None = None
    spark_jobs: int | None = None
    spark_seconds: float | None = None
    # Its statements' wall time by what it went to (report/timing.py); dbt's own work is the
    # rest of the node's execution_time.
    planning_seconds: float | None = None
    jobs_seconds: float | None = None
    catalog_seconds: float | None = None
    # With Comet on: {"operators": ran natively, "eligible": Comet counted, "fallbacks":
    # ["<operator>: <Comet's reason>", ...]} over the node's plans (report/native.py).
    native: dict[str, Any] | None = None
    # Whether the node was reused as its last build left it, and why, or why it was built
    # (reuse/): set only where reuse applies to the node.
    reused: bool | None = None
    reuse_reason: str | None = None
    # A view checkpointed for the run's later statements (checkpoints/): {"temporary_view":
    # its name, "scans": the relation scans its inlined plan held}.
    checkpoint: dict[str, Any] | None = None


# code -> which of inserted / updated / deleted rows it counts as affected
AFFECTED = {
    "CREATE": ("inserted",),
    "INSERT": ("inserted",),
    "OVERWRITE": ("inserted",),
    "MERGE": ("inserted", "updated", "deleted"),
    "SNAPSHOT": ("inserted", "updated", "deleted"),
    "DELETE+INSERT": ("deleted", "inserted"),
}


def response_fields(
    code: str,
    work: NodeWork,
    jobs: JobsDone | None,
    rows_given: int | None = None,
    message: str | None = None,
    native: NativeShare | None = None,
) -> dict[str, Any]:
    """The fields of the node's response. `rows_given`: rows the materialization counted
    itself (a seed's CSV), used when its commits say nothing; `message`: the console's text,
    when not the code and the rows; `native`: how much of its plans Comet ran (native.py)."""
    # A merge's rewrite of its target replaces rows in place (work.py).
    rows = work.rows(in_place=code == "MERGE") if work.commits else {}
    affected: int | None = rows_given
    if work.commits and code in AFFECTED:
        parts = [rows.get(name) for name in AFFECTED[code]]
        affected = None if any(p is None for p in parts) else sum(p for p in parts if p)
    fields: dict[str, Any] = {
        "_message": message or (code if affected is None else f"{code} {affected:,}"),
        "code": code,
        "rows_affected": affected,
    }
    if work.commits:
        fields.update({f"rows_{name}": value for name, value in rows.items()})
        fields.update(work.files())
        fields["snapshot_id"] = work.commits[-1].snapshot_id
        fields["snapshots"] = [
            {"table": c.table, "snapshot_id": c.snapshot_id, "operation": c.operation,
             "statement": c.statement}
            for c in work.commits
        ]  # fmt: skip
    fields.update(cost_fields(work, jobs))
    if native is not None:
        fields["native"] = native.fields()
    return fields


def cost_fields(work: NodeWork, jobs: JobsDone | None) -> dict[str, Any]:
    """The node's Spark jobs, their task time and where its wall time went (timing.py; the
    report gives dbt the rest of the node's); none where Spark cannot say (Connect)."""
    if jobs is None:
        return {}
    split = node_split(work.statements, jobs.spans)
    return {
        "spark_jobs": jobs.jobs,
        "spark_seconds": round(jobs.task_seconds, 3),
        "planning_seconds": round(split.planning, 3),
        "jobs_seconds": round(split.jobs, 3),
        "catalog_seconds": round(split.catalog, 3),
    }
