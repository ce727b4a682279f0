"""Reused data tests (reuse/tests.py, docs/reuse.md "Data tests"). With reuse on, a test whose
query, settings and input tables are those of its recorded run returns that run's result
(PASS, WARN or FAIL with the same failure count) without running its query; the record lives in
`<catalog>.lakehouse_system.test_results`, so it survives `target/` being deleted. An input's
new snapshot or the test's own change runs it again, saying why; a non-deterministic test and
one storing its failures always run; LAKEHOUSE_REUSE=off runs every test.

The sources are written with plain Spark SQL; a view model over one of them stands between it
and two tests (views are inlined, so those tests read the table)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from dbt.adapters.lakehouse.engine import later
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.engine.warm import server
from functional.lakehouse.reuse.test_reuse import ReuseOnProfile
from functional.lakehouse.shared.tables import table

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: events
      - name: labels
        columns:
          - name: label
            data_tests:
              - not_null:
                  config:
                    severity: SEVERITY
"""
MODELS_YML = """
models:
  - name: stg_events
    columns:
      - name: id
        data_tests:
          - not_null
          - unique:
              config:
                store_failures: true
      - name: kind
        data_tests:
          - accepted_values:
              arguments:
                values: ['a', 'b']
              config:
                severity: warn
"""
STG_SQL = "{{ config(materialized='view') }}\nselect id, kind from {{ source('raw', 'events') }}"
NO_X = "select * from {{ source('raw', 'events') }} where kind = 'x'"
RANDOM = "select * from {{ ref('stg_events') }} where rand() > 2"
REUSED = "nothing it reads moved; its query and settings are unchanged"
TESTS = {
    "not_null_stg_events_id": "pass",
    "unique_stg_events_id": "pass",
    "accepted_values_stg_events_kind__a__b": "warn",
    "no_x": "fail",
    "random_check": "pass",
    "source_not_null_raw_labels_label": "pass",
}


def outcomes(results) -> dict[str, tuple[str, int, bool | None, str | None]]:
    """test name -> (status, failures, reused, reuse_reason)."""
    return {
        r.node.name: (
            str(r.status),
            r.failures,
            r.adapter_response.get("reused"),
            r.adapter_response.get("reuse_reason"),
        )
        for r in results.results
        if r.node.resource_type == "test"
    }


def store(project) -> str:
    return f"`{project.database}`.`lakehouse_system`.`test_results`"


def recorded(project, invocation: str | None = None) -> int:
    """The rows recorded for this project's tests (the store is shared by the catalog), or for
    those of one invocation; once the last invocation's write, not waited for, is done."""
    later.settle(ENGINE.active, 60)
    assert later.settle(ENGINE.active, 0) == 0, "a write of the test results still runs"
    relation = f"{project.database}.{project.test_schema}%"
    sql = f"select count(*) from {store(project)} where relation like '{relation}'"
    if invocation is not None:
        sql += f" and invocation_id = '{invocation}'"
    return project.run_sql(sql, fetch="one")[0]


def last_invocation(project) -> str:
    """The invocation id of the project's last dbt command, from its run_results.json."""
    results = Path(project.project_root) / "target" / "run_results.json"
    return json.loads(results.read_text())["metadata"]["invocation_id"]


def assert_same_results(found: dict) -> None:
    """Each test's status and failure count are what running its query gives."""
    assert {name: found[name][0] for name in TESTS} == TESTS, found
    assert found["accepted_values_stg_events_kind__a__b"][1] == 1
    assert found["no_x"][1] == 1
    assert found["not_null_stg_events_id"][1] == 0


@pytest.mark.only_profile("local")
class TestReusedDataTests(ReuseOnProfile):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML.replace("SEVERITY", "error"),
            "schema.yml": MODELS_YML,
            "stg_events.sql": STG_SQL,
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {"no_x.sql": NO_X, "random_check.sql": RANDOM}

    def test_1_a_first_run_records_each_result(self, project, logs_dir):
        events, labels = table(project, "events"), table(project, "labels")
        project.run_sql(f"create table {events} (id int, kind string) using iceberg")
        project.run_sql(f"insert into {events} values (1, 'a'), (2, 'b'), (3, 'x')")
        project.run_sql(f"create table {labels} (kind string, label string) using iceberg")
        project.run_sql(f"insert into {labels} values ('a', 'Ay')")
        run_dbt(["run"])  # (a build would skip the view: a failing test reads its source)
        found = outcomes(run_dbt(["test"], expect_pass=False))
        assert_same_results(found)
        assert found["not_null_stg_events_id"][2:] == (False, "no recorded result")
        assert found["no_x"][2:] == (False, "no recorded result")
        assert found["random_check"][3] == "not reusable: non-deterministic (Rand)"
        assert found["unique_stg_events_id"][3].startswith("not reusable: it stores its failures")
        # Written at the invocation's end, one row per test reuse could apply to.
        assert recorded(project) == 4
        # Those four ran the query their decision had analysed, not a second analysis of it
        # (engine/prepared.py); the others' decisions analysed nothing they could run.
        log = (Path(logs_dir) / "dbt.log").read_text(errors="replace")
        taken = re.findall(r"test\.test\.(\w+)\.?\w*: runs the query its reuse decision", log)
        assert sorted(taken) == sorted(
            ["not_null_stg_events_id", "accepted_values_stg_events_kind__a__b", "no_x",
             "source_not_null_raw_labels_label"]
        ), taken  # fmt: skip

    def test_2_a_rerun_reuses_them_without_target(self, project, logs_dir):
        """The record is in the lakehouse: deleting target/ (dbt's state) changes nothing."""
        shutil.rmtree(Path(project.project_root) / "target")
        results, out = run_dbt_and_capture(["test"], expect_pass=False)
        found = outcomes(results)
        assert_same_results(found)  # PASS, WARN 1 and FAIL 1 again, from the record
        for name in ("not_null_stg_events_id", "accepted_values_stg_events_kind__a__b", "no_x",
                     "source_not_null_raw_labels_label"):  # fmt: skip
            assert found[name][2:] == (True, REUSED), found
        assert found["random_check"][2] is False and found["unique_stg_events_id"][2] is False
        assert "4 of 6 nodes reused" in out, out[-2000:]
        log = (Path(logs_dir) / "dbt.log").read_text(errors="replace")
        assert f"test.test.no_x: reused: {REUSED}" in log
        assert recorded(project) == 4  # a reused test records nothing

    def test_3_an_input_moving_or_the_test_changing_runs_it(self, project):
        project.run_sql(f"insert into {table(project, 'events')} values (4, 'a')")
        write_file(NO_X + " and id > 0", project.project_root, "tests", "no_x.sql")
        write_file(SOURCES_YML.replace("SEVERITY", "warn"), project.project_root, "models",
                   "sources.yml")  # fmt: skip
        found = outcomes(run_dbt(["test"], expect_pass=False))
        assert_same_results(found)
        moved = found["not_null_stg_events_id"]
        assert moved[2] is False and "events moved from snapshot" in moved[3], moved
        assert "its query or settings changed" in found["no_x"][3]
        assert found["source_not_null_raw_labels_label"][2:] == (
            False,
            "its query or settings changed",
        )
        # Recorded again (the four that ran): the next run reuses the new results. Counted by
        # this run's invocation: a write that leaves the catalog's shared store past its file
        # bound rewrites it to each test's newest row, dropping the first run's four.
        assert recorded(project, last_invocation(project)) == 4
        found = outcomes(run_dbt(["test", "-s", "no_x", "not_null_stg_events_id"],
                                 expect_pass=False))  # fmt: skip
        assert found["no_x"][:3] == ("fail", 1, True)
        assert found["not_null_stg_events_id"][:3] == ("pass", 0, True)

    def test_4_reuse_off_runs_every_test(self, project, monkeypatch):
        monkeypatch.setenv("LAKEHOUSE_REUSE", "off")
        before = recorded(project)
        found = outcomes(run_dbt(["test"], expect_pass=False))
        assert_same_results(found)
        assert {f[3] for f in found.values()} == {"not reusable: LAKEHOUSE_REUSE=off"}
        # Nothing recorded with reuse off.
        assert before >= 4 and recorded(project) == before
        assert recorded(project, last_invocation(project)) == 0
        relation = f"{project.database}.{project.test_schema}%"
        project.run_sql(f"delete from {store(project)} where relation like '{relation}'")

    def test_5_a_stopping_engine_waits_for_what_commands_left_running(self, project):
        """A warm engine stopped (`engine stop`, its idle time) right after a command waits for
        the statements that command left running (engine/later.py) before it stops its
        SparkContext, which would drop them: the supervisor's own wait, on this JVM."""
        spark = ENGINE.active
        # CACHE TABLE runs its query at once: a job of one task that sleeps 3 s.
        slow = "cache table later_probe as select reflect('java.lang.Thread', 'sleep', 3000L) s"
        handle = later.run_later(spark, [slow], None, [])
        assert handle is not None and not handle.wait(0)
        assert server.settle_later(spark.sparkContext._jvm, 60) == 1
        assert handle.wait(0) and handle.failure() is None
        assert server.settle_later(spark.sparkContext._jvm, 60) == 0
