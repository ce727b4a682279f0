"""Incremental merges against real Iceberg tables, each run checked row for row: composite
and null-safe merge keys, a project's own strategy and merge SQL, CDC deletes, latest_by, and a
merge killed mid-flight. The other strategies: test_incremental_overwrites.py (insert_overwrite
touching only its partitions, replace and full refresh keeping history, microbatch reruns) and
test_incremental_schema_sync.py (sync_all_columns)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import current_snapshot, expect, rows, snapshot_count, table

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
