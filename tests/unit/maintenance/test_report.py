"""The line per table and operation, and the error a run ends with (maintenance/report.py)."""

from __future__ import annotations

from dbt.adapters.lakehouse.maintenance.report import (
    LISTED_ORPHANS,
    Effect,
    failure_summary,
    format_effect,
    human_bytes,
)


def test_lines():
    compaction = Effect(
        "lh.s.t",
        "compaction",
        1.234,
        files_before=20,
        files_after=1,
        bytes_before=20 * 1024,
        bytes_after=15 * 1024,
        notes=["20 rewritten into 1"],
    )
    assert format_effect(compaction) == (
        "lh.s.t compaction: data files 20 → 1 (avg 1.0 KiB → 15.0 KiB); 20 rewritten into 1; 1.23 s"
    )
    expiry = Effect("lh.s.t", "snapshot_expiry", 0.5, snapshots_before=22, snapshots_after=4)
    assert format_effect(expiry) == (
        "lh.s.t snapshot_expiry: expired 18 snapshot(s), 22 → 4; 0.50 s"
    )
    orphans = Effect("lh.s.t", "orphan_cleanup", 2, dry_run=True, orphan_files=1, orphan_bytes=1000)
    assert format_effect(orphans) == (
        "lh.s.t orphan_cleanup (dry run): would remove 1 orphan file(s), 1000 B; 2.00 s"
    )
    skipped = Effect("lh.s.t", "compaction", skipped="the table holds open audit branch(es) x")
    assert format_effect(skipped) == (
        "lh.s.t compaction: skipped: the table holds open audit branch(es) x"
    )
    assert human_bytes(3 * 1024 * 1024) == "3.0 MiB"


def test_a_dry_run_lists_its_orphans_capped():
    paths = [(f"s3://b/w/t/data/orphan-{i:02d}.parquet", 1000 + i) for i in range(23)]
    paths[1] = (paths[1][0], None)  # vanished before its size was read
    orphans = Effect(
        "lh.s.t",
        "orphan_cleanup",
        0.5,
        dry_run=True,
        orphan_files=23,
        orphan_bytes=23_000,
        orphan_paths=paths,
    )
    lines = format_effect(orphans).split("\n")
    assert lines[0] == (
        "lh.s.t orphan_cleanup (dry run): would remove 23 orphan file(s), 22.5 KiB; 0.50 s"
    )
    assert lines[1] == "    s3://b/w/t/data/orphan-00.parquet (1000 B)"
    assert lines[2] == "    s3://b/w/t/data/orphan-01.parquet (?)"
    assert len(lines) == 1 + LISTED_ORPHANS + 1
    assert lines[LISTED_ORPHANS] == "    s3://b/w/t/data/orphan-19.parquet (1019 B)"
    assert lines[-1] == "    ... and 3 more"
    orphans.orphan_paths, orphans.orphan_files = paths[:2], 2
    assert format_effect(orphans).split("\n")[1:] == [
        "    s3://b/w/t/data/orphan-00.parquet (1000 B)",
        "    s3://b/w/t/data/orphan-01.parquet (?)",
    ]


def test_failure_summary_counts_tables():
    text = failure_summary([("a.b.c", "compaction", "boom"), ("a.b.c", "orphan_cleanup", "x")], 3)
    assert text.startswith("lakehouse_maintain: 2 operation(s) failed on 1 of 3 table(s):\n")
    assert "  - a.b.c compaction: boom\n" in text
