"""Commit lineage on real Iceberg tables: every snapshot a `dbt build` commits names the build's
invocation id and the node that wrote it, each node's adapter_response carries the snapshot it
committed, and `dbt-lakehouse history` prints them. A first run, a rerun (the incremental model
merges) and a `--full-refresh` leave the same rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import current_snapshot, rows, table
from functional.rebuilds import BuildsEveryRun

SEED_CSV = """id,customer,amount,updated_at
1,alice,10,2024-01-01 00:00:00
2,bob,20,2024-01-01 00:00:00
3,carol,30,2024-01-02 00:00:00
"""

TABLE_SQL = "{{ config(materialized='table') }} select * from {{ ref('lineage_seed') }}"

MERGE_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
select id, customer, amount * 2 as amount, updated_at from {{ ref('lineage_seed') }}
"""

SNAPSHOT_SQL = """
{% snapshot lineage_snap %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at',
          target_schema=target.schema) }}
select * from {{ ref('lineage_seed') }}
{% endsnapshot %}
"""

TABLES = {
    "lineage_seed": "seed",
    "lineage_table": "model",
    "lineage_merge": "model",
    "lineage_snap": "snapshot",
}
SNAPSHOT_COLUMNS = "id, customer, amount, updated_at, dbt_scd_id, dbt_valid_from, dbt_valid_to"


def node_id(name: str) -> str:
    return f"{TABLES[name]}.test.{name}"


def run_results(project: Any) -> tuple[str, dict[str, dict[str, Any]]]:
    path = Path(project.project_root) / "target" / "run_results.json"
    found = json.loads(path.read_text())
    responses = {r["unique_id"]: r["adapter_response"] for r in found["results"]}
    return found["metadata"]["invocation_id"], responses


def commits(project: Any, name: str) -> list[dict[str, Any]]:
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(
        f"select snapshot_id, summary from {table(project, name)}.snapshots", fetch="all"
    )
    # The cursor hands maps over as JSON text.
    return [{"id": row[0], **json.loads(row[1])} for row in found]


def table_rows(project: Any, name: str) -> list[tuple]:
    return rows(project, name, SNAPSHOT_COLUMNS if name == "lineage_snap" else "*")


def history(
    project: Any, name: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [
        str(Path(sys.executable).with_name("dbt-lakehouse")),
        "history",
        f"{project.database}.{project.test_schema}.{name}",
        "--profiles-dir",
        str(project.profiles_dir),
        *extra,
    ]
    return subprocess.run(
        command,
        cwd=project.project_root,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


# Each build's commits are checked, the rerun's too: built every run.
class TestCommitLineage(BuildsEveryRun):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"lineage_seed.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"lineage_table.sql": TABLE_SQL, "lineage_merge.sql": MERGE_SQL}

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"lineage_snap.sql": SNAPSHOT_SQL}

    def _check_build(self, project: Any, invocations: list[str]) -> dict[str, list[tuple]]:
        """After one build: its commits carry its invocation and the right node, and each
        node's snapshot_id is the snapshot its table now stands at."""
        invocation, responses = run_results(project)
        assert invocation not in invocations
        invocations.append(invocation)
        for name in TABLES:
            found = commits(project, name)
            # Every commit of the test's builds names one of them and this table's node.
            assert {c.get("dbt.invocation_id") for c in found} <= set(invocations), name
            assert {c.get("dbt.node") for c in found} == {node_id(name)}, name
            current = current_snapshot(project, name)
            response = responses[node_id(name)]
            this_build = [c["id"] for c in found if c["dbt.invocation_id"] == invocation]
            if name == "lineage_snap" and len(invocations) > 1:
                # An unchanged source: dbt's snapshot MERGE may commit nothing.
                assert response.get("snapshot_id") in (None, current), response
                assert this_build in ([], [current])
            else:
                assert response["snapshot_id"] == current, (name, response)
                assert this_build == [current], name
        return {name: table_rows(project, name) for name in TABLES}

    def test_build_rerun_full_refresh(
        self, project: Any, request: pytest.FixtureRequest, tmp_path: Path
    ) -> None:
        invocations: list[str] = []
        assert len(run_dbt(["build"])) == 4
        first = self._check_build(project, invocations)
        assert first["lineage_merge"] == [
            (1, "alice", 20, first["lineage_merge"][0][3]),
            (2, "bob", 40, first["lineage_merge"][1][3]),
            (3, "carol", 60, first["lineage_merge"][2][3]),
        ]
        assert len(first["lineage_snap"]) == 3

        run_dbt(["build"])  # the incremental model merges this time
        assert self._check_build(project, invocations) == first
        merge_ops = project.run_sql(
            f"select operation from {table(project, 'lineage_merge')}.snapshots "
            "order by committed_at",
            fetch="all",
        )
        assert [row[0] for row in merge_ops][1] == "overwrite"  # the MERGE's copy-on-write

        run_dbt(["build", "--full-refresh"])
        assert self._check_build(project, invocations) == first

        done = history(project, "lineage_merge", "--limit", "0")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        # Nothing but the table: Spark's console output goes to its log.
        assert lines[0].split() == [
            "committed",
            "(UTC)",
            "snapshot",
            "id",
            "operation",
            "rows",
            "+/-",
            "files",
            "+/-",
            "main",
            "dbt",
            "invocation",
            "dbt",
            "node",
        ]
        printed = [line.split() for line in lines[1:]]
        assert len(printed) == 3
        newest_first = list(reversed(invocations))
        assert [row[-2:] for row in printed] == [
            [i, node_id("lineage_merge")] for i in newest_first
        ]
        assert printed[0][2] == str(current_snapshot(project, "lineage_merge"))
        assert printed[0][6] == "yes"  # the full refresh's snapshot is main's head
        assert printed[1][3:5] == ["overwrite", "+3/-3"]  # the rerun's MERGE updated 3 rows
        profile = request.config.getoption("--profile")
        secrets: list[str] = []
        if profile == "s3_rest":
            secrets = [os.environ[v] for v in ("LAKEHOUSE_TEST_S3_SECRET_KEY",)]
            secrets.append(os.environ["LAKEHOUSE_TEST_REST_TOKEN"])
            assert not any(s in done.stdout + done.stderr for s in secrets)
        if profile in ("local", "s3_rest"):
            from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

            # `done` read through the warm engine this process's builds are on (same profile).
            assert ENGINE.attachment is not None
            # With no warm engine up (an engine home of its own), the embedded lakehouse's and
            # the REST catalog's history are read by pyiceberg and no JVM starts: the same
            # table, the same errors.
            no_engines = {"LAKEHOUSE_ENGINE_HOME": str(tmp_path)}
            read = history(project, "lineage_merge", "--limit", "0", env=no_engines)
            assert read.returncode == 0 and read.stdout == done.stdout, read.stderr
            missing = history(project, "no_such_table", env=no_engines)
            assert missing.returncode == 1 and missing.stderr.startswith(
                f"dbt-lakehouse history: Table `{project.database}`.`{project.test_schema}`."
                "`no_such_table` does not exist (profile 'test', target 'default', "
            ), missing.stderr
            assert not [path for path in tmp_path.iterdir() if path.is_dir()]
            printed = read.stdout + read.stderr + missing.stdout + missing.stderr
            assert not any(s in printed for s in secrets)

    def test_history_of_a_missing_table_is_one_line(self, project: Any, capsys: Any) -> None:
        from dbt.adapters.lakehouse.cli.main import main

        # In this process, on the session the builds used (same profile, same spec).
        code = main(
            [
                "history",
                f"{project.database}.{project.test_schema}.no_such_table",
                "--profiles-dir",
                str(project.profiles_dir),
            ]
        )
        out, err = capsys.readouterr()
        assert code == 1 and out == ""
        assert err.count("\n") == 1
        assert err.startswith(
            f"dbt-lakehouse history: Table `{project.database}`.`{project.test_schema}`."
            "`no_such_table` does not exist (profile 'test', target 'default', "
        ), err
