"""Tables and views as Iceberg stores them: partition specs read back from table metadata,
views that outlive the process that made them, and the errors a bad config must give."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from functional.rebuilds import BuildsEveryRun

ALL_TRANSFORMS_SQL = """
{{ config(
    materialized='table',
    partition_by=[
        'region',
        'years(d)',
        'months(ts_m)',
        'day(ts_d)',
        {'field': 'ts_h', 'transform': 'hours'},
        'bucket(8, id)',
        'truncate(3, zip)',
    ],
) }}
select cast(id as bigint) as id, region, d, ts_m, ts_d, ts_h, zip
from values
    (1, 'eu', date'2024-01-02', timestamp'2024-01-02 03:04:05', timestamp'2024-01-02 03:04:05',
     timestamp'2024-01-02 03:04:05', '10115'),
    (2, 'us', date'2025-06-30', timestamp'2025-06-30 23:59:59', timestamp'2025-06-30 23:59:59',
     timestamp'2025-06-30 23:59:59', '94105')
    as t(id, region, d, ts_m, ts_d, ts_h, zip)
"""

EXPECTED_SPEC = [
    ("region", "identity"),
    ("d", "year"),
    ("ts_m", "month"),
    ("ts_d", "day"),
    ("ts_h", "hour"),
    ("id", "bucket[8]"),
    ("zip", "truncate[3]"),
]


def current_metadata(project, table: str) -> dict:
    """The table's current metadata.json, read through Spark's own file system layer, so the
    same code reads a local warehouse and an S3 one."""
    relation = f"`{project.database}`.`{project.test_schema}`.`{table}`"
    rows = project.run_sql(
        f"select file from {relation}.metadata_log_entries order by timestamp desc limit 1",
        fetch="all",
    )
    text = ENGINE.active.read.text(rows[0][0], wholetext=True).first()[0]
    return json.loads(text)


def partition_spec(metadata: dict) -> list[tuple[str, str]]:
    schema = next(s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"])
    names = {f["id"]: f["name"] for f in schema["fields"]}
    spec = next(
        s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"]
    )
    return [(names[f["source-id"]], f["transform"]) for f in spec["fields"]]


# Its rerun of an unchanged model is a rebuild (CREATE OR REPLACE keeps spec and history).
class TestEveryTransformLandsInThePartitionSpec(BuildsEveryRun):
    @pytest.fixture(scope="class")
    def models(self):
        return {"all_transforms.sql": ALL_TRANSFORMS_SQL}

    def test_partition_spec_from_iceberg_metadata(self, project):
        run_dbt(["run"])
        metadata = current_metadata(project, "all_transforms")
        assert metadata["format-version"] == 2
        assert partition_spec(metadata) == EXPECTED_SPEC
        # Each row lands in its own partition: two rows, two distinct partition tuples.
        relation = f"`{project.database}`.`{project.test_schema}`.`all_transforms`"
        partitions = project.run_sql(f"select count(*) from {relation}.partitions", fetch="one")
        assert partitions[0] == 2

    def test_rebuild_keeps_the_spec_and_the_history(self, project):
        run_dbt(["run"])
        run_dbt(["run"])
        metadata = current_metadata(project, "all_transforms")
        assert partition_spec(metadata) == EXPECTED_SPEC
        assert len(metadata["snapshots"]) >= 2


BAD_PARTITIONS_SQL = """
{{ config(materialized='table', partition_by=['bucket(0, id)', 'weeks(ts)', 'days(ts)']) }}
select 1 as id, current_timestamp() as ts
"""

MISSING_COLUMN_SQL = """
{{ config(materialized='incremental', partition_by=['days(created_at)']) }}
select 1 as id, current_timestamp() as ts
"""


# Refused before anything is written: the same on every storage and catalog (CI time).
@pytest.mark.only_profile("local")
class TestBadPartitionBy:
    @pytest.fixture(scope="class")
    def models(self):
        return {"bad_partitions.sql": BAD_PARTITIONS_SQL, "missing_column.sql": MISSING_COLUMN_SQL}

    def test_every_bad_entry_is_named_and_nothing_is_written(self, project):
        _, output = run_dbt_and_capture(["run", "--select", "bad_partitions"], expect_pass=False)
        assert "Invalid partition_by for model 'bad_partitions'" in output
        assert "entry 'bucket(0, id)': bucket count must be a positive integer, got 0" in output
        assert "entry 'weeks(ts)': unknown transform 'weeks'" in output
        assert "Accepted entries:" in output
        assert self._table_exists(project, "bad_partitions") is False

    def test_column_not_in_the_model(self, project):
        _, output = run_dbt_and_capture(["run", "--select", "missing_column"], expect_pass=False)
        assert "Invalid partition_by for model 'missing_column'" in output
        assert "entry 'days(created_at)': column 'created_at' is not in the model" in output
        assert "The model's columns are: id, ts." in output
        assert self._table_exists(project, "missing_column") is False

    @staticmethod
    def _table_exists(project, name: str) -> bool:
        rows = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}`", fetch="all"
        )
        return name in {row[1] for row in rows}


VIEW_BASE_SQL = "{{ config(materialized='table') }} select 1 as id"
VIEW_SQL = "{{ config(materialized='view') }} select id from {{ ref('view_base') }}"


class TestViewSurvivesANewProcess:
    @pytest.fixture(scope="class")
    def models(self):
        return {"view_base.sql": VIEW_BASE_SQL, "my_view.sql": VIEW_SQL}

    def test_view_is_a_catalog_view_read_by_another_process(self, project):
        run_dbt(["run"])
        namespace = f"`{project.database}`.`{project.test_schema}`"
        views = {row[1] for row in project.run_sql(f"show views in {namespace}", fetch="all")}
        tables = {row[1] for row in project.run_sql(f"show tables in {namespace}", fetch="all")}
        assert "my_view" in views
        assert "my_view" not in tables
        # A row added after the view was created shows through it: a view, not a copy.
        project.run_sql(f"insert into {namespace}.`view_base` values (2)")

        # A fresh dbt process (its own JVM and catalog connection) reads the view.
        completed = subprocess.run(
            [
                str(Path(sys.executable).parent / "dbt"),
                "show",
                "--inline",
                "select id from {{ ref('my_view') }} order by id",
                "--output",
                "json",
                "--log-format",
                "text",
                "--project-dir",
                str(project.project_root),
                "--profiles-dir",
                str(project.profiles_dir),
            ],
            cwd=str(project.project_root),
            env={**os.environ, "DBT_LOG_PATH": str(Path(project.project_root) / "logs-child")},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
        shown = json.loads(completed.stdout[completed.stdout.index("{") :].split("\n\n")[0])
        assert [row["id"] for row in shown["show"]] == [1, 2]


BAD_PROFILES = {
    "s3://my-depot": "Unsupported scheme: s3. Expected 'dataos://'",
    "dataos://no-such-depot": "Unknown depot dataos://no-such-depot: no resolver knows it.",
}


@pytest.mark.parametrize(("depot", "message"), sorted(BAD_PROFILES.items()))
def test_bad_profile_fails_with_the_documented_message(
    tmp_path: Path, depot: str, message: str
) -> None:
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    (project_dir / "dbt_project.yml").write_text(
        "name: bad_profile\nversion: '1.0'\nconfig-version: 2\nprofile: bad_profile\n"
    )
    depots = tmp_path / "depots.yml"
    depots.write_text(
        "depots:\n  other-depot:\n    type: lakehouse\n    spec: {storageType: file, "
        f"file: {{path: {tmp_path / 'wh'}}}}}\n    catalog: {{type: hadoop}}\n"
    )
    (project_dir / "profiles.yml").write_text(
        "bad_profile:\n  target: dev\n  outputs:\n    dev:\n      type: lakehouse\n"
        f"      schema: s\n      depot: '{depot}'\n      depots_file: '{depots}'\n"
    )
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "debug", "--profiles-dir", str(project_dir)],
        cwd=str(project_dir),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0
    assert message in output
    if depot.startswith("dataos://"):
        # An unknown depot names the known ones and the file that was searched.
        assert "other-depot" in output
        assert str(depots) in output


PROPERTIES_SQL = """
{{ config(
    materialized='table',
    table_properties={'write.merge.mode': 'merge-on-read', 'comment.team': "data's team"},
    write_order_by=['region', 'id'],
) }}
select 1 as id, 'eu' as region
"""


class TestTablePropertiesAndWriteOrder:
    @pytest.fixture(scope="class")
    def models(self):
        return {"with_properties.sql": PROPERTIES_SQL}

    def test_properties_and_sort_order_land_in_iceberg_metadata(self, project):
        run_dbt(["run"])
        run_dbt(["run"])  # the rebuild keeps them: CREATE OR REPLACE re-applies the config
        metadata = current_metadata(project, "with_properties")
        assert metadata["properties"]["write.merge.mode"] == "merge-on-read"
        assert metadata["properties"]["comment.team"] == "data's team"
        order = next(
            o for o in metadata["sort-orders"] if o["order-id"] == metadata["default-sort-order-id"]
        )
        schema = next(
            s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]
        )
        names = {f["id"]: f["name"] for f in schema["fields"]}
        assert [names[f["source-id"]] for f in order["fields"]] == ["region", "id"]


GRANTED_TABLE_SQL = (
    "{{ config(materialized='table', grants={'select': ['analyst', 'bi']}) }}\nselect 1 as id"
)
GRANTED_INCREMENTAL_SQL = (
    "{{ config(materialized='incremental', unique_key='id', grants={'select': ['analyst']}) }}\n"
    "select id + 1 as id from {{ ref('granted_table') }}"
)
GRANTED_VIEW_SQL = (
    "{{ config(materialized='view', grants={'select': ['analyst']}) }}\n"
    "select * from {{ ref('granted_incremental') }}"
)


# On `local` only: what a grants config does is the adapter's own, the same on every catalog;
# the warning's words for a REST depot are tests/unit/models/test_grants.py's.
@pytest.mark.only_profile("local")
# The rerun's grants warning is a rebuild's: built every run.
class TestGrantsAreReportedNotApplied(BuildsEveryRun):
    """No Iceberg catalog takes grants through open-source Spark: each run builds the models
    and warns once for the catalog, naming it, its kind and where access is managed."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "granted_table.sql": GRANTED_TABLE_SQL,
            "granted_incremental.sql": GRANTED_INCREMENTAL_SQL,
            "granted_view.sql": GRANTED_VIEW_SQL,
        }

    def test_first_run_rerun_and_full_refresh(self, project):
        for args in ([], [], ["--full-refresh"]):
            results, out = run_dbt_and_capture(["run", *args])
            assert [r.status for r in results] == ["success"] * 3
            warnings = [line for line in out.splitlines() if "were not applied" in line]
            assert len(warnings) == 1, out
            assert f"catalog `{project.database}` (jdbc, depot " in warnings[0]
            assert "takes no grants through Spark" in warnings[0] and "Manage access" in warnings[0]
            assert project.run_sql(
                f"select * from {project.database}.{project.test_schema}.granted_view",
                fetch="all",
            ) == [(2,)]
