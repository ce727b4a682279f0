"""A table's `maintenance` config and `lakehouse_maintain`'s arguments: the operation names,
their defaults, every problem found at once, and the safe order the operations run in.

Two ways in, both opt-in: a model's `maintenance: {after_run: [...], <operation>: {...}}` config
(after a successful build, inside the table and incremental materializations), and
`dbt run-operation lakehouse_maintain` over many tables. Also the package's two errors: a config
refused (a compile error) and an operation refused or failed on a table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

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


def parse_overrides(overrides: Mapping[str, Any], operations: tuple[str, ...]) -> dict[str, Any]:
    """`lakehouse_maintain`'s per-operation options (`snapshot_expiry: {retain_last: 2}` beside
    `operations`), checked as a model's config is. Each must name an operation this call runs:
    options for one it skips would be dropped without a word."""
    problems: list[str] = []
    given = {op: value for op, value in overrides.items() if value is not None}
    for op, value in given.items():
        if op not in operations:
            problems.append(
                f"{op} options were given, but {op} is not among the operations this call "
                f"runs ({_accepted(operations)})"
            )
        else:
            _check_options(op, value, problems)
    if problems:
        raise MaintenanceConfigError(
            "lakehouse_maintain: " + "; ".join(problems) + ". Nothing was changed. Example: "
            "--args '{operations: [snapshot_expiry], snapshot_expiry: {retain_last: 2}}'"
        )
    return {op: dict(value) for op, value in given.items()}


def with_overrides(config: Any, overrides: Mapping[str, Any]) -> Any:
    """A table's `maintenance` config with the call's options laid over its own, operation by
    operation (a config that is not a mapping is returned as is: parse_config names it)."""
    if not overrides or not (config is None or isinstance(config, Mapping)):
        return config
    merged = dict(config or {})
    for op, options in overrides.items():
        own = merged.get(op)
        merged[op] = {**(own if isinstance(own, Mapping) else {}), **options}
    return merged


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
