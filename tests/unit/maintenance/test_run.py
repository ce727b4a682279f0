"""Maintenance over many tables: a bad config fails its table alone, a failure does not stop
the others, a Delta log follows each commit (maintenance/run.py)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.maintenance.config import parse_config
from dbt.adapters.lakehouse.maintenance.report import failure_summary
from dbt.adapters.lakehouse.maintenance.run import maintain, select_targets
from dbt.adapters.lakehouse.maintenance.target import DeltaLog, Target

DAY = 86_400_000
NOW = 100 * DAY


def test_a_bad_config_fails_its_table_and_the_others_are_selected():
    tables = [
        {"name": "good", "config": {"compaction": {"min_input_files": 2}}},
        {"name": "typo", "config": {"snapshot_expiry": {"retain_last": 0}, "vacuum": {}}},
        {"name": "plain", "config": None},
        {"name": "text", "config": "compaction"},
    ]

    def make(table: dict[str, Any]) -> Target:
        plan = parse_config(table["config"], f"table lh.s.{table['name']}")
        return Target("lh", "s", table["name"], plan.options)

    lines: list[str] = []
    targets, failed = select_targets(tables, lambda t: f"lh.s.{t['name']}", make, lines.append)
    assert [t.name for t in targets] == ["good", "plain"]
    assert targets[0].options["compaction"]["min_input_files"] == 2
    assert [(f[0], f[1]) for f in failed] == [
        ("lh.s.typo", "maintenance config"),
        ("lh.s.text", "maintenance config"),
    ]
    assert failed[0][2] == (
        "invalid maintenance config: unknown key(s) 'vacuum'; accepted: after_run, compaction, "
        "snapshot_expiry, orphan_cleanup, metadata_cleanup, delta_checkpoint; "
        "snapshot_expiry.retain_last is 0: that would leave main without its current snapshot, "
        "so Iceberg refuses it too. Use 1 (the default) or more; none of its operations ran"
    )
    assert "expected a mapping" in failed[1][2] and "got 'compaction'" in failed[1][2]
    assert lines == [f"{f[0]} maintenance config: FAILED: {f[2]}" for f in failed]
    summary = failure_summary(failed, len(tables))
    assert summary.startswith("lakehouse_maintain: 2 operation(s) failed on 2 of 4 table(s):")
    assert "  - lh.s.typo maintenance config: invalid maintenance config: unknown key" in summary


def test_maintain_goes_on_after_a_failure():
    """A fake catalog: one table's metadata reads fail, the other's answer."""

    def query(sql: str) -> list[tuple[Any, ...]]:
        if "`bad`" in sql:
            raise RuntimeError("Table not found\nstack")
        if ".refs" in sql:
            return [("main", "BRANCH", 1, None, None, None)]
        if ".snapshots" in sql:
            return [(1, None, NOW - DAY)]
        if sql.startswith("show tblproperties"):
            return []
        if sql.startswith("CALL"):
            return [(0, 0, 0, 0, 0, 0)]
        raise AssertionError(sql)

    plan = parse_config(None, "x")
    targets = [Target("lh", "s", name, plan.options) for name in ("bad", "good")]
    lines: list[str] = []
    effects, failed = maintain(
        query, lambda _: {}, targets, ["snapshot_expiry"], False, lines.append
    )
    assert failed == [("lh.s.bad", "snapshot_expiry", "Table not found")]
    assert [e.table for e in effects] == ["lh.s.good"]
    assert lines[0] == "lh.s.bad snapshot_expiry: FAILED: Table not found"
    assert lines[1].startswith("lh.s.good snapshot_expiry: expired 0 snapshot(s), 1 → 1; ")


def test_delta_checkpoint_and_the_log_following_each_commit():
    """A dual-format table's log follows compaction before expiry runs (expiry may delete
    the files compaction replaced); a table without a log skips the checkpoint."""
    calls: list[str] = []

    def query(sql: str) -> list[tuple[Any, ...]]:
        calls.append(sql.split("(")[0])
        if ".refs" in sql:
            return [("main", "BRANCH", 1, None, None, None)]
        if ".snapshots" in sql:
            return [(1, None, NOW - DAY)]
        if sql.startswith("show tblproperties"):
            return []
        if ".files" in sql:
            return [(6, 600, 6)]
        if sql.startswith("CALL"):
            return [(6, 1, 0, 0, 0, 0)]
        raise AssertionError(sql)

    delta = DeltaLog(
        exists=lambda t: t.name == "dual",
        follow=lambda t: calls.append(f"follow {t.name}"),
        checkpoint=lambda t: 7,
    )
    plan = parse_config(None, "x")
    targets = [Target("lh", "s", name, plan.options) for name in ("dual", "plain")]
    lines: list[str] = []
    operations = ["compaction", "snapshot_expiry", "delta_checkpoint"]
    _, failed = maintain(query, lambda _: {}, targets, operations, False, lines.append, delta)
    assert failed == []
    follows = [i for i, c in enumerate(calls) if c.startswith("follow")]
    expiry = next(i for i, c in enumerate(calls) if "expire_snapshots" in c)
    assert [calls[i] for i in follows] == ["follow dual"] and follows[0] < expiry
    assert lines[2].startswith("lh.s.dual delta_checkpoint: Delta checkpoint at version 7; ")
    assert lines[5] == (
        "lh.s.plain delta_checkpoint: skipped: no Delta log at the table root (its "
        "table_formats hold no delta)"
    )
    dry, _ = maintain(query, lambda _: {}, targets[:1], ["delta_checkpoint"], True, print, delta)
    assert dry[0].notes == ["would write a Delta checkpoint of the log's current version"]
