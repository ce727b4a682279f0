"""Maintenance planning, validation and formatting (maintenance.py), without Spark."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from dbt.adapters.lakehouse.maintenance import compaction_scope as cs
from dbt.adapters.lakehouse.maintenance import operations as m

DAY = 86_400_000
NOW = 100 * DAY


# ---- configuration ------------------------------------------------------------------------


def test_no_config_runs_nothing_and_has_the_defaults():
    plan = m.parse_config(None, "model 'x'")
    assert plan.operations == ()
    assert plan.options["snapshot_expiry"] == {"retain_days": 7, "retain_last": 1}
    assert plan.options["orphan_cleanup"] == {"older_than_days": 3, "dry_run": False}
    assert plan.options["compaction"]["target_file_size_mb"] == 128
    assert plan.options["compaction"]["min_input_files"] == 5
    assert plan.options["metadata_cleanup"] == {"previous_versions_max": 100}


def test_after_run_is_put_in_the_safe_order_and_options_merge_with_defaults():
    plan = m.parse_config(
        {
            "after_run": ["metadata_cleanup", "snapshot_expiry", "compaction"],
            "compaction": {"target_file_size_mb": 64},
        },
        "model 'x'",
    )
    assert plan.operations == ("compaction", "snapshot_expiry", "metadata_cleanup")
    assert plan.options["compaction"] == {
        "target_file_size_mb": 64,
        "min_input_files": 5,
        "strategy": "binpack",
        "scope": "table",
    }


def test_full_maintenance_is_all_of_them_in_order():
    assert m.parse_config({"after_run": ["full_maintenance"]}, "x").operations == m.ORDER
    assert m.ORDER == (
        "compaction",
        "snapshot_expiry",
        "orphan_cleanup",
        "metadata_cleanup",
        "delta_checkpoint",
    )
    assert m.parse_operations(["orphan_cleanup", "full_maintenance"]) == m.ORDER


def test_every_problem_is_reported_at_once_with_what_is_accepted():
    with pytest.raises(m.MaintenanceConfigError) as raised:
        m.parse_config(
            {
                "after_run": ["compact", "snapshot_expiry"],
                "snapshot_expiry": {"retain_last": 0, "keep": 3},
                "orphan_cleanup": {"older_than_days": 0},
                "compaction": {"strategy": "shuffle", "min_input_files": -1},
                "schedule": "daily",
            },
            "model 'orders'",
        )
    text = raised.value.msg
    assert text.startswith("Invalid maintenance config for model 'orders':")
    assert (
        "unknown key(s) 'schedule'; accepted: after_run, compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup" in text
    )
    assert (
        "after_run has unknown operation(s) 'compact'; accepted: compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup, delta_checkpoint, full_maintenance" in text
    )
    assert (
        "snapshot_expiry has unknown option(s) 'keep'; accepted: retain_days, retain_last" in text
    )
    assert "snapshot_expiry.retain_last is 0" in text
    assert "orphan_cleanup.older_than_days is 0: a write in flight" in text
    assert "compaction.strategy must be one of binpack, sort, zorder, got 'shuffle'" in text
    assert "compaction.min_input_files must be a whole number of at least 1, got -1" in text
    assert text.endswith("Nothing was written.")


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("compaction", "expected a mapping"),
        ({"after_run": 3}, "after_run must be a list of operation names, got 3"),
        ({"snapshot_expiry": {"retain_days": True}}, "retain_days must be a whole number"),
        ({"orphan_cleanup": {"dry_run": "yes"}}, "dry_run must be true or false, got 'yes'"),
        ({"metadata_cleanup": {"previous_versions_max": 0}}, "previous_versions_max must be"),
    ],
)
def test_bad_values(config: Any, fragment: str):
    with pytest.raises(m.MaintenanceConfigError, match=fragment):
        m.parse_config(config, "x")


def test_run_operation_needs_known_operations():
    with pytest.raises(m.MaintenanceConfigError, match="operations is required; accepted: "):
        m.parse_operations(None)
    with pytest.raises(m.MaintenanceConfigError, match="unknown operation\\(s\\) 'vacuum'"):
        m.parse_operations(["vacuum"])
    assert m.parse_operations("compaction") == ("compaction",)


def test_sort_order_comes_from_write_order_by():
    assert m.sort_order("binpack", None, "x") is None
    assert m.sort_order("sort", ["a desc", "b"], "x") == "a desc, b"
    assert m.sort_order("zorder", ["a desc nulls last", "b"], "x") == "zorder(a, b)"
    with pytest.raises(m.MaintenanceConfigError, match="has no `write_order_by` config"):
        m.sort_order("sort", None, "model 'x'")


# ---- expiry planning ----------------------------------------------------------------------


def chain(*ids: int, start_day: int = 1, parent: int | None = None) -> list[m.Snapshot]:
    """Snapshots each a day after the previous, each the parent of the next."""
    found = []
    for offset, snapshot_id in enumerate(ids):
        found.append(m.Snapshot(snapshot_id, parent, (start_day + offset) * DAY))
        parent = snapshot_id
    return found


def test_expiry_keeps_what_retention_says_on_main():
    snapshots = chain(*range(1, 11), start_day=85)  # days 85..94; now is day 100
    refs = [m.Ref("main", "BRANCH", 10)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    # cutoff day 93: days 93 and 94 stay (snapshots 9, 10)
    assert plan.expired == frozenset(range(1, 9))
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=3)
    assert plan.expired == frozenset(range(1, 8))
    assert plan.effective_cutoff_ms == plan.cutoff_ms and not plan.refused


def test_tags_keep_their_snapshot():
    snapshots = chain(1, 2, 3, 4)
    refs = [m.Ref("main", "BRANCH", 4), m.Ref("t", "TAG", 2)]
    assert m.plan_expiry(snapshots, refs, NOW, 0, 1).expired == frozenset({1, 3})


def test_a_branch_keeps_its_own_line_back_to_main():
    # main: 1-2-3; branch audit_x forked at 2 with 10, 11 (days 50, 51), old enough to expire.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=2)
    refs = [m.Ref("main", "BRANCH", 3), m.Ref("audit_0123abcd", "BRANCH", 11)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=7, retain_last=1)
    assert 10 not in plan.expired and 11 not in plan.expired
    assert plan.effective_cutoff_ms == 50 * DAY < plan.cutoff_ms
    assert plan.kept_for_branches == {"audit_0123abcd": 2}
    # The fork point 2 is main's, not the branch's own: main (moved on to 3) lets it go.
    assert plan.expired == frozenset({1, 2})
    assert m.open_audit_branches(refs) == ["audit_0123abcd"]


def test_a_branch_from_mains_head_stays_publishable():
    # The audited-run case: main is still where the branch left it, so fast_forward needs the
    # whole chain 11 -> 10 -> 3, and retain_last 1 alone would keep only 11 on the branch.
    snapshots = chain(1, 2, 3) + chain(10, 11, start_day=50, parent=3)
    refs = [m.Ref("main", "BRANCH", 3), m.Ref("audit_0123abcd", "BRANCH", 11)]
    plan = m.plan_expiry(snapshots, refs, NOW, retain_days=0, retain_last=1)
    assert plan.expired == frozenset({1, 2})


def test_a_ref_with_its_own_retention_that_would_lose_snapshots_is_refused():
    snapshots = chain(1, 2) + chain(10, 11, 12, start_day=50, parent=2)
    refs = [
        m.Ref("main", "BRANCH", 2),
        m.Ref("dev", "BRANCH", 12, min_snapshots_to_keep=1, max_snapshot_age_ms=DAY),
        m.Ref("old", "TAG", 1, max_ref_age_ms=DAY),
    ]
    plan = m.plan_expiry(snapshots, refs, NOW, 7, 1)
    assert any("branch 'dev' has its own snapshot retention" in r for r in plan.refused)
    assert any("tag 'old' is older than its max reference age" in r for r in plan.refused)
    # The table-wide default max ref age counts too.
    plan = m.plan_expiry(
        chain(1, 2), [m.Ref("main", "BRANCH", 2), m.Ref("t", "TAG", 1)], NOW, 7, 1, DAY
    )
    assert plan.refused == [
        f"tag 't' is older than its max reference age ({DAY} ms), so Iceberg would remove the "
        "tag itself"
    ]


def test_timestamp_literal_is_utc_millis():
    assert m.timestamp_literal(1_700_000_000_123) == "TIMESTAMP '2023-11-14 22:13:20.123'"


def test_merge_on_read_detection():
    assert m.is_merge_on_read({"write.update.mode": "merge-on-read"})
    assert not m.is_merge_on_read({"write.update.mode": "copy-on-write"})


# ---- formatting ---------------------------------------------------------------------------


def test_lines():
    compaction = m.Effect(
        "lh.s.t",
        "compaction",
        1.234,
        files_before=20,
        files_after=1,
        bytes_before=20 * 1024,
        bytes_after=15 * 1024,
        notes=["20 rewritten into 1"],
    )
    assert m.format_effect(compaction) == (
        "lh.s.t compaction: data files 20 → 1 (avg 1.0 KiB → 15.0 KiB); 20 rewritten into 1; 1.23 s"
    )
    expiry = m.Effect("lh.s.t", "snapshot_expiry", 0.5, snapshots_before=22, snapshots_after=4)
    assert m.format_effect(expiry) == (
        "lh.s.t snapshot_expiry: expired 18 snapshot(s), 22 → 4; 0.50 s"
    )
    orphans = m.Effect(
        "lh.s.t", "orphan_cleanup", 2, dry_run=True, orphan_files=1, orphan_bytes=1000
    )
    assert m.format_effect(orphans) == (
        "lh.s.t orphan_cleanup (dry run): would remove 1 orphan file(s), 1000 B; 2.00 s"
    )
    skipped = m.Effect("lh.s.t", "compaction", skipped="the table holds open audit branch(es) x")
    assert m.format_effect(skipped) == (
        "lh.s.t compaction: skipped: the table holds open audit branch(es) x"
    )
    assert m.human_bytes(3 * 1024 * 1024) == "3.0 MiB"


def test_a_dry_run_lists_its_orphans_capped():
    paths = [(f"s3://b/w/t/data/orphan-{i:02d}.parquet", 1000 + i) for i in range(23)]
    paths[1] = (paths[1][0], None)  # vanished before its size was read
    orphans = m.Effect(
        "lh.s.t",
        "orphan_cleanup",
        0.5,
        dry_run=True,
        orphan_files=23,
        orphan_bytes=23_000,
        orphan_paths=paths,
    )
    lines = m.format_effect(orphans).split("\n")
    assert lines[0] == (
        "lh.s.t orphan_cleanup (dry run): would remove 23 orphan file(s), 22.5 KiB; 0.50 s"
    )
    assert lines[1] == "    s3://b/w/t/data/orphan-00.parquet (1000 B)"
    assert lines[2] == "    s3://b/w/t/data/orphan-01.parquet (?)"
    assert len(lines) == 1 + m.LISTED_ORPHANS + 1
    assert lines[m.LISTED_ORPHANS] == "    s3://b/w/t/data/orphan-19.parquet (1019 B)"
    assert lines[-1] == "    ... and 3 more"
    orphans.orphan_paths, orphans.orphan_files = paths[:2], 2
    assert m.format_effect(orphans).split("\n")[1:] == [
        "    s3://b/w/t/data/orphan-00.parquet (1000 B)",
        "    s3://b/w/t/data/orphan-01.parquet (?)",
    ]


def test_expiry_reports_what_iceberg_deleted():
    # expire_snapshots' row: data, position delete, equality delete, manifest, manifest list,
    # statistics files.
    assert m.expiry_deletions((12, 3, 1, 20, 18, 0)) == (
        "deleted 12 data file(s), 4 delete file(s), 20 manifest(s), 18 manifest list(s)"
    )
    assert m.expiry_deletions((2, 0, 0, 1)) == (
        "deleted 2 data file(s), 0 delete file(s), 1 manifest(s), 0 manifest list(s)"
    )


def test_a_bad_config_fails_its_table_and_the_others_are_selected():
    tables = [
        {"name": "good", "config": {"compaction": {"min_input_files": 2}}},
        {"name": "typo", "config": {"snapshot_expiry": {"retain_last": 0}, "vacuum": {}}},
        {"name": "plain", "config": None},
        {"name": "text", "config": "compaction"},
    ]

    def make(table: dict[str, Any]) -> m.Target:
        plan = m.parse_config(table["config"], f"table lh.s.{table['name']}")
        return m.Target("lh", "s", table["name"], plan.options)

    lines: list[str] = []
    targets, failed = m.select_targets(tables, lambda t: f"lh.s.{t['name']}", make, lines.append)
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
    summary = m.failure_summary(failed, len(tables))
    assert summary.startswith("lakehouse_maintain: 2 operation(s) failed on 2 of 4 table(s):")
    assert "  - lh.s.typo maintenance config: invalid maintenance config: unknown key" in summary


def test_failure_summary_counts_tables():
    text = m.failure_summary([("a.b.c", "compaction", "boom"), ("a.b.c", "orphan_cleanup", "x")], 3)
    assert text.startswith("lakehouse_maintain: 2 operation(s) failed on 1 of 3 table(s):\n")
    assert "  - a.b.c compaction: boom\n" in text


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

    plan = m.parse_config(None, "x")
    targets = [m.Target("lh", "s", name, plan.options) for name in ("bad", "good")]
    lines: list[str] = []
    effects, failed = m.maintain(
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

    delta = m.DeltaLog(
        exists=lambda t: t.name == "dual",
        follow=lambda t: calls.append(f"follow {t.name}"),
        checkpoint=lambda t: 7,
    )
    plan = m.parse_config(None, "x")
    targets = [m.Target("lh", "s", name, plan.options) for name in ("dual", "plain")]
    lines: list[str] = []
    operations = ["compaction", "snapshot_expiry", "delta_checkpoint"]
    _, failed = m.maintain(query, lambda _: {}, targets, operations, False, lines.append, delta)
    assert failed == []
    follows = [i for i, c in enumerate(calls) if c.startswith("follow")]
    expiry = next(i for i, c in enumerate(calls) if "expire_snapshots" in c)
    assert [calls[i] for i in follows] == ["follow dual"] and follows[0] < expiry
    assert lines[2].startswith("lh.s.dual delta_checkpoint: Delta checkpoint at version 7; ")
    assert lines[5] == (
        "lh.s.plain delta_checkpoint: skipped: no Delta log at the table root (its "
        "table_formats hold no delta)"
    )
    dry, _ = m.maintain(query, lambda _: {}, targets[:1], ["delta_checkpoint"], True, print, delta)
    assert dry[0].notes == ["would write a Delta checkpoint of the log's current version"]


# ---- compaction scope: the partitions a run wrote ---------------------------------------------


def test_scope_is_table_or_run():
    assert m.parse_config(None, "x").options["compaction"]["scope"] == "table"
    plan = m.parse_config({"compaction": {"scope": "run"}}, "x")
    assert plan.options["compaction"]["scope"] == "run"
    with pytest.raises(m.MaintenanceConfigError) as raised:
        m.parse_config({"compaction": {"scope": "partition"}}, "model 'x'")
    assert "compaction.scope must be one of table, run, got 'partition'" in raised.value.msg
    with pytest.raises(m.MaintenanceConfigError, match="accepted: target_file_size_mb, "):
        m.parse_config({"compaction": {"scopes": "run"}}, "x")


DESCRIBED = [
    ("id", "bigint", None),
    ("ts", "timestamp", None),
    ("odd `col`", "string", None),
    ("st", "struct<a:int>", None),
    ("", "", ""),
    ("# Partitioning", "", ""),
    ("Part 0", "days(ts)", ""),
    ("Part 1", "bucket(16, id)", ""),
    ("Part 2", "truncate(4, `odd ``col```)", ""),
    ("Part 3", "st.a", ""),
    ("", "", ""),
    ("# Metadata Columns", "", ""),
    ("_spec_id", "int", ""),
    ("", "", ""),
    ("# Detailed Table Information", "", ""),
    ("Name", "lh.s.t", ""),
]


def test_the_current_spec_and_columns_come_from_describe():
    columns, fields = cs.parse_describe(DESCRIBED)
    assert columns == {
        "id": "bigint",
        "ts": "timestamp",
        "odd `col`": "string",
        "st": "struct<a:int>",
    }
    assert [(f.transform, f.column, f.param, f.name) for f in fields] == [
        ("days", ("ts",), None, "ts_day"),
        ("bucket", ("id",), 16, "id_bucket"),
        ("truncate", ("odd `col`",), 4, "odd `col`_trunc"),
        ("identity", ("st", "a"), None, "st.a"),
    ]
    assert fields[2].quoted_column == "`odd ``col```"
    assert fields[3].quoted_column == "`st`.`a`"


def test_an_identity_only_spec_is_described_as_partition_information():
    rows = [
        ("id", "int", None),
        ("region", "string", None),
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("region", "string", None),
        ("`st`.`a`", "int", None),
        ("", "", ""),
        ("# Metadata Columns", "", ""),
    ]
    columns, fields = cs.parse_describe(rows)
    assert columns == {"id": "int", "region": "string"}
    assert [(f.transform, f.column, f.source_type) for f in fields] == [
        ("identity", ("region",), "string"),
        ("identity", ("st", "a"), "int"),
    ]
    assert cs.parse_describe([("id", "int", None)]) == ({"id": "int"}, [])


def spec(text: str) -> cs.SpecField:
    return cs.parse_spec_field(text)


@pytest.mark.parametrize(
    "field, kind, value, expected",
    [
        # identity: one value of the column's type
        ("region", "string", "it's a \\ %_", "`region` = 'it\\'s a \\\\ %_'"),
        ("region", "string", None, "`region` IS NULL"),
        ("n", "int", -5, "`n` = -5"),
        ("n", "bigint", 9223372036854775807, "`n` = 9223372036854775807"),
        ("flag", "boolean", False, "`flag` = false"),
        ("m", "decimal(10,2)", Decimal("-0.05"), "`m` = -0.05BD"),
        ("d", "date", "1969-12-31", "`d` = DATE'1969-12-31'"),
        (
            "ts",
            "timestamp",
            "2024-01-02 03:04:05.123456",
            "`ts` = TIMESTAMP'2024-01-02 03:04:05.123456 UTC'",
        ),
        (
            "ts",
            "timestamp_ntz",
            "2024-01-02 03:04:05.000000",
            "`ts` = TIMESTAMP_NTZ'2024-01-02 03:04:05.000000'",
        ),
        ("x", "double", 1.5, None),  # no exact literal here: left out
        ("x", "binary", "AAE=", None),
        # time transforms: a half-open range on the source column, in its own type
        (
            "days(ts)",
            "timestamp",
            "2024-02-29",
            "`ts` >= TIMESTAMP'2024-02-29 00:00:00 UTC'"
            " AND `ts` < TIMESTAMP'2024-03-01 00:00:00 UTC'",
        ),
        (
            "days(ts)",
            "timestamp_ntz",
            "2024-12-31",
            "`ts` >= TIMESTAMP_NTZ'2024-12-31 00:00:00'"
            " AND `ts` < TIMESTAMP_NTZ'2025-01-01 00:00:00'",
        ),
        ("days(d)", "date", "1900-01-01", "`d` >= DATE'1900-01-01' AND `d` < DATE'1900-01-02'"),
        ("days(d)", "date", None, "`d` IS NULL"),
        (
            "hours(ts)",
            "timestamp",
            -1,
            "`ts` >= TIMESTAMP'1969-12-31 23:00:00 UTC'"
            " AND `ts` < TIMESTAMP'1970-01-01 00:00:00 UTC'",
        ),
        ("hours(d)", "date", 5, None),
        ("months(d)", "date", 649, "`d` >= DATE'2024-02-01' AND `d` < DATE'2024-03-01'"),
        ("months(d)", "date", -12, "`d` >= DATE'1969-01-01' AND `d` < DATE'1969-02-01'"),
        (
            "months(ts)",
            "timestamp",
            659,
            "`ts` >= TIMESTAMP'2024-12-01 00:00:00 UTC'"
            " AND `ts` < TIMESTAMP'2025-01-01 00:00:00 UTC'",
        ),
        ("years(d)", "date", -20, "`d` >= DATE'1950-01-01' AND `d` < DATE'1951-01-01'"),
        ("years(d)", "date", 8029, "`d` >= DATE'9999-01-01'"),  # no year 10000 to end at
        ("years(d)", "date", 9000, None),
        # truncate: a prefix, or the whole value when shorter than the width
        ("truncate(3, s)", "string", "ab%", "startswith(`s`, 'ab%')"),
        ("truncate(3, s)", "string", "it'", "startswith(`s`, 'it\\'')"),
        ("truncate(3, s)", "string", "ab", "`s` = 'ab'"),
        ("truncate(3, s)", "string", "éàü", "startswith(`s`, 'éàü')"),
        ("truncate(3, s)", "string", None, "`s` IS NULL"),
        ("truncate(10, k)", "int", -20, "`k` >= -20 AND `k` < -10"),
        ("truncate(10, k)", "int", 2147483640, None),  # where Iceberg's truncate wraps
        ("truncate(100, k)", "bigint", 200, "`k` >= 200 AND `k` < 300"),
        ("truncate(50, m)", "decimal(10,2)", Decimal("12.5"), "`m` >= 12.50BD AND `m` < 13.00BD"),
        ("truncate(50, m)", "decimal(4,2)", Decimal("99.50"), "`m` >= 99.50BD"),
        (
            "truncate(50, m)",
            "decimal(4,2)",
            Decimal("-99.50"),
            "`m` >= -99.50BD AND `m` < -99.00BD",
        ),
        ("truncate(4, b)", "binary", "AAE=", None),
        # no filter form
        ("bucket(16, id)", "bigint", 3, None),
        ("bucket(16, id)", "bigint", None, None),
        ("void(id)", "bigint", None, None),
        ("zorder(id)", "bigint", 3, None),
    ],
)
def test_field_filter(field: str, kind: str, value: Any, expected: str | None):
    assert cs.field_filter(spec(field), kind, value, nulls_known=True) == expected


def test_a_null_of_a_field_the_files_spec_may_lack_is_left_out():
    assert cs.field_filter(spec("days(ts)"), "timestamp", None, nulls_known=False) is None
    assert cs.field_filter(spec("region"), "string", "eu", nulls_known=False) == "`region` = 'eu'"


COLUMNS = {"id": "bigint", "ts": "timestamp", "region": "string"}


def test_run_filter_ors_the_partitions_and_leaves_out_bucket():
    fields = [spec("days(ts)"), spec("bucket(4, id)"), spec("region")]
    partitions = [
        ({"ts_day": "2024-01-02", "id_bucket": 1, "region": "eu"}, True),
        ({"ts_day": "2024-01-02", "id_bucket": 3, "region": "eu"}, True),  # same filter
        ({"ts_day": None, "id_bucket": 0, "region": "us"}, True),
    ]
    found = cs.run_filter(fields, COLUMNS, partitions)
    assert found.where == (
        "(`ts` >= TIMESTAMP'2024-01-02 00:00:00 UTC' AND `ts` < TIMESTAMP'2024-01-03 00:00:00 UTC'"
        " AND `region` = 'eu') OR (`ts` IS NULL AND `region` = 'us')"
    )
    assert found.left_out == ("bucket(4, id)",)
    one = cs.run_filter(fields, COLUMNS, partitions[:1])
    assert one.where is not None and not one.where.startswith("(")


def test_run_filter_is_the_whole_table_when_a_partition_has_no_filter():
    fields = [spec("days(ts)"), spec("bucket(4, id)")]
    partitions = [
        ({"ts_day": "2024-01-02", "id_bucket": 1}, True),
        ({"ts_day": None, "id_bucket": 2}, False),
    ]
    found = cs.run_filter(fields, COLUMNS, partitions)
    assert found.where is None
    assert found.left_out == ("bucket(4, id)", "days(ts)")
    assert cs.run_filter([spec("bucket(4, id)")], COLUMNS, [({"id_bucket": 1}, True)]).where is None


def test_run_filter_leaves_out_renamed_fields_and_unknown_columns():
    # A field renamed by its owner (`ADD PARTITION FIELD days(ts) AS day`) is not in the tuple
    # under Iceberg's default name; a nested source column has no known type.
    fields = [spec("days(ts)"), spec("region"), spec("st.a"), spec("gone")]
    values = {"day": "2024-01-02", "region": "eu", "st.a": 1, "gone": 2}
    found = cs.run_filter(fields, COLUMNS, [(values, True)])
    assert found.where == "`region` = 'eu'"
    assert found.left_out == ("days(ts)", "st.a", "gone")


def test_which_run():
    after_run = cs.choose_run("0123456789abcdef", [])
    assert after_run == cs.RunChoice("0123456789abcdef", "invocation 01234567…")
    line = [(3, "append", "inv-3"), (2, "append", "inv-2")]
    assert cs.choose_run(None, line) == cs.RunChoice(
        "inv-3", "invocation inv-3 (made the current snapshot)"
    )
    # Compaction and manifest rewrites (`replace`, committed by procedures without a dbt
    # invocation id) change no row: the last write before them is the run.
    rewritten = [(5, "replace", None), (4, "replace", None), *line]
    assert cs.choose_run(None, rewritten) == cs.RunChoice(
        "inv-3", "invocation inv-3 (made snapshot 3, the last write before 2 file rewrite(s))"
    )
    outside = cs.choose_run(None, [(7, "overwrite", None), *line])
    assert outside.invocation is None
    assert outside.label == (
        "its last write (snapshot 7) carries no dbt.invocation_id (written outside dbt, or "
        "under Spark Connect, where commits do not name their run)"
    )
    assert cs.choose_run(None, []) == cs.RunChoice(None, "the table has no snapshot yet")
    assert cs.choose_run(None, [(5, "replace", None)]).invocation is None


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


def run_scoped(table: FakeTable, invocation: str | None, dry_run: bool = False) -> m.Effect:
    options = m.parse_config({"compaction": {"scope": "run", "min_input_files": 2}}, "x").options
    target = m.Target("lh", "s", "t", options, run_invocation=invocation)
    return m.run_operation(table, lambda _: {}, target, "compaction", dry_run=dry_run)


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
    line = m.format_effect(effect)
    assert line.startswith(
        "lh.s.t compaction: scope run: 2 partition(s) of invocation 01234567…, 6 small file(s); "
        "data files 6 → 2 (avg 1000 B → 2.4 KiB); the rewrite's filter leaves out bucket(4, id) "
        "(no filter form), so small files of neighbouring partitions may be rewritten too; "
        "6 rewritten into 2; "
    ), line


def test_run_scoped_compaction_with_nothing_written_or_no_dbt_run():
    table = FakeTable([], [])
    line = m.format_effect(run_scoped(table, "0123456789abcdef"))
    assert (
        "scope run: invocation 01234567… left no live data files in the table; nothing to do"
        in line
    )
    assert not any(s.startswith("CALL") for s in table.statements)
    # lakehouse_maintain on a table last written outside dbt: the whole table, saying why.
    table = FakeTable([(9, "append", None)], [])
    line = m.format_effect(run_scoped(table, None, dry_run=True))
    assert line.startswith(
        "lh.s.t compaction (dry run): scope run falls back to the whole table: its last write "
        "(snapshot 9) carries no dbt.invocation_id (written outside dbt, or under Spark "
        "Connect, where commits do not name their run); data files 6 → 6"
    ), line
    assert not any(".entries" in s for s in table.statements)
    assert "6 small file(s) would be rewritten" in line


def test_early_years_are_zero_padded():
    assert cs.field_filter(spec("years(d)"), "date", -1000, True) == (
        "`d` >= DATE'0970-01-01' AND `d` < DATE'0971-01-01'"
    )
