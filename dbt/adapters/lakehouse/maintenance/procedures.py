"""One operation on one table: each is one of Iceberg's own Spark procedures
(`CALL <catalog>.system.<proc>`), run with the arguments the table's options give, its effect
measured from the table's metadata tables before and after.

`remove_orphan_files` deletes files no snapshot references; a write in flight has written files
it has not committed yet, so only files older than a day (Iceberg's own floor) are ever
considered. Compaction has its own module (compaction.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.lakehouse.iceberg.metadata import Ref
from dbt.adapters.lakehouse.maintenance.audit_branches import audit_block
from dbt.adapters.lakehouse.maintenance.compaction import compact
from dbt.adapters.lakehouse.maintenance.config import (
    COMPACTION,
    DELTA_CHECKPOINT,
    METADATA_CLEANUP,
    ORPHAN_CLEANUP,
    SNAPSHOT_EXPIRY,
    MaintenanceError,
)
from dbt.adapters.lakehouse.maintenance.expiry import (
    DAY_MS,
    MAX_REF_AGE_PROPERTY,
    plan_expiry,
    timestamp_literal,
)
from dbt.adapters.lakehouse.maintenance.metadata import (
    Query,
    manifests,
    read_properties,
    read_refs,
    read_snapshots,
)
from dbt.adapters.lakehouse.maintenance.report import Effect
from dbt.adapters.lakehouse.maintenance.target import DeltaLog, FileSizes, Target
from dbt.adapters.lakehouse.models.clone import is_zero_copy_clone

# What deletes files: never run on a table that may share its files (gc.enabled=false: a
# zero-copy clone, or any Nessie table, whose branches share files), where Iceberg itself
# refuses the first two and the third would delete metadata files its log may share.
FILE_DELETING = (SNAPSHOT_EXPIRY, ORPHAN_CLEANUP, METADATA_CLEANUP)
SHARED_FILES_SKIP = (
    "gc.enabled=false: it may share files with another table (a zero-copy clone, or a Nessie "
    "table, whose branches share files), so its snapshots and files are kept"
)


def run_operation(
    query: Query,
    file_sizes: FileSizes,
    target: Target,
    operation: str,
    dry_run: bool = False,
    now_ms: int | None = None,
    delta: DeltaLog | None = None,
) -> Effect:
    """Run one operation on one table (or, with `dry_run`, measure what it would do)."""
    started = time.monotonic()
    effect = Effect(table=str(target), operation=operation, dry_run=dry_run)
    if operation == DELTA_CHECKPOINT:
        _checkpoint(target, delta, effect)
        effect.seconds = time.monotonic() - started
        return effect
    options = target.options[operation]
    if operation in FILE_DELETING and is_zero_copy_clone(read_properties(query, target.sql_name)):
        effect.skipped = SHARED_FILES_SKIP
        effect.seconds = time.monotonic() - started
        return effect
    refs = read_refs(query, target.sql_name)
    if operation == COMPACTION:
        compact(query, target, options, refs, effect)
    elif operation == SNAPSHOT_EXPIRY:
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        _expiry(query, target, options, refs, effect, now)
    elif operation == ORPHAN_CLEANUP:
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        _orphans(query, file_sizes, target, options, effect, now)
    elif operation == METADATA_CLEANUP:
        _metadata(query, target, options, refs, effect)
    else:  # validated before; a programming error otherwise
        raise MaintenanceError(f"Unknown maintenance operation {operation!r}")
    effect.seconds = time.monotonic() - started
    return effect


def _expiry(
    query: Query,
    target: Target,
    options: Mapping[str, Any],
    refs: Sequence[Ref],
    effect: Effect,
    now_ms: int,
) -> None:
    table = target.sql_name
    snapshots = read_snapshots(query, table)
    properties = read_properties(query, table)
    max_ref_age = properties.get(MAX_REF_AGE_PROPERTY)
    plan = plan_expiry(
        snapshots,
        refs,
        now_ms,
        int(options["retain_days"]),
        int(options["retain_last"]),
        int(max_ref_age) if max_ref_age else None,
    )
    effect.snapshots_before = len(snapshots)
    if plan.refused:
        raise MaintenanceError(
            f"snapshot_expiry refused on {target}: " + "; ".join(plan.refused) + ". Nothing was "
            "expired. Fix: clear that ref's own retention (ALTER TABLE ... REPLACE BRANCH/TAG "
            "without RETAIN), or drop the ref if it is no longer needed."
        )
    if plan.effective_cutoff_ms < plan.cutoff_ms:
        branches = ", ".join(f"{n} ({c})" for n, c in sorted(plan.kept_for_branches.items()))
        effect.notes.append(
            f"cutoff moved back to {timestamp_literal(plan.effective_cutoff_ms)[11:-1]} UTC to "
            f"keep the own snapshots of branch(es) {branches}"
        )
    if effect.dry_run:
        effect.snapshots_after = len(snapshots) - len(plan.expired)
        return
    result = query(
        f"CALL {target.procedures}.expire_snapshots(table => {target.in_catalog}, "
        f"older_than => {timestamp_literal(plan.effective_cutoff_ms)}, "
        f"retain_last => {plan.retain_last})"
    )
    if result:
        effect.notes.append(expiry_deletions(result[0]))
    after = read_snapshots(query, table)
    effect.snapshots_after = len(after)
    lost = {r.name for r in refs} - {r.name for r in read_refs(query, table)}
    if lost:  # the plan says this cannot happen; say so loudly if Iceberg disagrees
        raise MaintenanceError(
            f"snapshot_expiry on {target} removed ref(s) {', '.join(sorted(lost))}, which the "
            "plan kept. Their snapshots may be gone; check `<table>.refs`."
        )


def expiry_deletions(row: Sequence[Any]) -> str:
    """expire_snapshots' result row (Iceberg 1.10: deleted data, position delete, equality
    delete, manifest, manifest list and statistics file counts) as the line's part."""
    counts = [int(v or 0) for v in row] + [0] * (6 - len(row))
    return (
        f"deleted {counts[0]} data file(s), {counts[1] + counts[2]} delete file(s), "
        f"{counts[3]} manifest(s), {counts[4]} manifest list(s)"
    )


def _orphans(
    query: Query,
    file_sizes: FileSizes,
    target: Target,
    options: Mapping[str, Any],
    effect: Effect,
    now_ms: int,
) -> None:
    older = timestamp_literal(now_ms - int(options["older_than_days"]) * DAY_MS)
    dry_run = effect.dry_run or bool(options["dry_run"])
    effect.dry_run = dry_run
    base = (
        f"CALL {target.procedures}.remove_orphan_files(table => {target.in_catalog}, "
        f"older_than => {older}"
    )
    # The procedure reports paths only, and a deleted file has no size left to read: list
    # first, take the sizes, then delete. The deleting call decides again which files are
    # orphans, so bytes are counted only for paths both calls name.
    listed = [str(r[0]) for r in query(base + ", dry_run => true)")]
    sizes = file_sizes(listed) if listed else {}
    if dry_run or not listed:
        effect.orphan_files, effect.orphan_bytes = len(listed), sum(sizes.values())
        if dry_run:
            effect.orphan_paths = [(path, sizes.get(path)) for path in sorted(listed)]
        return
    removed = [str(r[0]) for r in query(base + ")")]
    effect.orphan_files = len(removed)
    effect.orphan_bytes = sum(sizes.get(path, 0) for path in removed)


def _metadata(
    query: Query, target: Target, options: Mapping[str, Any], refs: Sequence[Ref], effect: Effect
) -> None:
    table = target.sql_name
    effect.files_before, effect.bytes_before = manifests(query, table)
    effect.files_after, effect.bytes_after = effect.files_before, effect.bytes_before
    keep = int(options["previous_versions_max"])
    if effect.dry_run:
        effect.notes.append(f"would keep at most {keep} previous metadata files")
        return
    query(
        f"alter table {table} set tblproperties ("
        "'write.metadata.delete-after-commit.enabled' = 'true', "
        f"'write.metadata.previous-versions-max' = '{keep}')"
    )
    effect.notes.append(f"keeps at most {keep} previous metadata files")
    blocked = audit_block(refs, "rewrite_manifests")
    if blocked:
        effect.notes.append(f"manifests not rewritten: {blocked}")
        return
    query(f"CALL {target.procedures}.rewrite_manifests(table => {target.in_catalog})")
    effect.files_after, effect.bytes_after = manifests(query, table)


def _checkpoint(target: Target, delta: DeltaLog | None, effect: Effect) -> None:
    if delta is None or not delta.exists(target):
        effect.skipped = "no Delta log at the table root (its table_formats hold no delta)"
    elif effect.dry_run:
        effect.notes.append("would write a Delta checkpoint of the log's current version")
    else:
        effect.notes.append(f"Delta checkpoint at version {delta.checkpoint(target)}")
