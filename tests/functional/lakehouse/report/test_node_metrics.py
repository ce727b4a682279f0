"""Every node's adapter_response says what it did: exact rows inserted, updated and deleted,
summed over all its statements, for a table, an append, a CDC merge (inserts, updates and
deletes in one batch), an insert_overwrite, a delete+insert, a snapshot and a seed, on a first
build, a rerun with new data and a `--full-refresh`; dbt's console line shows the rows
(`[MERGE 3 in 1.2s]`); files, bytes, the node's commits and its Spark jobs and task time are
there, with its wall time split into planning, jobs and catalog round trips; the run ends
with the table of its heaviest nodes; the node's Spark jobs are described
by its name and the profile's tags, and its Iceberg commits carry the tags.

Spark 4.1 writes MERGE's own counts into the snapshot summary; on 3.5 a merge's rows are not
known (report/work.py), so this runs on the 4.1 line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from functional.lakehouse.report.browser import CHROMIUM, pixel_colours, screenshot
from functional.lakehouse.shared.tables import table

pytestmark = [
    pytest.mark.only_profile("local"),
    pytest.mark.skipif(
        installed_line().spark != "4.1", reason="MERGE's row counts are Spark 4.1's"
    ),
]

TAGS = {"team": "finance", "cost_center": "cc42"}

MODELS = {
    # Compacted after each build, and mirrored to a Delta log: both commits are the node's too.
    "t_table.sql": """
{{ config(materialized='table', table_formats=['iceberg', 'delta'],
          maintenance={'after_run': ['compaction'], 'compaction': {'min_input_files': 1}}) }}
select id from range(0, 5, 1, 2)
""",
    "inc_append.sql": """
{{ config(materialized='incremental', incremental_strategy='append') }}
{% if var('round', 1) == 1 %}select id from range(0, 4)
{% else %}select id from range(10, 13){% endif %}
""",
    # Round 2: update 1, delete 2, insert 4; deleting unknown key 5 does nothing.
    "inc_merge.sql": """
{{ config(materialized='incremental', unique_key='id', delete_condition="op = 'd'") }}
select id, v, op from values
{% if var('round', 1) == 1 %}
  (1, 'a', 'i'), (2, 'b', 'i'), (3, 'c', 'i')
{% else %}
  (1, 'a2', 'u'), (2, cast(null as string), 'd'), (4, 'd', 'i'), (5, cast(null as string), 'd')
{% endif %}
  as t(id, v, op)
""",
    # Round 2 replaces partition g = '1' (ids 1, 4, 7) with two rows.
    "inc_overwrite.sql": """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['g']) }}
{% if var('round', 1) == 1 %}select id, cast(id % 3 as string) as g from range(0, 9)
{% else %}select id, '1' as g from range(100, 102){% endif %}
""",
    # Round 2: keys 3 and 4 are deleted and inserted again, 5 is new.
    "inc_di.sql": """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='id') }}
{% if var('round', 1) == 1 %}select id from range(1, 5)
{% else %}select id from range(3, 6){% endif %}
""",
    "snap_src.sql": """
{{ config(materialized='view') }}
select * from values
{% if var('round', 1) == 1 %}(1, 'a'), (2, 'b'){% else %}(1, 'a2'), (2, 'b'), (3, 'c'){% endif %}
  as t(id, v)
""",
    # A data test: its query's jobs and planning are in its response too.
    "tests.yml": """
models:
  - name: t_table
    columns:
      - name: id
        data_tests: [unique]
""",
}
SNAPSHOT = """
{% snapshot snap %}
{{ config(unique_key='id', strategy='check', check_cols=['v'], target_schema=schema) }}
select * from {{ ref('snap_src') }}
{% endsnapshot %}
"""
SEED = "id,name\n1,a\n2,b\n3,c\n"

# node -> (message, rows_inserted, rows_updated, rows_deleted) for each build
FIRST = {
    "t_table": ("CREATE 5", 5, 0, 0),
    "inc_append": ("CREATE 4", 4, 0, 0),
    "inc_merge": ("CREATE 3", 3, 0, 0),
    "inc_overwrite": ("CREATE 9", 9, 0, 0),
    "inc_di": ("CREATE 4", 4, 0, 0),
    "snap": ("SNAPSHOT 2", 2, 0, 0),
    "people": ("INSERT 3", None, None, None),
}
SECOND = {
    "t_table": ("CREATE 5", 5, 0, 0),
    "inc_append": ("INSERT 3", 3, 0, 0),
    "inc_merge": ("MERGE 3", 1, 1, 1),
    "inc_overwrite": ("OVERWRITE 2", 2, 0, 3),
    "inc_di": ("DELETE+INSERT 5", 3, 0, 2),
    # the old version of 1 closed (updated), its new version and 3 inserted
    "snap": ("SNAPSHOT 3", 2, 1, 0),
    "people": ("INSERT 3", None, None, None),
}
REFRESHED = {
    "t_table": ("CREATE 5", 5, 0, 0),
    "inc_append": ("CREATE 3", 3, 0, 0),
    # the batch applied to an empty table: the rows of its deletes are not inserted
    "inc_merge": ("CREATE 2", 2, 0, 0),
    "inc_overwrite": ("CREATE 2", 2, 0, 0),
    "inc_di": ("CREATE 3", 3, 0, 0),
    # a snapshot is never rebuilt: nothing changed, and its MERGE commits no row and no file
    "snap": ("SNAPSHOT 0", 0, 0, 0),
    "people": ("CREATE 3", None, None, None),
}


class TestNodeMetrics:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        # The rerun's figures are a rebuild's: built every run (functional/rebuilds.py).
        return {**dbt_profile_target, "query_tags": TAGS, "reuse": False}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap.sql": SNAPSHOT}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": SEED}

    def test_first_run_rerun_and_full_refresh(self, project: Any) -> None:
        for round_, extra, expected in (
            (1, [], FIRST),
            (2, [], SECOND),
            (2, ["--full-refresh"], REFRESHED),
        ):
            _, colored = run_dbt_and_capture(["build", "--vars", f"{{round: {round_}}}", *extra])
            output = re.sub(r"\x1b\[[0-9;]*m", "", colored)
            responses = _responses(Path(project.project_root))
            for node, (message, inserted, updated, deleted) in expected.items():
                response = responses[node]
                where = f"{node} in round {round_} {extra}: {response}"
                assert response["_message"] == message, where
                assert f"[{message} in " in output, where
                if inserted is not None:
                    found = (response["rows_inserted"], response["rows_updated"],
                             response["rows_deleted"])  # fmt: skip
                    assert found == (inserted, updated, deleted), where
                    wrote = inserted + updated > 0
                    assert (response["files_added"] > 0) == wrote, where
                    assert (response["bytes_written"] > 0) == wrote, where
                    assert response["snapshot_id"] == response["snapshots"][-1]["snapshot_id"]
            view = responses["snap_src"]
            assert view["_message"] == "CREATE VIEW" and "rows_inserted" not in view
            _wall_split_sums(Path(project.project_root), f"round {round_} {extra}")
            table_node = responses["t_table"]
            assert table_node["spark_jobs"] >= 1 and table_node["spark_seconds"] > 0
            # CTAS, the compaction's rewrite and the Delta log's commit; rows counted once.
            made = {c["statement"]: c["operation"] for c in table_node["snapshots"]}
            assert table_node["snapshots"][0]["statement"] == "create", made
            assert made["rewrite"] == "replace" and made["mirror"].startswith("delta "), made
            assert table_node["files_removed"] >= 2, table_node  # the two files compacted
            # The run's summary, after dbt's totals: its 9 nodes (10 are shown at most).
            summary = output[output.index("Where the time went (9 nodes, by Spark task time)") :]
            assert "inc_merge" in summary and "t_table" in summary, summary
        self._jobs_and_commits_name_the_node(project)

    def _jobs_and_commits_name_the_node(self, project: Any) -> None:
        from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

        spark = ENGINE.active
        store = spark.sparkContext._jsc.sc().statusStore()
        jobs = store.jobsList(None)  # every job the engine still keeps
        descriptions = set()
        for i in range(jobs.size()):
            description = jobs.apply(i).description()
            if description.isDefined():
                descriptions.add(str(description.get()))
        tagged = [d for d in descriptions if d.startswith("dbt model.") and ".t_table " in d]
        assert tagged, sorted(descriptions)[:5]
        assert all(d.endswith(" [cost_center=cc42,team=finance]") for d in tagged), tagged
        # The last build's CTAS (its compaction's snapshot, a procedure's, carries no lineage).
        # The cursor gives a map column as JSON text.
        summary_text = project.run_sql(
            f"select summary from {table(project, 't_table')}.snapshots "
            "where operation = 'overwrite' order by committed_at desc limit 1",
            fetch="one",
        )[0]
        summary = json.loads(summary_text)
        assert summary["dbt.query_tags"] == "cost_center=cc42,team=finance"
        assert summary["dbt.node"].endswith(".t_table")

    @pytest.mark.skipif(
        CHROMIUM is None, reason="no chromium: scripts/install-tests.sh installs it"
    )
    def test_the_report_page_renders_in_a_real_browser(
        self, project: Any, record_property: Any
    ) -> None:
        """`dbt-lakehouse report --html` on the last build's run_results.json, rendered by
        headless Chromium: a bar per node in both colours, every node listed."""
        root = Path(project.project_root)
        page, shot = root / "report.html", root / "report.png"
        cli = Path(sys.executable).with_name("dbt-lakehouse")
        done = subprocess.run(
            [str(cli), "report", str(root / "target" / "run_results.json"), "--html", str(page)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Where the time went (9 nodes, by Spark task time)" in done.stdout
        assert page.read_text().count("<tr data-node=") == 9
        colours = pixel_colours(screenshot(page, shot, (1000, 500)))
        record_property("report screenshot", str(shot))
        print(f"report page screenshot: {shot}")
        spark_blue, wall_grey = colours[(0x2F, 0x6F, 0xDE)], colours[(0x9A, 0xA5, 0xB1)]
        # Nine bars of each, at least a few pixels each, and more than the key's swatches.
        assert spark_blue > 9 * 20 and wall_grey > 9 * 20, colours.most_common(8)


# Views stacked on views: each level reads the one below twice, so the table on top plans
# 2^LEVELS view expansions, each a view loaded from the catalog and analysed, for a few rows.
# Their checkpoints are off: by default the run would read the stack through one
# (docs/models.md#stacked-views), and the table on top would plan almost nothing.
LEVELS = 6
STACKED = {
    "level_0.sql": "{{ config(materialized='view') }} select 1 as id, 'a' as v",
    **{
        f"level_{k}.sql": (
            "{{ config(materialized='view', checkpoint=false) }} "
            f"select * from {{{{ ref('level_{k - 1}') }}}} "
            f"union all select * from {{{{ ref('level_{k - 1}') }}}}"
        )
        for k in range(1, LEVELS + 1)
    },
    # One task writes the one file: the write's own cost stays small beside the planning.
    "on_top.sql": (
        "{{ config(materialized='table') }} "
        f"select /*+ COALESCE(1) */ * from {{{{ ref('level_{LEVELS}') }}}}"
    ),
}


class TestPlanningHeavyNode:
    """A table over stacked views spends its time planning, and its split says so."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return STACKED

    def test_the_split_shows_the_planning(self, project: Any) -> None:
        run_dbt_and_capture(["run"])
        response = _responses(Path(project.project_root))["on_top"]
        assert response["_message"] == f"CREATE {2**LEVELS}", response
        planning, ran = response["planning_seconds"], response["jobs_seconds"]
        assert planning > ran and planning > response["catalog_seconds"], response
        _wall_split_sums(Path(project.project_root), "stacked views", "level_0", "on_top")


def _wall_split_sums(
    root: Path, where: str, view_name: str = "snap_src", table: str = "t_table"
) -> None:
    """Each node's planning, jobs and catalog time fit in its wall time (dbt's own work is the
    rest); a view runs no job and takes catalog round trips; a table's CTAS plans, runs jobs
    and commits; a data test plans and runs its query's jobs."""
    found = json.loads((root / "target" / "run_results.json").read_text())
    for result in found["results"]:
        response, wall = result["adapter_response"], result["execution_time"]
        parts = [response[f"{k}_seconds"] for k in ("planning", "jobs", "catalog")]
        assert all(p >= 0 for p in parts) and sum(parts) <= wall + 0.05, (where, result)
        if result["unique_id"].startswith("test."):
            assert response["spark_jobs"] >= 1 and parts[0] > 0 and parts[1] > 0, (where, result)
    responses = _responses(root)
    view, ctas = responses[view_name], responses[table]
    assert view["jobs_seconds"] == 0 and view["catalog_seconds"] > 0, (where, view)
    assert min(ctas["planning_seconds"], ctas["jobs_seconds"], ctas["catalog_seconds"]) > 0, (
        where, ctas,
    )  # fmt: skip


def _responses(root: Path) -> dict[str, dict[str, Any]]:
    found = json.loads((root / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[-1]: r["adapter_response"] for r in found["results"]}
