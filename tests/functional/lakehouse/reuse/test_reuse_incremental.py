"""Reused incremental models and snapshots (reuse/, docs/reuse.md): with nothing they read moved
since their last build or run, no statement runs (no MERGE, no commit) and their status is
dbt's `reused`; any move runs them as usual. An incremental model's first incremental run
after a full build runs (its is_incremental() query is another one), and so does a
--full-refresh; a snapshot's source moving runs it, closing the changed rows' versions.

After every step each incremental table equals its from-scratch query over the source now, and
the snapshot's current versions equal the source's rows. The source `events` is written with
plain Spark SQL (another engine's commits)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from functional.lakehouse.reuse.test_reuse import REUSED, SOURCES_YML, ReuseOnProfile, verdicts
from functional.lakehouse.shared.tables import expect, rows, snapshot_count, table

# Well-formed incremental models: a rerun over the same source leaves the same rows.
MERGED_SQL = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
select id, kind, amount from {{ source('raw', 'events') }}
{% if is_incremental() %} where id >= (select coalesce(max(id), 0) from {{ this }}) - 10 {% endif %}
"""
OVERWRITTEN_SQL = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['kind']) }}
select kind, sum(amount) as total from {{ source('raw', 'events') }} group by kind
"""
SNAPSHOT_SQL = """
{% snapshot events_history %}
{{ config(unique_key='id', strategy='check', check_cols=['kind', 'amount'],
          target_schema=target.schema) }}
select id, kind, amount from {{ source('raw', 'events') }}
{% endsnapshot %}
"""
# Rows written in the query: Spark's plan JSON leaves VALUES' rows out (reuse/inputs.py).
CONSTANTS_SQL = """
{{ config(materialized='table') }}
select * from values {% if var('label', 'a') == 'a' %} (1, 'a') {% else %} (1, 'b') {% endif %}
  as t(id, label)
"""
# Four inputs: its build's record is more than java.util.Map.of's ten entries (iceberg/lineage.py).
WIDE_SQL = """
{{ config(materialized='table') }}
select e.id, m.amount, o.total, c.label
from {{ source('raw', 'events') }} e
join {{ ref('merged') }} m on m.id = e.id
join {{ ref('overwritten') }} o on o.kind = e.kind
left join {{ ref('constants') }} c on c.id = e.id
"""
NODES = ("merged", "overwritten", "events_history")


def assert_equal_from_scratch(project) -> None:
    events = table(project, "events")
    expect(rows(project, "merged"), rows(project, "events", "id, kind, amount"))
    from_scratch = project.run_sql(
        f"select kind, sum(amount) from {events} group by kind", fetch="all"
    )
    expect(rows(project, "overwritten"), [tuple(r) for r in from_scratch])
    current = project.run_sql(
        f"select id, kind, amount from {table(project, 'events_history')} "
        "where dbt_valid_to is null",
        fetch="all",
    )
    expect(rows(project, "events", "id, kind, amount"), [tuple(r) for r in current])


@pytest.mark.only_profile("local")
class TestReusedIncrementalAndSnapshots(ReuseOnProfile):
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML, "merged.sql": MERGED_SQL,
                "overwritten.sql": OVERWRITTEN_SQL, "constants.sql": CONSTANTS_SQL,
                "wide.sql": WIDE_SQL}  # fmt: skip

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"events_history.sql": SNAPSHOT_SQL}

    def test_1_first_build_then_the_first_incremental_run(self, project):
        events = table(project, "events")
        project.run_sql(f"create table {events} (id int, kind string, amount int) using iceberg")
        project.run_sql(f"insert into {events} values (1, 'a', 10), (2, 'b', 20), (3, 'a', 5)")
        results, out = run_dbt_and_capture(["--debug", "build"])
        found = verdicts(results)
        first = "no record of an earlier build in its table's main"
        assert {found[name] for name in NODES} == {("success", first)}, found
        # Each first build's CREATE TABLE runs over its decision's analysis (engine/prepared.py):
        # the query the whole of its query, or a subquery of it (a merge: one row per key).
        analysed = "creates its table from the query its reuse decision analysed"
        assert f"model.test.merged: {analysed}" in out
        assert f"model.test.overwritten: {analysed}" in out
        assert_equal_from_scratch(project)
        found = verdicts(run_dbt(["build"]))
        assert found["merged"][1].startswith("its first incremental run since a full build"), found
        assert found["events_history"][0] == REUSED, found
        assert_equal_from_scratch(project)

    def test_2_nothing_moved_runs_no_statement(self, project):
        before = {name: snapshot_count(project, name) for name in NODES}
        found = verdicts(run_dbt(["build"]))
        assert {found[name][0] for name in NODES} == {REUSED}, found
        assert {name: snapshot_count(project, name) for name in NODES} == before
        assert_equal_from_scratch(project)

    def test_3_the_source_moving_runs_them(self, project):
        events = table(project, "events")
        project.run_sql(f"insert into {events} values (4, 'b', 7)")
        project.run_sql(f"update {events} set amount = 11 where id = 1")
        found = verdicts(run_dbt(["build"]))
        for name in NODES:
            assert found[name][0] == "success" and "events moved from snapshot" in found[name][1]
        assert_equal_from_scratch(project)
        closed = project.run_sql(
            f"select id from {table(project, 'events_history')} where dbt_valid_to is not null",
            fetch="all",
        )
        assert [tuple(r) for r in closed] == [(1,)]
        found = verdicts(run_dbt(["build"]))
        assert {found[name][0] for name in NODES} == {REUSED}, found

    def test_4_full_refresh_and_a_settings_change_build(self, project):
        found = verdicts(run_dbt(["build", "--full-refresh"]))
        assert found["merged"] == found["overwritten"] == ("success", "--full-refresh")
        # dbt never rebuilds a snapshot from scratch: --full-refresh does not apply to it.
        assert found["events_history"][0] == REUSED
        assert_equal_from_scratch(project)
        found = verdicts(run_dbt(["build", "--vars", "{unused: 1}"]))
        assert found["merged"][1].startswith("its first incremental run since a full build")
        changed = OVERWRITTEN_SQL.replace("partition_by=['kind']", "partition_by=['kind'], "
                                          "on_schema_change='append_new_columns'")  # fmt: skip
        write_file(changed, project.project_root, "models", "overwritten.sql")
        found = verdicts(run_dbt(["build", "-s", "overwritten"]))
        assert found["overwritten"][0] == "success", found
        assert "settings changed" in found["overwritten"][1], found
        assert verdicts(run_dbt(["build", "-s", "overwritten"]))["overwritten"][0] == REUSED
        assert_equal_from_scratch(project)

    def test_5_the_rows_of_values_are_part_of_the_query(self, project):
        assert verdicts(run_dbt(["run", "-s", "constants"]))["constants"][0] == REUSED
        found = verdicts(run_dbt(["run", "-s", "constants", "--vars", "{label: b}"]))
        assert found["constants"] == ("success", "its query or settings changed"), found
        expect(rows(project, "constants"), [(1, "b")])
        found = verdicts(run_dbt(["run", "-s", "wide"]))
        assert found["wide"][0] == "success" and "constants moved from snapshot" in found["wide"][1]
        assert verdicts(run_dbt(["run", "-s", "wide"]))["wide"][0] == REUSED
