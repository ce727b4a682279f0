"""Maintenance over many tables: `lakehouse_maintain`'s tables as targets (a table with an
invalid config fails alone), every operation on every table in the safe order with a failure
recorded and the rest going on, a Delta log following each commit; and file sizes from the
table's file system for the orphan cleanup's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.maintenance.config import (
    COMPACTION,
    METADATA_CLEANUP,
    MaintenanceConfigError,
)
from dbt.adapters.lakehouse.maintenance.metadata import Query
from dbt.adapters.lakehouse.maintenance.procedures import run_operation
from dbt.adapters.lakehouse.maintenance.report import Effect, format_effect
from dbt.adapters.lakehouse.maintenance.target import DeltaLog, FileSizes, Target


def commits_to_main(effect: Effect) -> bool:
    """Whether the operation may have made a new snapshot on `main`, which a Delta log then
    follows (mirroring an unchanged snapshot is a no-op)."""
    return effect.operation in (COMPACTION, METADATA_CLEANUP) and not (
        effect.dry_run or effect.skipped
    )


CONFIG_FAILURE = "maintenance config"

# Never shown: under Spark Connect the sizes are left unknown before the JVM is asked for.
_FILE_SIZES_FEATURE = "File sizes from the table's Hadoop file system"
_FILE_SIZES_INSTEAD = "leave the sizes unknown (Spark Connect does)."


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
        if runtime.is_connect(spark):
            # The file system is the Connect server's; its sizes are not reachable from here.
            return {}
        jvm = runtime.driver_jvm(spark, _FILE_SIZES_FEATURE, _FILE_SIZES_INSTEAD)
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
