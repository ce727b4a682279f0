"""Iceberg table maintenance: compaction, snapshot expiry, orphan file cleanup, metadata cleanup.

Each operation is one of Iceberg's own Spark procedures (`CALL <catalog>.system.<proc>`); this
module decides which to run with which arguments, refuses what would harm a table, and measures
the effect from the table's metadata tables before and after.

Two ways in, both opt-in: a model's `maintenance: {after_run: [...], <operation>: {...}}` config
(after a successful build, inside the table and incremental materializations), and
`dbt run-operation lakehouse_maintain` over many tables.

Safety rules, each from Iceberg 1.10 behaviour verified on this project's runtime:
- `expire_snapshots` keeps the snapshot of every branch and tag, but walks a branch other than
  `main` back only as far as `retain_last` and `older_than` say. A branch's snapshots between
  its head and the point where it left `main` can then be expired, and `fast_forward` of `main`
  to that branch fails ("main is not an ancestor"): an open audit branch could no longer be
  published. So the expiry cutoff moves back to keep every snapshot of each branch's own line,
  and a table where a ref's own retention (set by its owner) would still cost such a snapshot,
  or drop a branch or tag, is refused, naming the ref.
- Compaction and `rewrite_manifests` commit a snapshot to `main`. On a table holding an open
  audit branch (`audit_<8 chars>`), that commit makes `main` no longer an ancestor of the branch,
  so the branch could not be published: both are skipped there, saying why.
- `remove_orphan_files` deletes files no snapshot references; a write in flight has written
  files it has not committed yet, so only files older than a day (Iceberg's own floor) are
  ever considered.

The planning, validation and formatting functions are pure; the functions that run SQL take a
`Query` (the adapter runs it through the cursor, so read-only depots, commit retries and error
mapping apply as for any statement) and, for file sizes, the Spark session.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.iceberg.lineage import INVOCATION_KEY
from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal
from dbt.adapters.lakehouse.maintenance.compaction_scope import (
    PARTITION_JSON,
    choose_run,
    parse_describe,
    run_filter,
)

Query = Callable[[str], list[tuple[Any, ...]]]

COMPACTION = "compaction"
SNAPSHOT_EXPIRY = "snapshot_expiry"
ORPHAN_CLEANUP = "orphan_cleanup"
METADATA_CLEANUP = "metadata_cleanup"
DELTA_CHECKPOINT = "delta_checkpoint"
FULL = "full_maintenance"
# The safe order, also the order of `full_maintenance` (docs/maintenance.md): compaction
# first, so expiry can later drop the files it replaced; expiry before orphan cleanup, so files
# expiry failed to delete are found as orphans; manifests last, rewritten once over the final
# set of files; a Delta checkpoint (dual-format tables) last, of the log's final version.
ORDER = (COMPACTION, SNAPSHOT_EXPIRY, ORPHAN_CLEANUP, METADATA_CLEANUP, DELTA_CHECKPOINT)
OPERATIONS = (*ORDER, FULL)

DEFAULTS: dict[str, dict[str, Any]] = {
    COMPACTION: {
        "target_file_size_mb": 128,
        "min_input_files": 5,
        "strategy": "binpack",
        "scope": "table",
    },
    SNAPSHOT_EXPIRY: {"retain_days": 7, "retain_last": 1},
    ORPHAN_CLEANUP: {"older_than_days": 3, "dry_run": False},
    METADATA_CLEANUP: {"previous_versions_max": 100},
    DELTA_CHECKPOINT: {},
}
STRATEGIES = ("binpack", "sort", "zorder")
SCOPES = ("table", "run")
CONFIG_KEYS = ("after_run", *ORDER)
# A file is "small" below Iceberg's own default min-file-size-bytes: 75% of the target size.
SMALL_FRACTION = 0.75
MERGE_ON_READ_KEYS = ("write.delete.mode", "write.update.mode", "write.merge.mode")
MAX_REF_AGE_PROPERTY = "history.expire.max-ref-age-ms"
_AUDIT_BRANCH = re.compile(r"^audit_[0-9a-f]{8}$")
_DAY_MS = 86_400_000


class MaintenanceConfigError(CompilationError):
    """A `maintenance` config or `lakehouse_maintain` argument the adapter does not accept."""

    # Each problem on its own, so lakehouse_maintain can put them on the table's one line.
    problems: tuple[str, ...] = ()


def _config_error(owner: str, problems: Sequence[str]) -> MaintenanceConfigError:
    error = MaintenanceConfigError(
        f"Invalid maintenance config for {owner}:\n  - "
        + "\n  - ".join(problems)
        + "\nNothing was written."
    )
    error.problems = tuple(problems)
    return error


class MaintenanceError(DbtRuntimeError):
    """A maintenance operation refused or failed on a table."""

    CODE = 10108
    MESSAGE = "Lakehouse maintenance error"


# ---- configuration --------------------------------------------------------------------------


@dataclass(frozen=True)
class MaintenancePlan:
    """What to run on one table: operations in the safe order, each with its options."""

    operations: tuple[str, ...]
    options: Mapping[str, Mapping[str, Any]]


def _accepted(names: Iterable[str]) -> str:
    return ", ".join(names)


def expand(operations: Iterable[str]) -> tuple[str, ...]:
    """Operation names (already checked) in the safe order; `full_maintenance` is all of them."""
    wanted = set(operations)
    if FULL in wanted:
        wanted = set(ORDER)
    return tuple(op for op in ORDER if op in wanted)


def _check_operations(value: Any, where: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where} must be a list of operation names, got {value!r}")
        return []
    unknown = [v for v in value if v not in OPERATIONS]
    if unknown:
        problems.append(
            f"{where} has unknown operation(s) {', '.join(map(repr, unknown))}; accepted: "
            f"{_accepted(OPERATIONS)}"
        )
    return [v for v in value if v in OPERATIONS]


def _check_int(op: str, key: str, value: Any, low: int, problems: list[str]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        problems.append(f"{op}.{key} must be a whole number of at least {low}, got {value!r}")


def _check_options(op: str, given: Any, problems: list[str]) -> dict[str, Any]:
    options = dict(DEFAULTS[op])
    if given is None:
        return options
    if not isinstance(given, Mapping):
        problems.append(f"{op} options must be a mapping, got {given!r}")
        return options
    unknown = [k for k in given if k not in DEFAULTS[op]]
    if unknown:
        problems.append(
            f"{op} has unknown option(s) {', '.join(map(repr, unknown))}; accepted: "
            f"{_accepted(DEFAULTS[op])}"
        )
    options.update({k: v for k, v in given.items() if k in DEFAULTS[op]})
    if op == SNAPSHOT_EXPIRY:
        _check_int(op, "retain_days", options["retain_days"], 0, problems)
        if options["retain_last"] == 0:
            problems.append(
                "snapshot_expiry.retain_last is 0: that would leave main without its current "
                "snapshot, so Iceberg refuses it too. Use 1 (the default) or more"
            )
        else:
            _check_int(op, "retain_last", options["retain_last"], 1, problems)
    elif op == ORPHAN_CLEANUP:
        if options["older_than_days"] != 0:
            _check_int(op, "older_than_days", options["older_than_days"], 1, problems)
        else:
            problems.append(
                "orphan_cleanup.older_than_days is 0: a write in flight has files no snapshot "
                "references yet, which a cleanup that young would delete. Use 1 or more "
                "(default 3)"
            )
        if not isinstance(options["dry_run"], bool):
            problems.append(
                f"orphan_cleanup.dry_run must be true or false, got {options['dry_run']!r}"
            )
    elif op == COMPACTION:
        _check_int(op, "target_file_size_mb", options["target_file_size_mb"], 1, problems)
        _check_int(op, "min_input_files", options["min_input_files"], 1, problems)
        if options["strategy"] not in STRATEGIES:
            problems.append(
                f"compaction.strategy must be one of {_accepted(STRATEGIES)}, got "
                f"{options['strategy']!r}"
            )
        if options["scope"] not in SCOPES:
            problems.append(
                f"compaction.scope must be one of {_accepted(SCOPES)}, got {options['scope']!r}"
            )
    elif op == METADATA_CLEANUP:
        _check_int(op, "previous_versions_max", options["previous_versions_max"], 1, problems)
    return options


def parse_config(config: Any, owner: str) -> MaintenancePlan:
    """A `maintenance` config checked (all problems at once): the after-run plan and the
    options every operation takes on this table. `owner` names the model in messages."""
    if config is None:
        return MaintenancePlan((), {op: dict(DEFAULTS[op]) for op in ORDER})
    problems: list[str] = []
    if not isinstance(config, Mapping):
        raise _config_error(
            owner,
            [
                "expected a mapping such as {after_run: [compaction, snapshot_expiry], "
                f"compaction: {{target_file_size_mb: 128}}}}, got {config!r}"
            ],
        )
    unknown = [k for k in config if k not in CONFIG_KEYS]
    if unknown:
        problems.append(
            f"unknown key(s) {', '.join(map(repr, unknown))}; accepted: {_accepted(CONFIG_KEYS)}"
        )
    after_run = _check_operations(config.get("after_run"), "after_run", problems)
    options = {op: _check_options(op, config.get(op), problems) for op in ORDER}
    if problems:
        raise _config_error(owner, problems)
    return MaintenancePlan(expand(after_run), options)


def parse_operations(operations: Any) -> tuple[str, ...]:
    """`lakehouse_maintain`'s `operations` argument, in the safe order."""
    problems: list[str] = []
    names = _check_operations(operations, "operations", problems)
    if not names and not problems:
        problems.append(f"operations is required; accepted: {_accepted(OPERATIONS)}")
    if problems:
        raise MaintenanceConfigError(
            "lakehouse_maintain: " + "; ".join(problems) + ". Nothing was changed. Example: "
            "--args '{select: [orders], operations: [compaction, snapshot_expiry]}'"
        )
    return expand(names)


def sort_order(strategy: str, write_order_by: Any, owner: str) -> str | None:
    """The `sort_order` argument of rewrite_data_files, from the model's `write_order_by`."""
    if strategy == "binpack":
        return None
    columns = [write_order_by] if isinstance(write_order_by, str) else list(write_order_by or [])
    if not columns:
        raise MaintenanceConfigError(
            f"compaction.strategy is {strategy!r} for {owner}, but the model has no "
            "`write_order_by` config to sort by. Set write_order_by (e.g. [customer_id]) or use "
            "strategy: binpack. Nothing was written."
        )
    if strategy == "zorder":
        bare = [re.sub(r"\s+(asc|desc)\b.*$", "", c.strip(), flags=re.I) for c in columns]
        return f"zorder({', '.join(bare)})"
    return ", ".join(c.strip() for c in columns)


# ---- snapshot expiry planning ---------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    parent_id: int | None
    committed_ms: int


@dataclass(frozen=True)
class Ref:
    name: str
    kind: str  # BRANCH or TAG
    snapshot_id: int
    max_ref_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None


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
    cutoff = now_ms - retain_days * _DAY_MS
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
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.UTC)
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}.{moment.microsecond // 1000:03d}'"


def open_audit_branches(refs: Iterable[Ref]) -> list[str]:
    return sorted(
        r.name for r in refs if r.kind.upper() == "BRANCH" and _AUDIT_BRANCH.match(r.name)
    )


def is_merge_on_read(properties: Mapping[str, str]) -> bool:
    return any(properties.get(key, "").lower() == "merge-on-read" for key in MERGE_ON_READ_KEYS)


# ---- effects and their lines ----------------------------------------------------------------


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


# ---- reading a table's metadata -------------------------------------------------------------


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def read_snapshots(query: Query, table: str) -> list[Snapshot]:
    return [
        Snapshot(int(r[0]), _int(r[1]), int(r[2]))
        for r in query(
            f"select snapshot_id, parent_id, unix_millis(committed_at) from {table}.snapshots"
        )
    ]


def read_refs(query: Query, table: str) -> list[Ref]:
    return [
        Ref(str(r[0]), str(r[1]), int(r[2]), _int(r[3]), _int(r[4]), _int(r[5]))
        for r in query(
            "select name, type, snapshot_id, max_reference_age_in_ms, min_snapshots_to_keep, "
            f"max_snapshot_age_in_ms from {table}.refs"
        )
    ]


def read_properties(query: Query, table: str) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in query(f"show tblproperties {table}")}


def data_files(
    query: Query, table: str, small_below: int | None = None, only: str = ""
) -> tuple[int, int, int]:
    """(data files, their bytes, files below `small_below` bytes) of main's current snapshot;
    `only`: a further condition on the `files` metadata table."""
    threshold = small_below if small_below is not None else 0
    row = query(
        f"select count(*), coalesce(sum(file_size_in_bytes), 0), "
        f"count_if(file_size_in_bytes < {threshold}) from {table}.files where content = 0"
        + (f" and {only}" if only else "")
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def manifests(query: Query, table: str) -> tuple[int, int]:
    row = query(f"select count(*), coalesce(sum(length), 0) from {table}.manifests")[0]
    return int(row[0]), int(row[1])


# ---- the operations -------------------------------------------------------------------------


@dataclass(frozen=True)
class Target(TableName):
    """A table to maintain: its names and the options of its `maintenance` config."""

    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    write_order_by: Any = None
    # After a model's build: the invocation that built it (compaction `scope: run`); None in
    # lakehouse_maintain, where the run is the one that made the current snapshot.
    run_invocation: str | None = None


FileSizes = Callable[[Sequence[str]], dict[str, int]]


@dataclass(frozen=True)
class DeltaLog:
    """The Delta log beside a dual-format table (delta_mirror/sync.py, through the adapter)."""

    exists: Callable[[Target], bool]
    # Mirror main's current snapshot: compaction deletes nothing, but the expiry after it
    # may delete the files it replaced, which the log would otherwise still list.
    follow: Callable[[Target], None]
    checkpoint: Callable[[Target], int]  # the version checkpointed


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
    refs = read_refs(query, target.sql_name)
    if operation == COMPACTION:
        _compaction(query, target, options, refs, effect)
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


def _audit_block(refs: Sequence[Ref], operation: str) -> str | None:
    branches = open_audit_branches(refs)
    if not branches:
        return None
    return (
        f"the table holds open audit branch(es) {', '.join(branches)}; {operation} commits to "
        "main, after which the branch could no longer be published. Publish or discard the "
        "branch first (lakehouse_publish / lakehouse_discard), then run it again"
    )


@dataclass(frozen=True)
class _Scope:
    only: str  # a condition on the `files` metadata table selecting the scope's files
    where: str | None  # rewrite_data_files' `where`; None: the whole table
    label: str  # the start of the line's scope part


def _run_scope(query: Query, target: Target, effect: Effect) -> _Scope | None:
    """`scope: run`: the partitions the run's snapshots added live data files to, as a
    condition on `files` and a `where` for the rewrite; None (with the line saying so) when
    the run left no live data files in the table."""
    table = target.sql_name
    if target.run_invocation:
        choice = choose_run(target.run_invocation, [])
    else:
        line = query(
            f"select s.snapshot_id, s.operation, s.summary[{string_literal(INVOCATION_KEY)}] "
            f"from {table}.history h join {table}.snapshots s on s.snapshot_id = h.snapshot_id "
            "where h.is_current_ancestor order by h.made_current_at desc"
        )
        choice = choose_run(None, [(int(r[0]), r[1], r[2]) for r in line])
    if choice.invocation is None:
        return _Scope("", None, f"scope run falls back to the whole table: {choice.label}")
    columns, fields = parse_describe(query(f"describe table extended {table}"))
    if not fields:
        return _Scope("", None, "scope run is the whole table: it is unpartitioned")
    rows = query(
        f"select distinct data_file.spec_id, to_json(data_file.partition, {PARTITION_JSON}) "
        f"from {table}.entries where status <> 2 and data_file.content = 0 and snapshot_id in "
        f"(select snapshot_id from {table}.snapshots where "
        f"summary[{string_literal(INVOCATION_KEY)}] = {string_literal(choice.invocation)})"
    )
    if not rows:
        effect.scope = f"scope run: {choice.label} left no live data files in the table"
        effect.notes.append("nothing to do")
        return None
    # A null in a tuple means null source values only if the file's spec has that field: so
    # only if every spec field the table ever had is in the current spec, and the file's spec
    # has as many fields as the current one (`partition_summaries` holds one per field).
    spec_sizes = {
        int(r[0]): int(r[1])
        for r in query(
            "select distinct partition_spec_id, size(partition_summaries) "
            f"from {table}.manifests where content = 0"
        )
    }
    names = {f.name for f in fields}
    partitions: list[tuple[Mapping[str, Any], bool]] = []
    tuples: list[str] = []
    for spec_id, text in sorted(rows, key=lambda r: (str(r[1]), int(r[0]))):
        values = json.loads(str(text), parse_float=Decimal)
        partitions.append(
            (values, set(values) == names and spec_sizes.get(int(spec_id)) == len(fields))
        )
        if str(text) not in tuples:
            tuples.append(str(text))
    scope_filter = run_filter(fields, columns, partitions)
    if scope_filter.where is None:
        effect.notes.append(
            f"no filter on {', '.join(scope_filter.left_out)} selects these partitions, so "
            "the rewrite covers the whole table"
        )
    elif scope_filter.left_out:
        effect.notes.append(
            f"the rewrite's filter leaves out {', '.join(scope_filter.left_out)} (no filter "
            "form), so small files of neighbouring partitions may be rewritten too"
        )
    only = f"to_json(partition, {PARTITION_JSON}) in ({', '.join(map(string_literal, tuples))})"
    return _Scope(
        only, scope_filter.where, f"scope run: {len(tuples)} partition(s) of {choice.label}"
    )


def _compaction(
    query: Query, target: Target, options: Mapping[str, Any], refs: Sequence[Ref], effect: Effect
) -> None:
    table = target.sql_name
    order = sort_order(str(options["strategy"]), target.write_order_by, str(target))
    target_bytes = int(options["target_file_size_mb"]) * 1024 * 1024
    blocked = _audit_block(refs, "compaction")
    if blocked:
        effect.skipped = blocked
        return
    scope = _Scope("", None, "")
    if options.get("scope", "table") == "run":
        found = _run_scope(query, target, effect)
        if found is None:
            return
        scope = found
    files, size, small = data_files(query, table, int(target_bytes * SMALL_FRACTION), scope.only)
    effect.files_before, effect.bytes_before = files, size
    effect.files_after, effect.bytes_after = files, size
    if scope.label:
        effect.scope = f"{scope.label}, {small} small file(s)" if scope.only else scope.label
    min_input = int(options["min_input_files"])
    if small < min_input:
        effect.notes.append(
            f"nothing to do: {small} small file(s), fewer than min_input_files={min_input}"
        )
        return
    properties = read_properties(query, table)
    if effect.dry_run:
        effect.notes.append(f"{small} small file(s) would be rewritten")
        return
    merge_on_read = is_merge_on_read(properties)
    # Position deletes whose data files the rewrite replaced apply to nothing any more, but
    # stay in the snapshot (and in its total-position-deletes, so the docs' row count would
    # fall short) unless removed here: rewrite_position_delete_files below leaves a partition
    # with fewer delete files than its own min-input-files untouched (bench/maintenance.py).
    dangling = ", 'remove-dangling-deletes', 'true'" if merge_on_read else ""
    args = [
        f"table => {target.in_catalog}",
        f"options => map('target-file-size-bytes', '{target_bytes}', "
        f"'min-input-files', '{min_input}'{dangling})",
    ]
    if order is not None:
        args.append("strategy => 'sort'")
        args.append(f"sort_order => '{order}'")
    if scope.where is not None:
        args.append(f"where => {string_literal(scope.where)}")
    row = query(f"CALL {target.procedures}.rewrite_data_files({', '.join(args)})")[0]
    effect.notes.append(f"{int(row[0])} rewritten into {int(row[1])}")
    if merge_on_read:
        # Iceberg 1.10's fifth column: removed_delete_files_count.
        if len(row) > 4 and row[4]:
            effect.notes.append(f"{int(row[4])} dangling delete file(s) removed")
        where = "" if scope.where is None else f", where => {string_literal(scope.where)}"
        deletes = query(
            f"CALL {target.procedures}.rewrite_position_delete_files(table => "
            f"{target.in_catalog}{where})"
        )[0]
        effect.notes.append(
            f"position delete files {int(deletes[0])} rewritten into {int(deletes[1])}"
        )
    effect.files_after, effect.bytes_after, _ = data_files(query, table, None, scope.only)


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
    older = timestamp_literal(now_ms - int(options["older_than_days"]) * _DAY_MS)
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
    blocked = _audit_block(refs, "rewrite_manifests")
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


def commits_to_main(effect: Effect) -> bool:
    """Whether the operation may have made a new snapshot on `main`, which a Delta log then
    follows (mirroring an unchanged snapshot is a no-op)."""
    return effect.operation in (COMPACTION, METADATA_CLEANUP) and not (
        effect.dry_run or effect.skipped
    )


CONFIG_FAILURE = "maintenance config"


def select_targets(
    tables: Sequence[Any],
    name: Callable[[Any], str],
    make: Callable[[Any], Target],
    report: Callable[[str], None],
) -> tuple[list[Target], list[tuple[str, str, str]]]:
    """`lakehouse_maintain`'s tables as targets. A table whose `maintenance` config is invalid
    is a failure of that table alone (none of its operations run, the run ends non-zero), so
    one model's typo does not keep every other table from its maintenance."""
    targets: list[Target] = []
    failed: list[tuple[str, str, str]] = []
    for table in tables:
        try:
            targets.append(make(table))
        except MaintenanceConfigError as exc:
            problems = exc.problems or tuple(str(exc.msg).strip().splitlines()[:1])
            reason = (
                "invalid maintenance config: " + "; ".join(problems) + "; none of its "
                "operations ran"
            )
            failed.append((name(table), CONFIG_FAILURE, reason))
            report(f"{name(table)} {CONFIG_FAILURE}: FAILED: {reason}")
    return targets, failed


def maintain(
    query: Query,
    file_sizes: FileSizes,
    targets: Sequence[Target],
    operations: Sequence[str],
    dry_run: bool,
    report: Callable[[str], None],
    delta: DeltaLog | None = None,
) -> tuple[list[Effect], list[tuple[str, str, str]]]:
    """Every operation on every table, in the safe order; a failure is recorded and the rest
    go on. Returns the effects and the failures (table, operation, first line of the error).
    A table with a Delta log has it follow each commit before the next operation."""
    effects: list[Effect] = []
    failed: list[tuple[str, str, str]] = []
    for target in targets:
        for operation in operations:
            try:
                effect = run_operation(query, file_sizes, target, operation, dry_run, delta=delta)
            except Exception as exc:
                reason = (str(getattr(exc, "msg", "") or exc).strip().splitlines() or ["?"])[0]
                failed.append((str(target), operation, reason))
                report(f"{target} {operation}: FAILED: {reason}")
                continue
            effects.append(effect)
            report(format_effect(effect))
            if delta is not None and commits_to_main(effect) and delta.exists(target):
                delta.follow(target)
    return effects, failed


def hadoop_file_sizes(spark: Any) -> FileSizes:
    """Sizes of files as the table's file system reports them; a file that vanished (or a
    store that does not answer) counts as unknown and is left out."""

    def sizes(paths: Sequence[str]) -> dict[str, int]:
        if engine.is_connect(spark):
            # The file system is the Connect server's; its sizes are not reachable from here.
            return {}
        jvm = spark._jvm
        conf = spark._jsc.hadoopConfiguration()
        found: dict[str, int] = {}
        for path in paths:
            try:
                hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
                found[path] = int(
                    hadoop_path.getFileSystem(conf).getFileStatus(hadoop_path).getLen()
                )
            except Exception:  # gone meanwhile, or unreadable: its bytes are not counted
                continue
        return found

    return sizes
