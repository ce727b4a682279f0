"""Reuse over checkpointed stacked views (reuse/stand_ins.py): a node over this run's stand-ins
is decided from its own query's plan over them, each stand-in standing for what its view's
decision recorded (its tables, whether it varies, a digest of its definition down to the
tables), not from the stack analysed again. Every verdict is what the analysis over the views
would give: a redefinition deep in the stack, an input's new rows and a non-deterministic
expression beneath the checkpoint build the table above; a comment does not. A view is reused
while what its statement stores is the same (its text and columns), even when a view below it
was redefined. After each build the table equals its query over the views."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from functional.lakehouse.reuse.test_reuse import (
    REUSED,
    SOURCES_YML,
    ReuseInASessionOfItsOwn,
    verdicts,
)
from functional.lakehouse.shared.tables import rows, table

V0 = "select id, v from {{ source('raw', 'events') }}"
# v1 is checkpointed (its config); v2 and v3 read it, so each has a stand-in over it.
V1 = (
    "{{ config(checkpoint=true) }}\n"
    "select id, v from {{ ref('v0') }} union all select id, v + 1 as v from {{ ref('v0') }}"
)
V2 = "select id, v from {{ ref('v1') }} union all select id, v * 2 as v from {{ ref('v1') }}"
V3 = "select id, v from {{ ref('v2') }} where v > 0"
TOTAL = (
    "{{ config(materialized='table') }}\nselect count(*) as n, sum(v) as total from {{ ref('v3') }}"
)
SCHEMA_YML = (
    "models:\n  - name: v3\n    columns:\n      - name: id\n        data_tests: [not_null]\n"
)
VIEWS = ("v0", "v1", "v2", "v3")


@pytest.mark.only_profile("local")
class TestReuseOverStandIns(ReuseInASessionOfItsOwn):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "schema.yml": SCHEMA_YML,
            "v0.sql": V0,
            "v1.sql": V1,
            "v2.sql": V2,
            "v3.sql": V3,
            "total.sql": TOTAL,
        }

    def check_total(self, project) -> None:
        over_views = project.run_sql(
            f"select count(*), sum(v) from {table(project, 'v3')}", fetch="one"
        )
        assert rows(project, "total") == [tuple(over_views)]

    def build(self, project) -> dict[str, tuple[str, str | None]]:
        found = verdicts(run_dbt(["build"]))
        self.check_total(project)
        return found

    def build_logged(self, project) -> tuple[dict[str, tuple[str, str | None]], str]:
        results, log = run_dbt_and_capture(["--debug", "build"])
        self.check_total(project)
        return verdicts(results), log

    def test_1_first_build(self, project):
        events = table(project, "events")
        project.run_sql(f"create table {events} (id int, v int) using iceberg")
        project.run_sql(f"insert into {events} values (1, 10), (2, 20)")
        found = self.build(project)
        assert {found[v] for v in VIEWS} == {("success", "no view there yet")}, found
        assert found["total"][0] == "success"

    def test_2_nothing_changed_is_reused_through_the_stand_ins(self, project):
        found, log = self.build_logged(project)
        assert {found[n][0] for n in (*VIEWS, "total")} == {REUSED}, found["total"]
        test = next(n for n in found if n.startswith("not_null_v3"))
        assert found[test][1] == "nothing it reads moved; its query and settings are unchanged"
        # the table's and the test's decisions read the stack through v1's and v2's stand-ins
        assert log.count("inputs read through this run's stand-ins for") >= 2, log[-3000:]

    def test_2_then_every_decision_is_remembered_through_the_stand_ins(self, project):
        # Each decision over a stand-in watched the view and what the view's decision watched
        # (reuse/memo.py): the next build recalls them all, none analysed over the stand-ins.
        found, log = self.build_logged(project)
        assert {found[n][0] for n in (*VIEWS, "total")} == {REUSED}, found
        assert log.count("(remembered: every object it reads is unchanged)") == 6, log[-3000:]
        assert "inputs read through this run's stand-ins" not in log, log[-3000:]

    def test_3_a_redefinition_below_the_checkpoint_builds_the_table_not_the_views(self, project):
        write_file(V0 + " where id > 0", project.project_root, "models", "v0.sql")
        found = self.build(project)
        assert found["v0"] == ("success", "its definition changed (or was not recorded)")
        # what v1, v2 and v3 store (their text, their columns) is the same
        assert {found[v][0] for v in ("v1", "v2", "v3")} == {REUSED}, found
        assert found["total"] == ("success", "its query or settings changed"), found

    def test_4_new_rows_beneath_build_the_table_and_a_comment_does_not(self, project):
        project.run_sql(f"insert into {table(project, 'events')} values (3, 30)")
        write_file("-- a comment\n" + V2, project.project_root, "models", "v2.sql")
        found = self.build(project)
        assert {found[v][0] for v in VIEWS} == {REUSED}, found
        assert found["total"][0] == "success" and "events moved from snapshot" in found["total"][1]
        assert verdicts(run_dbt(["run", "-s", "+total"]))["total"][0] == REUSED

    def test_5_a_non_deterministic_view_beneath_is_seen(self, project):
        stamped = f"select * from ({V2}) where rand() >= 0"
        write_file(stamped, project.project_root, "models", "v2.sql")
        found = self.build(project)
        assert found["v2"] == ("success", "its definition changed (or was not recorded)")
        assert found["total"] == ("success", "not reusable: non-deterministic (Rand)"), found
