"""One operation on one table against a fake catalog: expiry's deletions, merge-on-read,
run-scoped compaction (maintenance/procedures.py, maintenance/compaction.py)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.maintenance import compaction_scope as cs
from dbt.adapters.lakehouse.maintenance.config import parse_config
from dbt.adapters.lakehouse.maintenance.metadata import is_merge_on_read
from dbt.adapters.lakehouse.maintenance.procedures import expiry_deletions, run_operation
from dbt.adapters.lakehouse.maintenance.report import Effect, format_effect
from dbt.adapters.lakehouse.maintenance.target import Target


def test_expiry_reports_what_iceberg_deleted():
    # expire_snapshots' row: data, position delete, equality delete, manifest, manifest list,
    # statistics files.
    assert expiry_deletions((12, 3, 1, 20, 18, 0)) == (
        "deleted 12 data file(s), 4 delete file(s), 20 manifest(s), 18 manifest list(s)"
    )
    assert expiry_deletions((2, 0, 0, 1)) == (
        "deleted 2 data file(s), 0 delete file(s), 1 manifest(s), 0 manifest list(s)"
    )


def test_merge_on_read_detection():
    assert is_merge_on_read({"write.update.mode": "merge-on-read"})
    assert not is_merge_on_read({"write.update.mode": "copy-on-write"})


class FakeTable:
    """Answers the metadata reads of a run-scoped compaction on a table partitioned by
    days(ts), bucket(4, id); records the statements."""

    def __init__(self, line: list[tuple[int, str, str | None]], entries: list[tuple[int, str]]):
        self.line, self.entries, self.statements = line, entries, []

    def __call__(self, sql: str) -> list[tuple[Any, ...]]:
        self.statements.append(sql)
        if ".refs" in sql:
            return [("main", "BRANCH", self.line[0][0] if self.line else 1, None, None, None)]
        if ".history h join" in sql:
            return list(self.line)
        if sql.startswith("describe table extended"):
            return [
                ("id", "bigint", None),
                ("ts", "timestamp", None),
                ("", "", ""),
                ("# Partitioning", "", ""),
                ("Part 0", "days(ts)", ""),
                ("Part 1", "bucket(4, id)", ""),
            ]
        if ".entries" in sql:
            return list(self.entries)
        if ".manifests" in sql:
            return [(0, 2)]
        if ".files" in sql:
            return [(6, 6000, 6)] if "CALL" not in self.statements[-2] else [(2, 5000, 0)]
        if sql.startswith("show tblproperties"):
            return []
        if sql.startswith("CALL"):
            return [(6, 2, 1000, 0)]
        raise AssertionError(sql)


def run_scoped(table: FakeTable, invocation: str | None, dry_run: bool = False) -> Effect:
    options = parse_config({"compaction": {"scope": "run", "min_input_files": 2}}, "x").options
    target = Target("lh", "s", "t", options, run_invocation=invocation)
    return run_operation(table, lambda _: {}, target, "compaction", dry_run=dry_run)


def test_run_scoped_compaction_filters_the_rewrite_to_the_runs_partitions():
    day = '{"ts_day":"2024-01-02","id_bucket":%d}'
    table = FakeTable([], [(0, day % 1), (0, day % 2)])
    effect = run_scoped(table, "0123456789abcdef")
    entries = next(s for s in table.statements if ".entries" in s)
    assert "summary['dbt.invocation_id'] = '0123456789abcdef'" in entries
    assert "status <> 2 and data_file.content = 0" in entries
    counted = next(s for s in table.statements if ".files" in s)
    assert counted.endswith(
        f"and to_json(partition, {cs.PARTITION_JSON}) in "
        """('{"ts_day":"2024-01-02","id_bucket":1}', '{"ts_day":"2024-01-02","id_bucket":2}')"""
    )
    call = next(s for s in table.statements if s.startswith("CALL"))
    assert call.endswith(
        "where => '`ts` >= TIMESTAMP\\'2024-01-02 00:00:00 UTC\\' AND `ts` < "
        "TIMESTAMP\\'2024-01-03 00:00:00 UTC\\'')"
    )
    line = format_effect(effect)
    assert line.startswith(
        "lh.s.t compaction: scope run: 2 partition(s) of invocation 01234567…, 6 small file(s); "
        "data files 6 → 2 (avg 1000 B → 2.4 KiB); the rewrite's filter leaves out bucket(4, id) "
        "(no filter form), so small files of neighbouring partitions may be rewritten too; "
        "6 rewritten into 2; "
    ), line


def test_run_scoped_compaction_with_nothing_written_or_no_dbt_run():
    table = FakeTable([], [])
    line = format_effect(run_scoped(table, "0123456789abcdef"))
    assert (
        "scope run: invocation 01234567… left no live data files in the table; nothing to do"
        in line
    )
    assert not any(s.startswith("CALL") for s in table.statements)
    # lakehouse_maintain on a table last written outside dbt: the whole table, saying why.
    table = FakeTable([(9, "append", None)], [])
    line = format_effect(run_scoped(table, None, dry_run=True))
    assert line.startswith(
        "lh.s.t compaction (dry run): scope run falls back to the whole table: its last write "
        "(snapshot 9) carries no dbt.invocation_id (written outside dbt, or under Spark "
        "Connect, where commits do not name their run); data files 6 → 6"
    ), line
    assert not any(".entries" in s for s in table.statements)
    assert "6 small file(s) would be rewritten" in line


def test_file_deleting_operations_skip_a_table_that_shares_its_files():
    statements: list[str] = []

    def clone_table(sql: str) -> list[tuple[Any, ...]]:
        statements.append(sql)
        if sql.startswith("show tblproperties"):
            return [("gc.enabled", "false"), ("dbt-lakehouse.clone-of", "`lh`.`p`.`t`@7")]
        raise AssertionError(f"nothing but the properties may be read or run: {sql}")

    options = parse_config({}, "x").options
    for operation in ("snapshot_expiry", "orphan_cleanup", "metadata_cleanup"):
        effect = run_operation(
            clone_table, lambda _: {}, Target("lh", "s", "t", options), operation
        )
        assert effect.skipped is not None and "may share files with another table" in effect.skipped
    assert all(sql.startswith("show tblproperties") for sql in statements)
