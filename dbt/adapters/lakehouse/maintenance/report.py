"""The measured effect of each operation on each table, and the one line per table and
operation that `lakehouse_maintain` and after_run print; the error a run ends with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dbt.adapters.lakehouse.maintenance.config import (
    METADATA_CLEANUP,
    ORPHAN_CLEANUP,
    SNAPSHOT_EXPIRY,
)


@dataclass
class Effect:
    """What one operation did to one table, measured from Iceberg metadata."""

    table: str
    operation: str
    seconds: float = 0.0
    skipped: str | None = None  # why nothing ran
    dry_run: bool = False
    files_before: int | None = None
    files_after: int | None = None
    bytes_before: int | None = None
    bytes_after: int | None = None
    snapshots_before: int | None = None
    snapshots_after: int | None = None
    orphan_files: int | None = None
    orphan_bytes: int | None = None
    # A dry run's orphans, path and size (None: unreadable), for a person to check before
    # deleting: a file a foreign writer still needs shows up here first.
    orphan_paths: list[tuple[str, int | None]] = field(default_factory=list)
    scope: str | None = None  # compaction with `scope: run`: which files it looked at
    notes: list[str] = field(default_factory=list)


def human_bytes(count: int | None) -> str:
    if count is None:
        return "?"
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover


# How many orphan paths a dry run prints; the rest are counted. A table with thousands of
# orphans (a failed job's output) would otherwise bury every other line of the run.
LISTED_ORPHANS = 20


def _average(total: int | None, files: int | None) -> str:
    if not files or total is None:
        return "-"
    return human_bytes(total // files)


def format_effect(effect: Effect) -> str:
    """One line per table and operation, as `lakehouse_maintain` and after_run print it."""
    head = f"{effect.table} {effect.operation}"
    if effect.skipped:
        return f"{head}: skipped: {effect.skipped}"
    parts: list[str] = [effect.scope] if effect.scope else []
    if effect.operation == SNAPSHOT_EXPIRY:
        before, after = effect.snapshots_before or 0, effect.snapshots_after or 0
        verb = "would expire" if effect.dry_run else "expired"
        parts.append(f"{verb} {before - after} snapshot(s), {before} → {after}")
    if effect.operation == ORPHAN_CLEANUP:
        verb = "would remove" if effect.dry_run else "removed"
        parts.append(
            f"{verb} {effect.orphan_files or 0} orphan file(s), "
            f"{human_bytes(effect.orphan_bytes or 0)}"
        )
    if effect.files_before is not None:
        label = "manifests" if effect.operation == METADATA_CLEANUP else "data files"
        parts.append(
            f"{label} {effect.files_before} → {effect.files_after} (avg "
            f"{_average(effect.bytes_before, effect.files_before)} → "
            f"{_average(effect.bytes_after, effect.files_after)})"
        )
    parts.extend(effect.notes)
    parts.append(f"{effect.seconds:.2f} s")
    line = f"{head}{' (dry run)' if effect.dry_run else ''}: " + "; ".join(parts)
    listed = effect.orphan_paths[:LISTED_ORPHANS]
    more = (effect.orphan_files or 0) - len(listed)
    return "\n".join(
        [
            line,
            *(f"    {path} ({human_bytes(size)})" for path, size in listed),
            *([f"    ... and {more} more"] if listed and more > 0 else []),
        ]
    )


def failure_summary(failed: Sequence[tuple[str, str, str]], total: int) -> str:
    """The error `lakehouse_maintain` raises at the end: (table, operation, reason) each."""
    lines = [f"  - {table} {operation}: {reason}" for table, operation, reason in failed]
    return (
        f"lakehouse_maintain: {len(failed)} operation(s) failed on {len({f[0] for f in failed})} "
        f"of {total} table(s):\n" + "\n".join(lines) + "\nThe other tables and operations ran "
        "(lines above); a failed operation changed nothing it did not commit. Fix the cause "
        "and run lakehouse_maintain again for those tables."
    )
