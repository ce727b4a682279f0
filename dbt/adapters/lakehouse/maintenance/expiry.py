"""The snapshot expiry plan: what `expire_snapshots` would remove, predicted with Iceberg 1.10's
own rules (RemoveSnapshots), with the cutoff moved back to keep every branch's own snapshots.

Why, from Iceberg 1.10 behaviour verified on this project's runtime: `expire_snapshots` keeps
the snapshot of every branch and tag, but walks a branch other than `main` back only as far as
`retain_last` and `older_than` say. A branch's snapshots between its head and the point where it
left `main` can then be expired, and `fast_forward` of `main` to that branch fails ("main is not
an ancestor"): an open audit branch could no longer be published. So the expiry cutoff moves
back to keep every snapshot of each branch's own line, and a table where a ref's own retention
(set by its owner) would still cost such a snapshot, or drop a branch or tag, is refused, naming
the ref. Pure functions: procedures.py reads the snapshots and refs and runs the expiry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot

MAX_REF_AGE_PROPERTY = "history.expire.max-ref-age-ms"
DAY_MS = 86_400_000


@dataclass(frozen=True)
class ExpiryPlan:
    cutoff_ms: int  # what `older_than` says
    effective_cutoff_ms: int  # moved back to keep each branch's own line
    retain_last: int
    expired: frozenset[int]  # what Iceberg will expire, predicted with its own rules
    kept_for_branches: dict[str, int]  # branch -> snapshots of its own line
    refused: list[str]  # why the table must not be expired (refs that would lose snapshots)


def _ancestors(head: int, by_id: Mapping[int, Snapshot]) -> list[int]:
    line: list[int] = []
    current: int | None = head
    while current is not None and current in by_id:
        line.append(current)
        current = by_id[current].parent_id
    return line


def plan_expiry(
    snapshots: Sequence[Snapshot],
    refs: Sequence[Ref],
    now_ms: int,
    retain_days: int,
    retain_last: int,
    default_max_ref_age_ms: int | None = None,
) -> ExpiryPlan:
    """What `expire_snapshots(older_than, retain_last)` removes, computed with Iceberg 1.10's
    own rules (RemoveSnapshots), after moving the cutoff back so that no branch loses a
    snapshot of its own line (from its head back to where it left `main`)."""
    by_id = {s.snapshot_id: s for s in snapshots}
    cutoff = now_ms - retain_days * DAY_MS
    main = next((r for r in refs if r.name == "main"), None)
    main_line = set(_ancestors(main.snapshot_id, by_id)) if main else set()
    own_lines: dict[str, list[int]] = {}
    for ref in refs:
        if ref.kind.upper() == "BRANCH" and ref.name != "main":
            line = [s for s in _ancestors(ref.snapshot_id, by_id)]
            cut = next((i for i, s in enumerate(line) if s in main_line), len(line))
            own_lines[ref.name] = line[:cut]
    protected = {s for line in own_lines.values() for s in line}
    effective = min([cutoff, *(by_id[s].committed_ms for s in protected)])

    refused: list[str] = []
    retained_refs: list[Ref] = []
    for ref in refs:
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_ref_age_ms
        head = by_id.get(ref.snapshot_id)
        if ref.name != "main" and max_age is not None and head is not None:
            if now_ms - head.committed_ms > max_age:
                refused.append(
                    f"{ref.kind.lower()} {ref.name!r} is older than its max reference age "
                    f"({max_age} ms), so Iceberg would remove the {ref.kind.lower()} itself"
                )
                continue
        retained_refs.append(ref)

    keep: set[int] = set()
    referenced: set[int] = set()
    for ref in retained_refs:
        if ref.kind.upper() != "BRANCH":
            keep.add(ref.snapshot_id)
            referenced.add(ref.snapshot_id)
            continue
        line = _ancestors(ref.snapshot_id, by_id)
        referenced.update(line)
        ref_cutoff = (
            now_ms - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else effective
        )
        ref_min = (
            ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else retain_last
        )
        kept_here: list[int] = []
        for snapshot_id in line:
            if len(kept_here) < ref_min or by_id[snapshot_id].committed_ms >= ref_cutoff:
                kept_here.append(snapshot_id)
            else:
                break
        keep.update(kept_here)
        lost = [s for s in own_lines.get(ref.name, []) if s not in kept_here]
        if lost:
            refused.append(
                f"branch {ref.name!r} has its own snapshot retention (min_snapshots_to_keep="
                f"{ref.min_snapshots_to_keep}, max_snapshot_age_in_ms={ref.max_snapshot_age_ms}) "
                f"that would expire {len(lost)} snapshot(s) of its own line, after which it "
                "could not be fast-forwarded onto main"
            )
    keep.update(
        s.snapshot_id
        for s in snapshots
        if s.snapshot_id not in referenced and s.committed_ms >= effective
    )
    expired = frozenset(s.snapshot_id for s in snapshots if s.snapshot_id not in keep)
    return ExpiryPlan(
        cutoff_ms=cutoff,
        effective_cutoff_ms=effective,
        retain_last=retain_last,
        expired=expired,
        kept_for_branches={name: len(line) for name, line in own_lines.items() if line},
        refused=refused,
    )


def timestamp_literal(millis: int) -> str:
    """A Spark TIMESTAMP literal in UTC (the adapter's session time zone)."""
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc)
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond // 1000:03d}'"
