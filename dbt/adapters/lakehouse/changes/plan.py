"""What `lakehouse.changes(upstream)` reads on a run: pure decisions over snapshot ids.

The snapshot of the upstream that a model consumed is recorded in the summary of each snapshot
the model commits (`dbt.changes.<catalog>.<schema>.<table>` = the upstream's snapshot id), so the
record and the rows it produced are one atomic Iceberg commit: a failed run records nothing, a
rolled back model table rolls its record back with its rows, and an audited run's record reaches
`main` only when its branch is published.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dbt.adapters.lakehouse.iceberg.history import ancestors, line_of

RECORD_PREFIX = "dbt.changes."
LOST_CHANGES_MODES = ("full", "fail")


def record_key(upstream: str) -> str:
    """The summary entry naming the snapshot of `upstream` (catalog.schema.table) consumed."""
    return RECORD_PREFIX + upstream


@dataclass(frozen=True)
class ChangesPlan:
    """`everything`: the upstream as of `end` (every row an insert); `range`: the changes after
    `start` up to `end`; `nothing`: `end` was consumed already. `end` None: the upstream has no
    snapshot yet (an empty table). `lost` says why a recorded point could not be read on."""

    kind: str
    end: int | None
    start: int | None = None
    lost: str | None = None


def recorded_snapshot(
    parents: Mapping[int, int | None], records: Mapping[int, str], main_head: int | None
) -> int | None:
    """The upstream snapshot recorded by the newest ancestor of the model's `main` that records
    one (snapshots another writer made, such as maintenance, record nothing and are passed)."""
    for snapshot_id in line_of(parents, main_head):
        value = records.get(snapshot_id)
        if value:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def plan_changes(
    upstream: str,
    incremental: bool,
    recorded: int | None,
    upstream_parents: Mapping[int, int | None],
    upstream_head: int | None,
) -> ChangesPlan:
    """What to read of `upstream` for a model whose table exists with these records.

    Not incremental (a first build, `--full-refresh`, a table or view model): everything. An
    incremental run reads on from the recorded snapshot when it is still an ancestor of the
    upstream's current one; otherwise the changes after it are lost and the plan says why."""
    if not incremental:
        return ChangesPlan("everything", upstream_head)
    if recorded is None:
        return ChangesPlan(
            "everything",
            upstream_head,
            lost=(
                f"the model's table records no snapshot of {upstream} it consumed (it was built "
                "before it read lakehouse.changes, or by another writer)"
            ),
        )
    if recorded == upstream_head:
        return ChangesPlan("nothing", upstream_head)
    if recorded not in upstream_parents:
        return ChangesPlan(
            "everything",
            upstream_head,
            lost=(
                f"snapshot {recorded} of {upstream}, consumed last, is no longer in its history "
                "(expired, or the table was dropped and created again)"
            ),
        )
    if recorded not in ancestors(upstream_parents, upstream_head):
        return ChangesPlan(
            "everything",
            upstream_head,
            lost=(
                f"snapshot {recorded} of {upstream}, consumed last, is not an ancestor of its "
                f"current snapshot {upstream_head} (rolled back, or rebuilt)"
            ),
        )
    return ChangesPlan("range", upstream_head, start=recorded)
