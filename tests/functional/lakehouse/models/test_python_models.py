"""Python models in the adapter's own SparkSession (pymodels.py): a pandas result written as a
partitioned Iceberg table with its table properties; an incremental merge model using
`dbt.is_incremental` and `dbt.this` whose rows are the same after a first run, a rerun, a run
on grown input and a --full-refresh; errors in the model's code shown as its own traceback;
and an audited run, where the model reads its upstream seed on the run's branch and its table
is published only when the tests pass. Also `append` and `merge` incremental models whose
reruns overlap the table's keys, and `dbt.source` read as a Spark DataFrame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, table

RAW_RUN1 = "id,amount\n1,10\n2,20\n3,30\n"
RAW_RUN2 = "id,amount\n1,10\n2,20\n3,30\n4,40\n5,50\n"

PANDAS_PY = """
import pandas as pd


def model(dbt, session):
    dbt.config(
        materialized="table",
        partition_by=["grp", "bucket(2, id)"],
        table_properties={"team": "analytics"},
    )
    frame = dbt.ref("raw").toPandas()
    frame["grp"] = (frame["id"] % 2).astype("int64")
    frame["label"] = frame["id"].map(lambda i: f"row-{i}")
    return frame[["id", "amount", "grp", "label"]]
"""

MERGE_PY = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id", incremental_strategy="merge")
    raw = dbt.ref("raw")
    if dbt.is_incremental:
        newest = session.table(str(dbt.this)).agg({"id": "max"}).collect()[0][0]
        raw = raw.filter(raw.id > newest)
    return raw.selectExpr("id", "amount * 10 as amount")
"""

BROKEN_PY = """
def share(total, parts):
    return total / parts


def model(dbt, session):
    dbt.config(materialized="table")
    return share(1, 0)
"""

BAD_SQL_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    return session.sql("select amount from a_table_that_is_not_there")
"""

NOT_A_FRAME_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    return 42
"""


# A Python model's rows reach its table through the same statements as a SQL model's, so the
# s3_rest profile's catalog and storage are checked by the SQL modules; the cluster runs these
# (its executors run the model's code) (docs/tests.md).
@pytest.mark.only_profile("local", "cluster")
class TestPythonModels:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"raw.csv": RAW_RUN1}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "by_pandas.py": PANDAS_PY,
            "merged.py": MERGE_PY,
            "broken.py": BROKEN_PY,
            "bad_sql.py": BAD_SQL_PY,
            "not_a_frame.py": NOT_A_FRAME_PY,
        }

    def test_pandas_table_partitioned_with_properties(self, project: Any) -> None:
        run_dbt(["seed"])
        run_dbt(["run", "--select", "by_pandas"])
        expect(
            rows(project, "by_pandas"),
            [(1, 10, 1, "row-1"), (2, 20, 0, "row-2"), (3, 30, 1, "row-3")],
        )
        described = project.run_sql(
            f"describe table extended {table(project, 'by_pandas')}", fetch="all"
        )
        parts = [r[1] for r in described if str(r[0]).startswith("Part ")]
        assert parts == ["grp", "bucket(2, id)"], described
        properties = dict(
            project.run_sql(f"show tblproperties {table(project, 'by_pandas')}", fetch="all")
        )
        assert properties["team"] == "analytics"
        assert properties["format"].startswith("iceberg/")

    def test_incremental_merge_same_rows_whatever_the_history(self, project: Any) -> None:
        seed = Path(project.project_root) / "seeds" / "raw.csv"
        seed.write_text(RAW_RUN1)
        run_dbt(["seed"])
        first = [(1, 100), (2, 200), (3, 300)]
        run_dbt(["run", "--select", "merged", "--full-refresh"])
        expect(rows(project, "merged"), first)
        run_dbt(["run", "--select", "merged"])  # is_incremental: nothing newer than id 3
        expect(rows(project, "merged"), first)

        seed.write_text(RAW_RUN2)
        run_dbt(["seed"])
        run_dbt(["run", "--select", "merged"])  # ids 4 and 5 merged in
        grown = [*first, (4, 400), (5, 500)]
        expect(rows(project, "merged"), grown)
        run_dbt(["run", "--select", "merged", "--full-refresh"])
        expect(rows(project, "merged"), grown)

    def test_errors_show_the_models_own_traceback(self, project: Any) -> None:
        results = run_dbt(
            ["run", "--select", "broken", "bad_sql", "not_a_frame"], expect_pass=False
        )
        messages = {r.node.name: r.message or "" for r in results}
        assert all(r.status == "error" for r in results), messages

        broken = messages["broken"]
        assert "Python model 'broken' failed in its own code. Nothing was written." in broken
        assert 'File "models/broken.py", line 8, in model' in broken, broken
        assert 'File "models/broken.py", line 3, in share' in broken, broken
        assert broken.rstrip().endswith("ZeroDivisionError: division by zero"), broken

        bad_sql = messages["bad_sql"]
        assert 'File "models/bad_sql.py", line 4, in model' in bad_sql, bad_sql
        assert "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND]" in bad_sql, bad_sql
        assert "returned builtins.int" in messages["not_a_frame"], messages["not_a_frame"]
        for name, message in messages.items():
            assert "py4j" not in message.lower(), (name, message)
            assert "\tat org.apache" not in message and "JVM stacktrace" not in message, name
            assert project.adapter.get_relation(project.database, project.test_schema, name) is None


# Every run returns the whole input, so a rerun's batch holds keys the table has: `run` says
# which kind of run wrote a row.
APPENDED_PY = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    run = "incremental" if dbt.is_incremental else "full"
    return dbt.ref("raw").selectExpr("id", "amount", f"'{run}' as run")
"""

UPSERTED_PY = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id", incremental_strategy="merge")
    run = "incremental" if dbt.is_incremental else "full"
    batch = dbt.ref("raw").selectExpr("id", "amount * 10 as amount", f"'{run}' as run")
    if dbt.is_incremental:
        # The table the batch merges into, read through dbt.this: its row count is carried
        # along, so a wrong `this` (or none) shows in the rows.
        before = session.table(str(dbt.this)).count()
        batch = batch.selectExpr("*", f"{before} as rows_before")
    else:
        batch = batch.selectExpr("*", "0 as rows_before")
    return batch
"""

FROM_SOURCE_PY = """
from pyspark.sql import DataFrame

try:  # a Spark Connect session hands out its own DataFrame class
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
except ImportError:
    ConnectDataFrame = DataFrame


def model(dbt, session):
    dbt.config(materialized="table")
    landing = dbt.source("landing", "raw")
    if not isinstance(landing, (DataFrame, ConnectDataFrame)):
        raise TypeError(f"dbt.source gave {type(landing)}, not a Spark DataFrame")
    # The ref orders this model after the seed; the source is what is read.
    upstream = dbt.ref("raw").selectExpr("id", "amount as ref_amount")
    return landing.join(upstream, "id").selectExpr("id", "amount + ref_amount as doubled")
"""

SOURCES_YML = """
version: 2
sources:
  - name: landing
    schema: "{{ target.schema }}"
    tables:
      - name: raw
"""

# The second input: id 1 changed, id 2 gone, id 3 the same, id 4 new.
RAW_CHANGED = "id,amount\n1,15\n3,30\n4,40\n"


@pytest.mark.only_profile("local", "cluster")
class TestPythonIncrementalAndSources:
    """`append` adds a rerun's batch as it is; `merge` on `unique_key` updates the rows whose
    keys the batch matches, keeps the others and inserts new keys; --full-refresh rebuilds
    from the input alone. `dbt.source` is a Spark DataFrame."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"raw.csv": RAW_RUN1}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "appended.py": APPENDED_PY,
            "upserted.py": UPSERTED_PY,
            "from_source.py": FROM_SOURCE_PY,
            "sources.yml": SOURCES_YML,
        }

    def test_append_merge_and_source(self, project: Any) -> None:
        run_dbt(["build"])
        expect(
            rows(project, "appended"),
            [(1, 10, "full"), (2, 20, "full"), (3, 30, "full")],
        )
        expect(
            rows(project, "upserted"),
            [(1, 100, "full", 0), (2, 200, "full", 0), (3, 300, "full", 0)],
        )
        expect(rows(project, "from_source"), [(1, 20), (2, 40), (3, 60)])

        (Path(project.project_root) / "seeds" / "raw.csv").write_text(RAW_CHANGED)
        run_dbt(["build"])
        expect(
            rows(project, "appended"),
            [
                (1, 10, "full"),
                (2, 20, "full"),
                (3, 30, "full"),
                (1, 15, "incremental"),
                (3, 30, "incremental"),
                (4, 40, "incremental"),
            ],
        )
        # Ids 1 and 3 matched and were updated (3 with the same amount: its `run` changed),
        # id 2 was kept, id 4 inserted; the batch saw the table's 3 rows through dbt.this.
        expect(
            rows(project, "upserted"),
            [
                (1, 150, "incremental", 3),
                (2, 200, "full", 0),
                (3, 300, "incremental", 3),
                (4, 400, "incremental", 3),
            ],
        )
        expect(rows(project, "from_source"), [(1, 30), (3, 60), (4, 80)])

        run_dbt(["build", "--full-refresh", "--select", "appended", "upserted"])
        expect(
            rows(project, "appended"),
            [(1, 15, "full"), (3, 30, "full"), (4, 40, "full")],
        )
        expect(
            rows(project, "upserted"),
            [(1, 150, "full", 0), (3, 300, "full", 0), (4, 400, "full", 0)],
        )


AUDITED_PY = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.ref("raw").selectExpr("id", "amount")
"""
# Fails when any amount is negative.
NON_NEGATIVE_SQL = "select * from {{ ref('audited') }} where amount < 0"


# Audited runs need the driver's JVM in dbt's process: refused under Spark Connect
# (test_connect.py checks the refusal).
@pytest.mark.only_profile("local", "cluster")
class TestPythonModelAudited:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"raw.csv": RAW_RUN1}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"audited.py": AUDITED_PY}

    @pytest.fixture(scope="class")
    def tests(self) -> dict[str, str]:
        return {"non_negative.sql": NON_NEGATIVE_SQL}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    def branch_rows(self, project: Any, branch: str) -> list[tuple]:
        found = project.run_sql(
            f"select id, amount from {table(project, 'audited')} version as of '{branch}'",
            fetch="all",
        )
        return sorted(tuple(r) for r in found)

    def last_branch(self, project: Any) -> str:
        from dbt.adapters.lakehouse.audit.run import branch_for

        results = json.loads(
            (Path(project.project_root) / "target" / "run_results.json").read_text()
        )
        return branch_for(results["metadata"]["invocation_id"])

    def test_written_on_the_branch_and_published_when_tests_pass(self, project: Any) -> None:
        run_dbt(["build"])
        published = [(1, 10), (2, 20), (3, 30)]
        expect(rows(project, "audited"), published)

        seed = Path(project.project_root) / "seeds" / "raw.csv"
        seed.write_text("id,amount\n1,10\n2,-20\n")
        _, out = run_dbt_and_capture(["build", "--target", "audited"], expect_pass=False)
        branch = self.last_branch(project)
        # The model read the seed's new rows on the run's branch, wrote there, and main kept
        # the published rows.
        assert self.branch_rows(project, branch) == [(1, 10), (2, -20)]
        expect(rows(project, "audited"), published)
        assert "Audited run published" not in output_text(out)

        seed.write_text(RAW_RUN2)
        _, out = run_dbt_and_capture(["build", "--target", "audited"])
        assert "Audited run published" in output_text(out), output_text(out)
        expect(rows(project, "audited"), [(1, 10), (2, 20), (3, 30), (4, 40), (5, 50)])
