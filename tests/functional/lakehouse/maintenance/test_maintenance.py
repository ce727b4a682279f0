"""Iceberg table maintenance: a model's `maintenance.after_run` and `lakehouse_maintain`, with
effects read from the table's Iceberg metadata tables.

One project, one table story, steps in order: many small files (a build and 3 small
merge-on-read merges, each a `dbt run` of the incremental model with the next batch), compacted
by the last run's after_run with contents unchanged; snapshot expiry keeping exactly what
retention says, a tag, and an open audit branch that can still be published afterwards; orphan
cleanup (dry run first, listing the orphan); a bad config refused before any write;
`full_maintenance` over several tables where one operation and one table's config fail and the
others still run. Compaction `scope: run`: test_maintenance_scope_run.py.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.maintenance.maintenance_runs import (
    maintain,
    messages,
    one,
    snapshot_summary,
)
from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.tables import table

ROWS = 20  # ids 0..19 from the model's build
MERGES = 3  # each: two of the build's rows changed, one row added (each merge is a `dbt run`)


def batch_ids(batch: int) -> tuple[int, int, int]:
    """The ids merge `batch` (1..MERGES) writes: two existing ones, changed, and a new one."""
    return (batch - 1) % ROWS, (batch + 9) % ROWS, ROWS - 1 + batch


EVENTS_SQL = """
{{ config(
    materialized='incremental', unique_key='id', incremental_strategy='merge',
    table_properties={'write.merge.mode': 'merge-on-read'},
    maintenance={
      'after_run': var('after', []),
      'snapshot_expiry': {'retain_days': 0, 'retain_last': 1},
    },
) }}
{% set batch = var('batch', 0) %}
{% if is_incremental() and batch > 0 %}
select cast(id as bigint) as id, concat('b{{ batch }}-', cast(id as string)) as v
from values ({{ (batch - 1) % ROWS }}), ({{ (batch + 9) % ROWS }}), ({{ ROWS - 1 + batch }})
  as t(id)
{% else %}
select id, concat('v', cast(id as string)) as v from range({{ ROWS }}) as r(id)
{% endif %}
""".replace("ROWS", str(ROWS))
# A sort compaction without the write_order_by it sorts by: lakehouse_maintain fails on it.
UNSORTED_SQL = """
{{ config(materialized='table', tags=['nightly'],
          maintenance={'compaction': {'strategy': 'sort'}}) }}
select 1 as id
"""
SMALL_SQL = "{{ config(materialized='table', tags=['nightly']) }}\nselect 1 as id"
# Built with no maintenance config; lakehouse_maintain then runs with a var giving it an
# invalid one, which fails this table alone.
TYPO_SQL = """
{{ config(materialized='table', tags=['nightly'], maintenance=var('typo_maintenance', none)) }}
select 1 as id
"""
BAD_SQL = """
{{ config(materialized='table', maintenance={'after_run': ['compact'],
                                             'snapshot_expiry': {'retain_last': 0}}) }}
select 1 as id
"""
AUDIT_BRANCH = "audit_0123abcd"


def checksum(project, name: str, version: str = "") -> tuple:
    """Row count and an order-independent sum of row hashes."""
    return one(
        project,
        "select count(*), sum(cast(xxhash64(id, v) as decimal(38, 0))) "
        f"from {table(project, name)}{version}",
    )


def data_files(project, name: str) -> int:
    return one(project, f"select count(*) from {table(project, name)}.files where content = 0")[0]


def delete_files(project, name: str) -> int:
    return one(project, f"select count(*) from {table(project, name)}.files where content > 0")[0]


def summary_total(project, name: str, snapshot: int, key: str) -> int:
    found = one(
        project,
        f"select summary['{key}'] from {table(project, name)}.snapshots "
        f"where snapshot_id = {snapshot}",
    )
    return int(found[0])


def reachable(project, name: str) -> tuple[int, ...]:
    """Files any snapshot still references: data files, delete files, manifests, manifest
    lists (what expire_snapshots may delete)."""
    t = table(project, name)
    return one(
        project,
        f"select (select count(distinct file_path) from {t}.all_data_files), "
        f"(select count(distinct file_path) from {t}.all_delete_files), "
        f"(select count(distinct path) from {t}.all_manifests), "
        f"(select count(distinct manifest_list) from {t}.snapshots)",
    )


def snapshot_ids(project, name: str) -> set[int]:
    found = project.run_sql(f"select snapshot_id from {table(project, name)}.snapshots", "all")
    return {int(r[0]) for r in found}


def refs(project, name: str) -> dict[str, int]:
    found = project.run_sql(f"select name, snapshot_id from {table(project, name)}.refs", "all")
    return {str(r[0]): int(r[1]) for r in found}


def main_line(project, name: str) -> list[int]:
    """main's snapshots, newest first."""
    found = project.run_sql(
        f"select snapshot_id from {table(project, name)}.history where is_current_ancestor "
        "order by made_current_at desc",
        fetch="all",
    )
    return [int(r[0]) for r in found]


class TestMaintenance:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "events.sql": EVENTS_SQL,
            "unsorted.sql": UNSORTED_SQL,
            "small.sql": SMALL_SQL,
            "bad.sql": BAD_SQL,
            "typo.sql": TYPO_SQL,
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    def test_1_after_run_compaction_keeps_contents(self, project):
        run_dbt(["run", "-s", "events", "unsorted", "small", "typo"])
        expected = {i: f"v{i}" for i in range(ROWS)}
        out = ""
        for batch in range(1, MERGES + 1):
            # The last merge's after_run compacts what the merges left.
            after = "[compaction]" if batch == MERGES else "[]"
            _, out = run_dbt_and_capture(
                ["run", "-s", "events", "--vars", f"{{batch: {batch}, after: {after}}}"]
            )
            expected.update({i: f"b{batch}-{i}" for i in batch_ids(batch)})
        out = messages(out)
        # main: the last merge's snapshot, then the compaction's `replace` snapshots (data
        # files, then position delete files).
        history = [
            snapshot_summary(project, "events", str(s)) for s in main_line(project, "events")
        ]
        operations = [s[2] for s in history]
        assert operations[:3] == ["replace", "replace", "overwrite"], operations
        merged = history[2][0]
        before = checksum(project, "events", f" version as of {merged}")
        assert before[0] == ROWS + MERGES
        # Merge-on-read: each merge added at least one data file (its rows) and deleted the
        # two rows it changed by position, all in small files.
        files_before = summary_total(project, "events", merged, "total-data-files")
        deletes_before = summary_total(project, "events", merged, "total-delete-files")
        assert files_before >= 1 + MERGES and deletes_before >= 1, (files_before, deletes_before)
        assert summary_total(project, "events", merged, "total-position-deletes") == 2 * MERGES

        # Unpartitioned and far below the target size: one data file, no delete file left.
        assert data_files(project, "events") == 1
        assert delete_files(project, "events") == 0
        assert checksum(project, "events") == before
        rows = project.run_sql(f"select id, v from {table(project, 'events')}", fetch="all")
        assert {int(r[0]): str(r[1]) for r in rows} == expected
        line = next(x for x in out.splitlines() if " compaction: " in x)
        assert re.search(rf"data files {files_before} → 1 \(avg [\d.]+ \w+ → [\d.]+ \w+\)", line), (
            line
        )
        assert f"{files_before} rewritten into 1" in line and line.endswith(" s"), line
        # Iceberg itself drops a delete file scoped to one rewritten data file; the rewrite
        # removes the dangling rest, and rewrite_position_delete_files writes none back.
        dangling = re.search(r"; (\d+) dangling delete file\(s\) removed;", line)
        rewritten = re.search(r"; position delete files (\d+) rewritten into 0;", line)
        assert rewritten, line
        removed = int(dangling[1] if dangling else 0) + int(rewritten[1])
        assert 0 < removed <= deletes_before, (line, deletes_before)

    def test_2_snapshot_expiry_keeps_refs_and_the_audit_branch(self, project):
        events = table(project, "events")
        oldest = main_line(project, "events")[-1]
        tagged_rows = checksum(project, "events", f" version as of {oldest}")
        project.run_sql(f"alter table {events} create tag kept as of version {oldest}")
        # An audited run's branch, left open: its own snapshots must survive, so it can still
        # be published (fast-forwarded) afterwards.
        main_head = main_line(project, "events")[0]
        project.run_sql(f"alter table {events} create branch {AUDIT_BRANCH}")
        for i in range(2):
            project.run_sql(f"insert into {events}.branch_{AUDIT_BRANCH} values ({100 + i}, 'b')")
        branch_head = refs(project, "events")[AUDIT_BRANCH]
        before = snapshot_ids(project, "events")
        files_before = reachable(project, "events")
        # The call's own options, laid over the model's retain_last 1: nothing expires.
        args = {"select": ["events"], "operations": ["snapshot_expiry"]}
        maintain({**args, "snapshot_expiry": {"retain_last": 1000}})
        assert snapshot_ids(project, "events") == before
        # Options for an operation the call does not run are refused, nothing changed.
        out = maintain({**args, "compaction": {"target_file_size_mb": 1}}, expect_pass=False)
        assert "compaction options were given, but compaction is not among the operations" in out
        assert snapshot_ids(project, "events") == before
        time.sleep(0.05)

        out = maintain({"select": ["events"], "operations": ["snapshot_expiry"]})
        # retain_days 0, retain_last 1: main keeps its head; the tag its snapshot; the branch
        # its own two snapshots (its walk back stops at main's head, which main keeps).
        kept = snapshot_ids(project, "events")
        branch_own = kept - {main_head, oldest}
        assert main_head in kept and oldest in kept and branch_head in kept
        assert len(kept) == 4 and len(branch_own) == 2, (kept, before)
        line = next(x for x in out.splitlines() if " snapshot_expiry: " in x)
        assert f"expired {len(before) - 4} snapshot(s), {len(before)} → 4" in line, line
        assert f"keep the own snapshots of branch(es) {AUDIT_BRANCH} (2)" in line, line
        # What Iceberg reports deleting is what no kept snapshot references any more: the
        # merges' data and delete files, their manifests and the expired manifest lists.
        gone = [b - a for b, a in zip(files_before, reachable(project, "events"), strict=True)]
        assert gone[0] >= MERGES and gone[1] >= MERGES and gone[3] == len(before) - 4, gone
        assert (
            f"deleted {gone[0]} data file(s), {gone[1]} delete file(s), {gone[2]} manifest(s), "
            f"{gone[3]} manifest list(s)" in line
        ), (line, gone)
        assert refs(project, "events") == {
            "main": main_head,
            "kept": oldest,
            AUDIT_BRANCH: branch_head,
        }
        # Time travel to a kept snapshot still reads it.
        assert checksum(project, "events", " version as of 'kept'") == tagged_rows
        assert checksum(project, "events", f" version as of {oldest}") == tagged_rows
        # Compaction now would move main past the open branch: skipped, saying why.
        out = maintain({"select": ["events"], "operations": ["compaction"]})
        assert f"compaction: skipped: the table holds open audit branch(es) {AUDIT_BRANCH}" in out
        # The branch is still publishable.
        project.run_sql(
            f"call `{project.database}`.system.fast_forward("
            f"'`{project.test_schema}`.`events`', 'main', '{AUDIT_BRANCH}')"
        )
        project.run_sql(f"alter table {events} drop branch {AUDIT_BRANCH}")
        assert checksum(project, "events")[0] == ROWS + MERGES + 2

    def test_3_orphan_cleanup(self, project, request):
        data_file = str(
            one(project, f"select file_path from {table(project, 'events')}.files limit 1")[0]
        )
        folder = data_file.rsplit("/", 1)[0]
        fresh = f"{folder}/orphan-fresh.parquet"
        old = f"{folder}/orphan-old.parquet"
        local = request.config.getoption("--profile") == "local"
        if local:
            for path in (fresh, old):
                Path(path.removeprefix("file:")).write_bytes(b"x" * 1000)
            five_days_ago = time.time() - 5 * 86400
            os.utime(old.removeprefix("file:"), (five_days_ago, five_days_ago))
        else:
            # An S3 object's age is its Last-Modified, which the server sets on upload: an old
            # orphan cannot be planted there, only a fresh one (the old one is covered locally).
            s3 = request.getfixturevalue("s3_server")
            bucket, key = re.match(r"s3a?://([^/]+)/(.+)$", fresh).groups()
            s3.client().put_object(Bucket=bucket, Key=key, Body=b"x" * 1000)

        def exists(path: str) -> bool:
            if local:
                return Path(path.removeprefix("file:")).exists()
            bucket, key = re.match(r"s3a?://([^/]+)/(.+)$", path).groups()
            listed = s3.client().list_objects_v2(Bucket=bucket, Prefix=key)
            return listed.get("KeyCount", 0) > 0

        out = maintain({"select": ["events"], "operations": ["orphan_cleanup"], "dry_run": True})
        expected = 1 if local else 0
        assert f"orphan_cleanup (dry run): would remove {expected} orphan file(s)" in out, out
        # The dry run lists what it would remove (Iceberg may spell a local path file:/ or
        # file:///), and nothing younger than the cutoff.
        listed = [x.strip() for x in out.splitlines() if x.startswith("    ")]
        if local:
            assert len(listed) == 1, out
            assert listed[0].endswith(f"{old.removeprefix('file:').lstrip('/')} (1000 B)"), out
        else:
            assert listed == [], out
        assert "orphan-fresh" not in out, out
        assert exists(fresh) and (not local or exists(old))

        out = maintain({"select": ["events"], "operations": ["orphan_cleanup"]})
        size = "1000 B" if local else "0 B"
        assert f"orphan_cleanup: removed {expected} orphan file(s), {size}" in out, out
        assert exists(fresh)
        if local:
            assert not exists(old)
        assert checksum(project, "events")[0] == ROWS + MERGES + 2

    def test_4_bad_config_is_refused_before_any_write(self, project):
        results, out = run_dbt_and_capture(["run", "-s", "bad"], expect_pass=False)
        message = results[0].message
        assert "Invalid maintenance config for model 'bad'" in message, message
        assert "after_run has unknown operation(s) 'compact'; accepted: compaction, " in message
        assert "snapshot_expiry.retain_last is 0" in message
        assert "Nothing was written." in message
        assert project.adapter.get_relation(project.database, project.test_schema, "bad") is None

    # Which operations run, and going on past a failing one, is the adapter's own loop: the
    # same whatever storage holds the files (CI time).
    @pytest.mark.only_profile("local")
    def test_5_full_maintenance_goes_on_past_a_failing_table(self, project):
        out = maintain(
            {"select": ["events", "tag:nightly"], "operations": ["full_maintenance"]},
            expect_pass=False,
            dbt_vars="{typo_maintenance: {snapshot_expiry: {retain_last: 0}}}",
        )
        for name in ("events", "small"):
            for operation in ("compaction", "snapshot_expiry", "orphan_cleanup"):
                assert re.search(rf"\.{name} {operation}: ", out), (name, operation, out)
            assert re.search(rf"\.{name} metadata_cleanup: manifests \d+ → \d+", out), out
            assert f".{name} delta_checkpoint: skipped: no Delta log at the table root" in out
        assert "unsorted compaction: FAILED: compaction.strategy is 'sort'" in out, out
        # The invalid config fails its own table, which runs nothing; the others ran.
        assert (
            ".typo maintenance config: FAILED: invalid maintenance config: "
            "snapshot_expiry.retain_last is 0" in out
        ), out
        assert not re.search(r"\.typo (compaction|snapshot_expiry|orphan_cleanup)", out), out
        assert "lakehouse_maintain: 2 operation(s) failed on 2 of 4 table(s):" in out, out
        assert re.search(r"  - \S+\.typo maintenance config: invalid maintenance config", out)
        # The failing table's other operations still ran.
        assert re.search(r"\.unsorted snapshot_expiry: ", out), out
        properties = dict(
            project.run_sql(f"show tblproperties {table(project, 'events')}", fetch="all")
        )
        assert properties["write.metadata.delete-after-commit.enabled"] == "true"
        assert properties["write.metadata.previous-versions-max"] == "100"
        assert checksum(project, "events")[0] == ROWS + MERGES + 2

    # Audited runs are refused under Spark Connect (test_connect.py).
    @pytest.mark.only_profile("local", "s3_rest", "cluster")
    def test_6_audited_run_skips_after_run_and_still_publishes(self, project):
        main_before = refs(project, "events")["main"]
        _, out = run_dbt_and_capture(
            ["run", "-s", "events", "--target", "audited", "--vars", "{after: [compaction]}"]
        )
        out = messages(out)
        assert "maintenance after_run skipped: this audited run's rows are on branch audit_" in out
        assert "Audited run published" in out, out
        after = refs(project, "events")
        assert after["main"] != main_before and set(after) == {"main", "kept"}, after
        assert checksum(project, "events")[0] == ROWS + MERGES + 2
