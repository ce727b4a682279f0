"""Incremental strategies against real Iceberg tables, each run checked row for row: composite
and null-safe merge keys, CDC deletes, latest_by, insert_overwrite touching only its
partitions, replace and full refresh keeping history, microbatch reruns, sync_all_columns,
and a merge killed mid-flight."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.tables import current_snapshot, expect, rows, snapshot_count, table

# A strategy's rows are SQL semantics, the same on every catalog and storage: the embedded
# lakehouse, and the profiles where the engine itself differs (tasks on a cluster's executors,
# statements in a Spark Connect server). The killed merge also runs on s3_rest: there the
# commit is the REST catalog's.
pytestmark = pytest.mark.only_profile("local", "cluster", "connect")


def merge_sql(project, model: str) -> str:
    """The main statement dbt ran for a model's last run (dbt writes it under target/run)."""
    (path,) = Path(project.project_root, "target", "run").glob(f"*/models/{model}.sql")
    return path.read_text()


# ---- merge: composite keys, NULL keys, full refresh --------------------------------------------

COMPOSITE_SQL = """
{{ config(materialized='incremental', unique_key=['id', 'region']) }}
{% set run = var('run', 1) %}
select id, region, v from values
{% if run == 1 %}
  (1, 'eu', 'a1'), (1, 'us', 'b1'), (2, 'eu', 'c1'), (3, cast(null as string), 'n1')
{% elif run == 2 %}
  (1, 'eu', 'a2'), (2, 'us', 'd2'), (3, cast(null as string), 'n2')
{% else %}
  (1, 'us', 'b3'), (4, 'eu', 'e3'), (3, cast(null as string), 'n3')
{% endif %}
  as t(id, region, v)
"""

# The target holds a NULL key; the later batches hold none, so their merge joins on `=`: the
# NULL row is neither matched nor duplicated.
NULL_FREE_BATCH_SQL = """
{{ config(materialized='incremental', unique_key=['id', 'region']) }}
select id, region, v from values
{% if var('run', 1) == 1 %}
  (1, 'eu', 'a1'), (3, cast(null as string), 'n1')
{% else %}
  (1, 'eu', 'a{{ var('run') }}'), (3, 'eu', 'e{{ var('run') }}')
{% endif %}
  as t(id, region, v)
"""


# A project's own strategy: found by name through the standard contract.
APPEND_TWICE_MACRO = """
{% macro get_incremental_append_twice_sql(arg_dict) %}
  insert into {{ arg_dict['target_relation'] }}
  select * from {{ arg_dict['temp_relation'] }}
  union all
  select * from {{ arg_dict['temp_relation'] }}
{% endmacro %}
"""

CUSTOM_SQL = """
{{ config(materialized='incremental', incremental_strategy='append_twice') }}
select {{ var('run', 1) }} as run
"""


class TestCompositeKeyMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "composite.sql": COMPOSITE_SQL,
            "custom.sql": CUSTOM_SQL,
            "null_free_batch.sql": NULL_FREE_BATCH_SQL,
        }

    @pytest.fixture(scope="class")
    def macros(self):
        return {"append_twice.sql": APPEND_TWICE_MACRO}

    def test_three_runs_then_full_refresh(self, project):
        run_dbt(["run"])
        expect(
            rows(project, "composite"),
            [(1, "eu", "a1"), (1, "us", "b1"), (2, "eu", "c1"), (3, None, "n1")],
        )
        run_dbt(["run", "--vars", "{run: 2}"])
        after_two = [(1, "eu", "a2"), (1, "us", "b1"), (2, "eu", "c1"), (2, "us", "d2")]
        expect(rows(project, "composite"), after_two + [(3, None, "n2")])
        run_dbt(["run", "--vars", "{run: 3}"])
        expect(
            rows(project, "composite"),
            [(1, "eu", "a2"), (1, "us", "b3"), (2, "eu", "c1"), (2, "us", "d2")]
            + [(3, None, "n3"), (4, "eu", "e3")],
        )
        expect(rows(project, "custom"), [(1,), (2,), (2,), (3,), (3,)])
        expect(
            rows(project, "null_free_batch"), [(1, "eu", "a3"), (3, None, "n1"), (3, "eu", "e3")]
        )
        # Run 3's merges as dbt wrote them: `=` for the batch without a NULL key only.
        run_sql = {
            name: " ".join(merge_sql(project, name).split())
            for name in ("composite", "null_free_batch")
        }
        assert "DBT_INTERNAL_SOURCE.region <=> DBT_INTERNAL_DEST.region" in run_sql["composite"]
        assert "DBT_INTERNAL_SOURCE.region = DBT_INTERNAL_DEST.region" in run_sql["null_free_batch"]
        assert "<=>" not in run_sql["null_free_batch"]
        # Full refresh is CREATE OR REPLACE: the table's history survives it.
        before = snapshot_count(project, "composite")
        run_dbt(["run", "--vars", "{run: 3}", "--full-refresh"])
        expect(rows(project, "composite"), [(1, "us", "b3"), (3, None, "n3"), (4, "eu", "e3")])
        expect(rows(project, "null_free_batch"), [(1, "eu", "a3"), (3, "eu", "e3")])
        assert snapshot_count(project, "composite") == before + 1
        expect(rows(project, "custom"), [(3,)])


# A project's own get_merge_sql, with dbt's signature: it is called without the keyword our own
# macro takes (null_safe_keys), and its statement is the one that runs.
OWN_MERGE_MACRO = """
{% macro lakehouse__get_merge_sql(target, source, unique_key, dest_columns,
                                  incremental_predicates=none) %}
  -- the project's own merge
  {{ default__get_merge_sql(target, source, unique_key, dest_columns,
                            incremental_predicates) }}
{% endmacro %}
"""

OWN_MERGE_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select id, v from values
{% if var('run', 1) == 1 %} (1, 'a'), (2, 'b') {% else %} (1, 'a2'), (3, 'c') {% endif %}
  as t(id, v)
"""


# Jinja only: one profile is enough.
@pytest.mark.only_profile("local")
class TestProjectsOwnMergeSql:
    @pytest.fixture(scope="class")
    def models(self):
        return {"own_merge.sql": OWN_MERGE_SQL}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"own_merge.sql": OWN_MERGE_MACRO}

    def test_override_with_dbts_signature_runs(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{run: 2}"])
        expect(rows(project, "own_merge"), [(1, "a2"), (2, "b"), (3, "c")])
        assert "-- the project's own merge" in merge_sql(project, "own_merge")
        run_dbt(["run", "--vars", "{run: 2}", "--full-refresh"])
        expect(rows(project, "own_merge"), [(1, "a2"), (3, "c")])


# ---- merge: CDC deletes, latest_by, repeated keys ------------------------------------------------

CDC_SQL = """
{{ config(materialized='incremental', unique_key='id', delete_condition="op = 'd'") }}
select id, v, op from values
{% if var('batch', 1) == 1 %}
  (1, 'a', 'i'), (2, 'b', 'i'), (3, 'c', 'i')
{% else %}
  (1, 'a2', 'u'), (2, cast(null as string), 'd'), (4, 'd', 'i'), (5, cast(null as string), 'd')
{% endif %}
  as t(id, v, op)
"""

LATEST_SQL = """
{{ config(materialized='incremental', unique_key='id', latest_by='seq',
          delete_condition="op = 'd'") }}
select id, v, seq, op from values
{% if var('batch', 1) == 1 %}
  (1, 'a', 1, 'i'), (2, 'x', 1, 'i')
{% else %}
  (1, 'c', 5, 'u'), (1, 'z', 3, 'u'), (2, 'y', 7, 'd'), (2, 'w', 6, 'u'),
  (3, 'p', 1, 'i'), (3, 'q', 1, 'i')
{% endif %}
  as t(id, v, seq, op)
"""

DUPES_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select id, v from values
{% if var('batch', 1) == 1 %}
  (1, 'a'), (2, 'b')
{% else %}
  (1, 'a2'), (7, 'x'), (7, 'y')
{% endif %}
  as t(id, v)
"""


class TestCdcMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc.sql": CDC_SQL, "latest.sql": LATEST_SQL, "dupes.sql": DUPES_SQL}

    def test_cdc_latest_by_and_repeated_keys(self, project):
        run_dbt(["run"])
        expect(rows(project, "cdc"), [(1, "a", "i"), (2, "b", "i"), (3, "c", "i")])
        expect(rows(project, "latest"), [(1, "a", 1, "i"), (2, "x", 1, "i")])
        dupes_snapshot = current_snapshot(project, "dupes")

        results = run_dbt(["run", "--vars", "{batch: 2}"], expect_pass=False)
        by_name = {r.node.name: r for r in results}
        # update 1, delete 2, insert 4; the delete of unknown key 5 inserts nothing
        expect(rows(project, "cdc"), [(1, "a2", "u"), (3, "c", "i"), (4, "d", "i")])
        # 1: greatest seq wins; 2: its latest row is a delete; 3: a tie on seq goes to the
        # greatest remaining column (v: 'q' > 'p')
        expect(rows(project, "latest"), [(1, "c", 5, "u"), (3, "q", 1, "i")])
        # Key 7 is new twice: Iceberg's own check would not see it. Nothing is written.
        assert by_name["cdc"].status == "success" and by_name["latest"].status == "success"
        message = by_name["dupes"].message
        assert by_name["dupes"].status == "error"
        assert "Model 'dupes'" in message and "unique_key (id) = (7)" in message, message
        assert "latest_by" in message
        expect(rows(project, "dupes"), [(1, "a"), (2, "b")])
        assert current_snapshot(project, "dupes") == dupes_snapshot
        # The failed node's computed new rows were released with its connection, not left
        # cached in the session (a Spark Connect server would hold them past this process).
        listed = project.run_sql(
            f"show views in `{project.database}`.`{project.test_schema}`", fetch="all"
        )
        temporary = [r[1] for r in listed if r[2]]
        assert not [v for v in temporary if v.endswith("dupes__dbt_tmp")], temporary


# ---- insert_overwrite and replace ---------------------------------------------------------------

# Run 1 spreads 300 rows over 30 days; run 2 brings 10 rows for days 6 and 7 only.
DAYS_SQL = """
{{{{ config(materialized='incremental', incremental_strategy='{strategy}',
          partition_by=['days(ts)']) }}}}
{{% if var('run', 1) == 1 %}}
select id, timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(id % 30 as int)) as ts,
       'r1' as v
from range({offset}, {offset} + 300)
{{% else %}}
select id, timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(5 + id % 2 as int)) as ts,
       'r2' as v
from range(1000, 1010)
{{% endif %}}
"""


def _day_rows(ids, day_of, v: str) -> list[tuple]:
    return [(i, dt.datetime(2024, 1, 1) + dt.timedelta(days=day_of(i)), v) for i in ids]


# An identity-only spec, which Spark describes under "# Partition Information" rather than
# "# Partitioning": run 2 overwrites partition g = '1' only.
IDENTITY_SQL = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['g']) }}
{% if var('run', 1) == 1 %}
select id, cast(id % 3 as string) as g from range(0, 9)
{% else %}
select id, '1' as g from range(100, 102)
{% endif %}
"""

RUN1 = _day_rows(range(300), lambda i: i % 30, "r1")
RUN2 = _day_rows(range(1000, 1010), lambda i: 5 + i % 2, "r2")


class TestOverwrites:
    """insert_overwrite (dynamic) and replace (static) models run side by side on 4 threads:
    the overwrite mode is scoped per statement, so neither may act like the other."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "io_days.sql": DAYS_SQL.format(strategy="insert_overwrite", offset=0),
            "io_again.sql": DAYS_SQL.format(strategy="insert_overwrite", offset=0),
            "replace_days.sql": DAYS_SQL.format(strategy="replace", offset=0),
            "replace_again.sql": DAYS_SQL.format(strategy="replace", offset=0),
            "io_identity.sql": IDENTITY_SQL,
            "io_unpartitioned.sql": (
                "{{ config(materialized='incremental', incremental_strategy='insert_overwrite')"
                " }}\nselect 1 as id"
            ),
        }

    def test_overwrites(self, project):
        run_dbt(["run", "--exclude", "io_unpartitioned"])
        for name in ("io_days", "io_again", "replace_days", "replace_again"):
            expect(rows(project, name), RUN1)
        files_sql = (
            "select partition.ts_day, file_path from {}.files order by partition.ts_day, file_path"
        )
        before = project.run_sql(files_sql.format(table(project, "io_days")), fetch="all")
        replace_snapshots = snapshot_count(project, "replace_days")

        run_dbt(["run", "--exclude", "io_unpartitioned", "--vars", "{run: 2}"])
        touched = {dt.date(2024, 1, 6), dt.date(2024, 1, 7)}
        kept = [r for r in RUN1 if r[1].date() not in touched]
        for name in ("io_days", "io_again"):
            expect(rows(project, name), kept + RUN2)
        for name in ("replace_days", "replace_again"):
            expect(rows(project, name), RUN2)
        expect(
            rows(project, "io_identity"),
            [(i, str(i % 3)) for i in range(9) if i % 3 != 1] + [(100, "1"), (101, "1")],
        )
        assert snapshot_count(project, "replace_days") == replace_snapshots + 1

        project.run_sql(f"refresh table {table(project, 'io_days')}")
        after = project.run_sql(files_sql.format(table(project, "io_days")), fetch="all")

        def by_day(found):
            grouped: dict = {}
            for day, path in found:
                grouped.setdefault(str(day), set()).add(path)
            return grouped

        before_days, after_days = by_day(before), by_day(after)
        assert len(before_days) == 30 and set(after_days) == set(before_days)
        changed = {day for day in before_days if before_days[day] != after_days[day]}
        assert changed == {"2024-01-06", "2024-01-07"}
        assert not any(before_days[d] & after_days[d] for d in changed)

        results = run_dbt(["run", "--select", "io_unpartitioned"], expect_pass=False)
        assert "'insert_overwrite'" in results[0].message
        assert "needs partition_by" in results[0].message
        assert "model 'io_unpartitioned'" in results[0].message


# ---- microbatch ----------------------------------------------------------------------------------

EVENTS_SQL = """
{{ config(materialized='table', event_time='ts') }}
select id, ts, v from values
  (1, timestamp'2024-01-01 10:00:00', 'a'),
  (2, timestamp'2024-01-02 10:00:00', 'b'),
  (3, timestamp'2024-01-03 10:00:00', 'c')
  as t(id, ts, v)
"""

DAILY_SQL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin=modules.datetime.datetime(2024, 1, 1)) }}
select id, ts, v from {{ ref('events') }}
"""


class TestMicrobatchRerun:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS_SQL, "daily.sql": DAILY_SQL}

    def test_rerun_of_one_batch(self, project):
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-04"]
        run_dbt(["run", *window])
        ts = [dt.datetime(2024, 1, d, 10) for d in (1, 2, 3)]
        expect(rows(project, "daily"), [(1, ts[0], "a"), (2, ts[1], "b"), (3, ts[2], "c")])

        events = table(project, "events")
        project.run_sql(f"update {events} set v = 'B' where id = 2")
        project.run_sql(
            f"insert into {events} values (4, timestamp'2024-01-02 12:00:00', 'b2'), "
            "(5, timestamp'2024-01-03 11:00:00', 'c2')"
        )
        day_two = ["--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03"]
        expected = [
            (1, ts[0], "a"),
            (2, ts[1], "B"),
            (3, ts[2], "c"),
            (4, dt.datetime(2024, 1, 2, 12), "b2"),
        ]
        for _ in range(2):  # the second rerun changes nothing
            run_dbt(["run", "--select", "daily", *day_two])
            expect(rows(project, "daily"), expected)


# ---- on_schema_change: sync_all_columns ----------------------------------------------------------

SYNC_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% set v = var('v', 1) %}
{% if v == 1 %}
select cast(1 as int) as id, cast(1.5 as float) as f, cast(10.25 as decimal(10,2)) as d,
       'x' as gone
{% elif v == 2 %}
select cast(2 as bigint) as id, cast(2.5 as double) as f,
       cast(123456789.25 as decimal(12,2)) as d, 'n' as added
{% else %}
select cast(3 as int) as id, cast(3.5 as double) as f, cast(1 as decimal(11,2)) as d,
       'm' as added
{% endif %}
"""


class TestSyncAllColumns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"synced.sql": SYNC_SQL}

    def column_types(self, project) -> list[tuple[str, str]]:
        described = project.run_sql(f"describe table {table(project, 'synced')}", fetch="all")
        found = []
        for name, dtype, *_ in described:
            if not name or name.startswith("#"):
                break
            found.append((name, dtype))
        return found

    def test_drop_and_widen_then_refuse_narrowing(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{v: 2}"])
        assert self.column_types(project) == [
            ("id", "bigint"),
            ("f", "double"),
            ("d", "decimal(12,2)"),
            ("added", "string"),
        ]
        expect(
            rows(project, "synced"),
            [
                (1, 1.5, decimal.Decimal("10.25"), None),
                (2, 2.5, decimal.Decimal("123456789.25"), "n"),
            ],
        )
        snapshot = current_snapshot(project, "synced")
        results = run_dbt(["run", "--vars", "{v: 3}"], expect_pass=False)
        message = results[0].message
        assert "id: table has bigint, model gives int" in message, message
        assert "d: table has decimal(12,2), model gives decimal(11,2)" in message
        assert "model 'synced'" in message
        assert current_snapshot(project, "synced") == snapshot
        assert [c for c, _ in self.column_types(project)] == ["id", "f", "d", "added"]


# ---- a merge killed mid-flight ----------------------------------------------------------------

# Run 1 writes 2M rows; run 2 merges 2000 keys spread over every data file, so the
# copy-on-write merge rewrites all of them: seconds of work before its one commit.
BIG_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
{% if var('big', false) %}
select id * 1000 as id, 'merged' as v from range(0, 2000)
{% else %}
select id, 'seed' as v from range(0, 2000000)
{% endif %}
"""


@pytest.mark.only_profile("local", "s3_rest")
class TestKilledMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {"big.sql": BIG_SQL}

    def test_kill_during_merge_leaves_previous_snapshot(self, project, tmp_path: Path):
        run_dbt(["run"])
        relation = table(project, "big")
        count_sql = f"select count(*), count_if(v = 'merged') from {relation}"
        project.run_sql(f"refresh table {relation}")
        assert project.run_sql(count_sql, fetch="one") == (2000000, 0)
        snapshot = current_snapshot(project, "big")

        log_dir = tmp_path / "killed-logs"
        env = dict(os.environ, LAKEHOUSE_SPARK_LOG=str(tmp_path / "killed-spark.log"))
        dbt = Path(sys.executable).with_name("dbt")
        child = subprocess.Popen(
            [
                str(dbt),
                "run",
                "--vars",
                "{big: true}",
                "--project-dir",
                project.project_root,
                "--profiles-dir",
                project.profiles_dir,
                "--log-path",
                str(log_dir),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: the Spark JVM dies with it
        )
        try:
            log = log_dir / "dbt.log"
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and child.poll() is None:
                if log.exists() and "merge into" in log.read_text(errors="replace"):
                    break
                time.sleep(0.2)
            else:
                pytest.fail(f"the merge never started (exit code {child.poll()})")
            time.sleep(0.5)  # the merge has started; rewriting 2M rows takes seconds
            assert child.poll() is None, "the merge finished before it could be killed"
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(timeout=30)
        assert "OK created" not in log.read_text(errors="replace")

        project.run_sql(f"refresh table {relation}")
        assert project.run_sql(count_sql, fetch="one") == (2000000, 0)
        assert current_snapshot(project, "big") == snapshot

        # The same merge run to the end commits, and is seen here: the checks above can fail.
        run_dbt(["run", "--vars", "{big: true}"])
        project.run_sql(f"refresh table {relation}")
        assert project.run_sql(count_sql, fetch="one") == (2000000, 2000)
        assert current_snapshot(project, "big") != snapshot
