"""Reused `table` models and views (reuse/, docs/reuse.md). With reuse on, a table whose query,
settings and input tables are where they were at its last build is left as it is (dbt's
`reused` status, no commit), and any change builds it, saying why: an input table's new
snapshot, a view it reads redefined, its own query changed (a comment is no change), a
non-deterministic query, hooks, files read by path, LAKEHOUSE_REUSE=off, --full-refresh, its
table altered. A view's CREATE OR REPLACE is skipped while its definition is the same. After
every step each table equals its compiled query.

The source `events` is written with plain Spark SQL (another engine's commits). On the embedded
lakehouse and on S3 + the REST catalog (views' properties, commit summaries and metadata reads
differ there); Spark Connect, where commits carry no record yet, and a cluster are issue 61's
next steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from functional.lakehouse.shared.tables import expect, rows, snapshot_count, table

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: events
"""
STG_SQL = "{{ config(materialized='view') }}\nselect id, kind from {{ source('raw', 'events') }}"
STG_FILTERED = STG_SQL + " where kind <> 'x'"
# A column no reader of the view selects: the view is redefined, `kinds` (through a CTE) is not.
STG_WIDER = STG_SQL.replace("id, kind", "id, kind, upper(kind) as loud")
# A CTE: its id is handed out anew by each analysis, and must not read as a change.
KINDS_SQL = """
with e as (select * from {{ ref('stg_events') }})
select kind, count(*) as n from e group by kind
"""
# Files read by path: nothing says whether they changed.
FROM_FILES_SQL = "select * from parquet.`{{ var('parquet_path') }}`"
CONSTANT_SQL = "select 1 as id, 'one' as label"
RANDOM_SQL = "select id, rand() as r from {{ ref('stg_events') }}"
STAMPED_SQL = "select id, current_timestamp() as at from {{ ref('stg_events') }}"
HOOKED_SQL = "{{ config(post_hook='select 1') }}\nselect id from {{ source('raw', 'events') }}"
LABELS_CSV = "kind,label\na,Ay\nb,Bee\n"
TABLES = ("kinds", "constant", "random_ids", "stamped", "hooked")
# dbt-core 1.12's own status; 1.10 and 1.11 have none, and a reused node is a success there
# (its message says REUSED either way).
REUSED = "reused" if hasattr(RunStatus, "Reused") else "success"


def compiled_rows(project, model: str) -> list[tuple]:
    compiled = next(Path(project.project_root, "target", "compiled").rglob(f"{model}.sql"))
    return sorted((tuple(r) for r in project.run_sql(compiled.read_text(), fetch="all")), key=repr)


def verdicts(results) -> dict[str, tuple[str, str | None]]:
    """node name -> (status, reuse_reason)."""
    return {
        r.node.name: (str(r.status), r.adapter_response.get("reuse_reason"))
        for r in results.results
    }


def py4j_lookups(monkeypatch) -> list[str]:
    """The names py4j asks the JVM about from now on (`jvm.a.b.C`: `a`, `a.b`, `a.b.C`)."""
    from py4j.java_gateway import JavaPackage, JVMView

    asked: list[str] = []
    for cls in (JVMView, JavaPackage):

        def lookup(self, name, _original=cls.__getattr__):
            if not name.startswith("__"):
                asked.append(f"{self.__dict__.get('_fqn', 'jvm')}.{name}")
            return _original(self, name)

        monkeypatch.setattr(cls, "__getattr__", lookup)
    return asked


def assert_rows_equal_queries(project) -> None:
    for name in ("kinds", "constant"):
        expect(rows(project, name), compiled_rows(project, name))


def reuse_profile(target: dict, schema: str, **settings: str) -> dict:
    """dbt-tests-adapter's profile: the test target with `reuse: true` (and `settings`)."""
    output = {**target, "schema": schema, "reuse": True, **settings}
    return {"test": {"outputs": {"default": output}, "target": "default"}}


class ReuseOnProfile:
    """The test target with `reuse: true` (the reuse test classes share it)."""

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return reuse_profile(dbt_profile_target, unique_schema)


class ReuseInASessionOfItsOwn:
    """The test target with `reuse: true` and a warehouse of its own, so a session of its own:
    decisions are recalled only in a session no statement of an earlier test in the process
    changed (reuse/memo.py), as a Python model's does."""

    @pytest.fixture(scope="class")
    def profiles_config_update(
        self, dbt_profile_target: dict, unique_schema: str, tmp_path_factory
    ) -> dict:
        warehouse = str(tmp_path_factory.mktemp("warehouse"))
        return reuse_profile(dbt_profile_target, unique_schema, warehouse=warehouse)


@pytest.mark.only_profile("local", "s3_rest")
class TestReusedTables(ReuseOnProfile):
    @pytest.fixture(scope="class")
    def project_config_update(self, tmp_path_factory):
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path_factory.mktemp("files") / "ids.parquet"
        pq.write_table(pa.table({"id": [1, 2]}), path)
        return {"models": {"+materialized": "table"}, "vars": {"parquet_path": str(path)}}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"labels.csv": LABELS_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "stg_events.sql": STG_SQL,
            "kinds.sql": KINDS_SQL,
            "constant.sql": CONSTANT_SQL,
            "random_ids.sql": RANDOM_SQL,
            "stamped.sql": STAMPED_SQL,
            "hooked.sql": HOOKED_SQL,
            "from_files.sql": FROM_FILES_SQL,
        }

    def test_1_first_build_records_and_says_why_each_was_built(self, project):
        events = table(project, "events")
        project.run_sql(f"create table {events} (id int, kind string) using iceberg")
        project.run_sql(f"insert into {events} values (1, 'a'), (2, 'b'), (3, 'x')")
        results, out = run_dbt_and_capture(["--debug", "run"])
        found = verdicts(results)
        # Each CREATE TABLE runs over the analysis its decision made (engine/prepared.py), not
        # a second one; a model not reused for what it reads keeps none (its own rows below).
        analysed = "creates its table from the query its reuse decision analysed"
        assert f"model.test.kinds: {analysed}" in out
        assert f"model.test.from_files: {analysed}" not in out
        assert found["stg_events"] == ("success", "no view there yet")
        assert found["kinds"] == ("success", "no record of an earlier build in its table's main")
        assert found["random_ids"][1] == "not reusable: non-deterministic (Rand)"
        assert found["stamped"][1] == "not reusable: non-deterministic (CurrentTimestamp)"
        assert found["hooked"][1].startswith("not reusable: it has pre- or post-hooks")
        assert found["from_files"][1] == "not reusable: reads files by path, or a file-based table"
        assert_rows_equal_queries(project)

    def test_2_nothing_moved_is_reused(self, project, monkeypatch):
        before = {name: snapshot_count(project, name) for name in TABLES}
        asked = py4j_lookups(monkeypatch)
        results, out = run_dbt_and_capture(["run"])
        # No node's path (its decision, the view's recorded definition, its statements) looks a
        # Java class up by name: each part of `jvm.a.b.C` is a search through every jar.
        assert len(asked) < len(results.results), asked
        found = verdicts(results)
        assert "3 of 7 nodes reused" in out, out[-2000:]  # the run's summary (report/)
        assert found["kinds"][0] == found["constant"][0] == found["stg_events"][0] == REUSED, found
        built = ("random_ids", "stamped", "hooked", "from_files")
        assert {found[name][0] for name in built} == {"success"}, found
        assert "REUSED" not in {r.message for r in results.results if r.node.name in built}
        kinds = next(r for r in results.results if r.node.name == "kinds")
        assert kinds.adapter_response["reused"] is True and kinds.message == "REUSED"
        after = {name: snapshot_count(project, name) for name in TABLES}
        assert after["kinds"] == before["kinds"] and after["constant"] == before["constant"]
        assert after["random_ids"] == before["random_ids"] + 1
        assert_rows_equal_queries(project)

    def test_3_an_input_table_moving_builds(self, project):
        project.run_sql(f"insert into {table(project, 'events')} values (4, 'a')")
        found = verdicts(run_dbt(["run", "-s", "kinds", "constant"]))
        assert found["kinds"][0] == "success"
        assert "events moved from snapshot" in found["kinds"][1], found
        assert found["constant"][0] == REUSED
        assert_rows_equal_queries(project)

    def test_4_a_view_it_reads_redefined_builds(self, project):
        """The view's table did not move; its definition did: the plan digest sees it, unless
        what changed is a column the table does not read."""
        write_file(STG_WIDER, project.project_root, "models", "stg_events.sql")
        found = verdicts(run_dbt(["run", "-s", "stg_events", "kinds"]))
        assert found["stg_events"] == ("success", "its definition changed (or was not recorded)")
        assert found["kinds"][0] == REUSED, found
        assert_rows_equal_queries(project)
        write_file(STG_FILTERED, project.project_root, "models", "stg_events.sql")
        found = verdicts(run_dbt(["run", "-s", "stg_events", "kinds"]))
        assert found["stg_events"] == ("success", "its definition changed (or was not recorded)")
        assert found["kinds"] == ("success", "its query or settings changed"), found
        assert_rows_equal_queries(project)
        expect(rows(project, "kinds"), [("a", 2), ("b", 1)])

    def test_5_a_comment_is_no_change_and_the_switches_build(self, project, monkeypatch):
        write_file("-- counted per kind\n" + KINDS_SQL, project.project_root, "models", "kinds.sql")
        assert verdicts(run_dbt(["run", "-s", "kinds"]))["kinds"][0] == REUSED
        monkeypatch.setenv("LAKEHOUSE_REUSE", "off")
        found = verdicts(run_dbt(["run", "-s", "kinds"]))
        assert found["kinds"] == ("success", "not reusable: LAKEHOUSE_REUSE=off")
        monkeypatch.delenv("LAKEHOUSE_REUSE")
        # That build, with reuse off, carried no record: the next one builds and records.
        found = verdicts(run_dbt(["run", "-s", "kinds"]))
        assert found["kinds"] == ("success", "no record of an earlier build in its table's main")
        found = verdicts(run_dbt(["run", "-s", "kinds", "--full-refresh"]))
        assert found["kinds"] == ("success", "--full-refresh")
        assert verdicts(run_dbt(["run", "-s", "kinds"]))["kinds"][0] == REUSED
        assert_rows_equal_queries(project)

    def test_6_a_table_altered_since_its_build_is_built(self, project):
        """An ALTER commits no snapshot, so `main` still holds the build's record; the columns
        are checked against the ones that build wrote."""
        project.run_sql(f"alter table {table(project, 'kinds')} drop column n")
        found = verdicts(run_dbt(["run", "-s", "kinds"]))
        assert found["kinds"][0] == "success"
        assert found["kinds"][1].startswith("its table's columns are not those its last build")
        assert_rows_equal_queries(project)

    def test_7_a_seed_is_reused_until_its_csv_changes(self, project):
        found = verdicts(run_dbt(["seed"]))
        assert found["labels"] == ("success", "no record of an earlier build in its table's main")
        before = snapshot_count(project, "labels")
        assert verdicts(run_dbt(["seed"]))["labels"][0] == REUSED
        assert snapshot_count(project, "labels") == before
        # `--show` prints a reused seed's rows (read from its CSV for that alone).
        shown = run_dbt(["seed", "--show"])
        assert verdicts(shown)["labels"][0] == REUSED
        assert [tuple(r) for r in shown[0].agate_table.rows] == [("a", "Ay"), ("b", "Bee")]
        write_file(LABELS_CSV + "x,Ex\n", project.project_root, "seeds", "labels.csv")
        found = verdicts(run_dbt(["seed"]))
        assert found["labels"] == ("success", "its query or settings changed")
        expect(rows(project, "labels"), [("a", "Ay"), ("b", "Bee"), ("x", "Ex")])
