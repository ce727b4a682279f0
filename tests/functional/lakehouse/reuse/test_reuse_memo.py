"""Reuse decisions remembered between runs (reuse/memo.py), on the embedded lakehouse: a node
whose watched catalog objects keep their metadata location is reused from its remembered
decision with no Spark call (a run of such nodes opens no connection at all); a commit to
anything it reads (outside dbt too), an edit, a lost memo file or a statement that changes the
session sends it back to a full decision, and every table still equals its query.

The class has a warehouse of its own, so its engine session is a new one (the suite's other
classes share theirs, where a Python model or a SET may already have run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from functional.lakehouse.reuse.test_reuse import (
    REUSED,
    SOURCES_YML,
    ReuseInASessionOfItsOwn,
    verdicts,
)
from functional.lakehouse.shared.tables import rows, table

PEOPLE_CSV = "id,name\n1,Ann\n2,Bo\n"
STG_SQL = "select id, kind from {{ source('raw', 'events') }}"
TOTALS_SQL = (
    "{{ config(materialized='table') }}\n"
    "select p.name, count(*) as n from {{ ref('stg_events') }} e\n"
    "join {{ ref('people') }} p on p.id = e.id group by p.name"
)
SCHEMA_YML = (
    "models:\n  - name: totals\n    columns:\n      - name: name\n        data_tests: [not_null]\n"
)
NODES = ("people", "stg_events", "totals", "not_null_totals_name")
REASON = "nothing it reads moved; its query and settings are unchanged"
OPENING = "Opening a new connection"
OPENED: dict[str, int] = {}
SET_MACRO = (
    "{% macro set_ansi() %}{% do run_query('set spark.sql.ansi.enabled = true') %}{% endmacro %}"
)


def remembered(log: str) -> set[str]:
    """The nodes the run reused from a remembered decision (its debug log says so)."""
    said = re.findall(r"Lakehouse adapter: (\S+): reused: .*\(remembered", log)
    return {unique_id.split(".")[2] for unique_id in said}


@pytest.mark.only_profile("local")
class TestRememberedDecisions(ReuseInASessionOfItsOwn):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "schema.yml": SCHEMA_YML,
            "stg_events.sql": STG_SQL,
            "totals.sql": TOTALS_SQL,
        }

    @pytest.fixture(scope="class")
    def macros(self):
        return {"set_ansi.sql": SET_MACRO}

    def build(self, project) -> tuple[dict[str, tuple[str, str | None]], str]:
        results, log = run_dbt_and_capture(["--debug", "build"])
        expected = project.run_sql(
            "select p.name, count(*) from "
            f"{table(project, 'stg_events')} e join {table(project, 'people')} p "
            "on p.id = e.id group by p.name",
            fetch="all",
        )
        assert rows(project, "totals") == sorted(map(tuple, expected), key=repr)
        return verdicts(results), log

    def test_1_a_reuse_decided_in_full_is_remembered(self, project):
        events = table(project, "events")
        project.run_sql(f"create table {events} (id int, kind string) using iceberg")
        project.run_sql(f"insert into {events} values (1, 'a'), (2, 'b'), (1, 'c')")
        run_dbt(["build"])
        found, log = self.build(project)
        assert {found[n][0] for n in ("people", "stg_events", "totals")} == {REUSED}, found
        assert remembered(log) == set(), log[-3000:]
        memo_file = Path(project.project_root, "target", "lakehouse_reuse_memo.json")
        assert memo_file.exists()
        OPENED["full decisions"] = log.count(OPENING)

    def test_2_nothing_moved_is_decided_from_the_catalog_alone(self, project):
        found, log = self.build(project)
        assert remembered(log) == set(NODES), log[-3000:]
        assert found["totals"] == (REUSED, REASON)
        assert found["not_null_totals_name"][0] == "pass"
        # nothing opened a connection: the embedded catalog is listed from its SQLite rows
        assert OPENED["full decisions"] >= len(NODES) and log.count(OPENING) == 0, log[-3000:]

    def test_3_a_commit_outside_dbt_sends_its_readers_to_a_full_decision(self, project):
        project.run_sql(f"insert into {table(project, 'events')} values (2, 'd')")
        found, log = self.build(project)
        assert found["totals"][0] == "success"
        assert "events moved from snapshot" in found["totals"][1]
        # the seed reads nothing that moved; the view watches the table it reads too
        assert remembered(log) == {"people"}, log[-3000:]
        assert found["stg_events"][0] == REUSED

    def test_4_an_edit_or_a_lost_memo_decides_in_full(self, project):
        write_file(STG_SQL + " where id > 0", project.project_root, "models", "stg_events.sql")
        found, log = self.build(project)
        assert found["stg_events"][0] == "success"
        assert "stg_events" not in remembered(log) and "people" in remembered(log)
        Path(project.project_root, "target", "lakehouse_reuse_memo.json").unlink()
        found, log = self.build(project)
        assert remembered(log) == set(), log[-3000:]
        assert {found[n][0] for n in ("people", "stg_events", "totals")} == {REUSED}, found

    def test_5_a_statement_that_changes_the_session_stops_recalling(self, project):
        found, log = self.build(project)
        assert remembered(log) == set(NODES), log[-3000:]
        # the same session (this process's): its casts now fail instead of giving null
        _, said = run_dbt_and_capture(["--debug", "run-operation", "set_ansi"])
        assert "not recalled in this session any more: SET" in said
        _, log = self.build(project)
        assert remembered(log) == set(), log[-3000:]
