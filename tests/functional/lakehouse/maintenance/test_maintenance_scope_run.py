"""Compaction `scope: run` (docs/maintenance.md): a model's `maintenance.after_run` and
`lakehouse_maintain` compact only the partitions the run wrote, read from the table's Iceberg
metadata tables. The rest of maintenance: test_maintenance.py.
"""

from __future__ import annotations

import re

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.maintenance.maintenance_runs import (
    maintain,
    messages,
    one,
    snapshot_summary,
)
from functional.lakehouse.shared.tables import table

# Compaction `scope: run`: one run appends rows for two days (`day` var) in three commits (the
# model's write and two post-hook INSERTs, all carrying the run's invocation id), so each of
# its partitions (day x bucket) holds three small files. The bucket field has no `where` form,
# so the rewrite's filter covers the run's days in every bucket (a superset).
SPREAD_ROWS = """
select cast(id as bigint) as id, concat('v', cast(id as string)) as v,
       timestamp_seconds(1704067200 + 86400 * ({{ var('day', 0) }} + id % 2)) as ts
from range(12) as r(id)
"""
SPREAD_SQL = (
    """
{{ config(
    materialized='incremental',
    partition_by=['days(ts)', 'bucket(2, id)'],
    post_hook=["insert into {{ this }} """
    + SPREAD_ROWS.replace("\n", " ")
    + """"] * 2,
    maintenance={
      'after_run': var('after', []),
      'compaction': {'scope': 'run', 'min_input_files': 2},
    },
) }}
"""
    + SPREAD_ROWS
)


def partition_files(project, name: str) -> dict[str, set[str]]:
    """Data file paths by partition (its day and bucket as text)."""
    found = project.run_sql(
        "select cast(partition.ts_day as string) || '/' || cast(partition.id_bucket as string), "
        f"file_path from {table(project, name)}.files where content = 0",
        fetch="all",
    )
    by_partition: dict[str, set[str]] = {}
    for partition, path in found:
        by_partition.setdefault(str(partition), set()).add(str(path))
    return by_partition


def spread_checksum(project, version: str = "") -> tuple:
    return one(
        project,
        "select count(*), sum(cast(xxhash64(id, v, ts) as decimal(38, 0))) "
        f"from {table(project, 'spread')}{version}",
    )


# Under Spark Connect commits do not name their run, so `scope: run` is the whole table. Which
# partitions a run wrote is read from metadata, the same on any storage (CI time: not s3_rest).
@pytest.mark.only_profile("local", "cluster")
class TestCompactionScopeRun:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"spread.sql": SPREAD_SQL}

    @staticmethod
    def _days(by_partition: dict[str, set[str]], days: list[str]) -> dict[str, set[str]]:
        return {p: f for p, f in by_partition.items() if p.split("/")[0] in days}

    def test_compaction_covers_only_the_partitions_the_run_wrote(self, project):
        # Two runs without after_run: days 1-2, then 3-4, three small files per partition.
        run_dbt(["run", "-s", "spread", "--vars", "{day: 0}"])
        run_dbt(["run", "-s", "spread", "--vars", "{day: 2}"])
        earlier = partition_files(project, "spread")
        assert len(earlier) == 8 and all(len(f) == 3 for f in earlier.values()), earlier

        # The third run writes days 5-6 and compacts after its build.
        _, out = run_dbt_and_capture(
            ["run", "-s", "spread", "--vars", "{day: 4, after: [compaction]}"]
        )
        out = messages(out)
        _, parent, operation, _ = snapshot_summary(project, "spread", "main")
        assert operation == "replace", operation
        invocation = snapshot_summary(project, "spread", str(parent))[3]
        after = partition_files(project, "spread")
        run_days = ["2024-01-05", "2024-01-06"]
        # Other partitions: the very same files; the run's partitions: one file each.
        assert self._days(after, list({p.split("/")[0] for p in earlier})) == earlier
        assert set(self._days(after, run_days)) == {f"{d}/{b}" for d in run_days for b in (0, 1)}
        assert all(len(f) == 1 for f in self._days(after, run_days).values()), after
        # Compaction changed no row: the same rows as the run's last write.
        assert spread_checksum(project) == spread_checksum(project, f" version as of {parent}")
        assert spread_checksum(project)[0] == 3 * 3 * 12
        line = next(x for x in out.splitlines() if " compaction: " in x)
        assert (
            f"compaction: scope run: 4 partition(s) of invocation {invocation[:8]}…, "
            "12 small file(s); data files 12 → 4 (avg " in line
        ), line
        assert "leaves out bucket(2, id) (no filter form)" in line, line
        assert "12 rewritten into 4" in line, line

        # lakehouse_maintain writes nothing itself: scope run is the invocation that made the
        # current snapshot, here a fourth run without after_run (days 7-8).
        run_dbt(["run", "-s", "spread", "--vars", "{day: 6}"])
        before = partition_files(project, "spread")
        rows = spread_checksum(project)
        last = snapshot_summary(project, "spread", "main")[3]
        assert last and last != invocation
        out = maintain({"select": ["spread"], "operations": ["compaction"]})
        line = next(x for x in out.splitlines() if " compaction: " in x)
        assert (
            f"compaction: scope run: 4 partition(s) of invocation {last} (made the current "
            "snapshot), 12 small file(s); data files 12 → 4" in line
        ), line
        after = partition_files(project, "spread")
        last_days = ["2024-01-07", "2024-01-08"]
        assert {p: f for p, f in after.items() if p.split("/")[0] not in last_days} == {
            p: f for p, f in before.items() if p.split("/")[0] not in last_days
        }
        assert all(len(f) == 1 for f in self._days(after, last_days).values()), after
        assert spread_checksum(project) == rows
        # Again: the compaction's own snapshot (a `replace`, no dbt invocation id) is passed
        # over; the last write's files were all rewritten, so nothing is left to do.
        out = maintain({"select": ["spread"], "operations": ["compaction"]})
        assert re.search(
            rf"compaction: scope run: invocation {last} \(made snapshot \d+, the last write "
            r"before 1 file rewrite\(s\)\) left no live data files in the table; nothing to do",
            out,
        ), out
        assert partition_files(project, "spread") == after
