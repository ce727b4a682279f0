"""Seeds travel as one temporary view: values that break hand-built INSERTs arrive intact."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.dbt_output import output_text
from functional.rebuilds import BuildsEveryRun

TRICKY_CSV = """id,name,note,amount,joined
1,O'Brien,"says ""hi"", then leaves",10.50,2024-01-02
2,Percent,100% off; {{ not jinja }} \\n,,2024-02-29
3,,,-0.01,
4,"two
lines, caf\u00e9 \U0001f600",back\\slash 'quoted',7,2024-03-01
"""


# Values and the reseed's one commit are the same statements on any storage and catalog (CI
# time): the s3_rest tests' projects each seed through their catalog.
@pytest.mark.only_profile("local")
# A reseed of the same CSV is a new commit here: built every run.
class TestSeedValuesArriveIntact(BuildsEveryRun):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"tricky.csv": TRICKY_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+column_types": {"amount": "decimal(10,2)", "id": "int"}}}

    def test_quotes_percent_nulls_and_column_types(self, project, monkeypatch):
        from pyspark.sql.session import SparkSession

        plain_sql = SparkSession.sql

        def without_pyspark_args(self, query, args=None, **kwargs):
            # PySpark's args path makes each literal with `lit`, whose first call imports
            # pandas (runtime.sql): the rows go to the JVM's own instead.
            assert args is None, "a seed's rows went through PySpark's lit"
            return plain_sql(self, query, **kwargs)

        monkeypatch.setattr(SparkSession, "sql", without_pyspark_args)
        results = run_dbt(["seed"])
        assert len(results) == 1
        relation = f"`{project.database}`.`{project.test_schema}`.`tricky`"
        rows = project.run_sql(f"select * from {relation} order by id", fetch="all")
        assert [tuple(row) for row in rows] == [
            (1, "O'Brien", 'says "hi", then leaves', decimal.Decimal("10.50"), dt.date(2024, 1, 2)),
            (2, "Percent", "100% off; {{ not jinja }} \\n", None, dt.date(2024, 2, 29)),
            (3, None, None, decimal.Decimal("-0.01"), None),
            (
                4,
                "two\nlines, caf\u00e9 \U0001f600",
                "back\\slash 'quoted'",
                decimal.Decimal("7.00"),
                dt.date(2024, 3, 1),
            ),
        ]
        types = {
            row[0]: row[1]
            for row in project.run_sql(f"describe table {relation}", fetch="all")
            if row[0] and not row[0].startswith("#")
        }
        assert types["id"] == "int"
        assert types["amount"] == "decimal(10,2)"
        assert types["joined"] == "date"

    def test_reseed_replaces_in_one_commit_with_history(self, project):
        run_dbt(["seed"])
        run_dbt(["seed"])
        relation = f"`{project.database}`.`{project.test_schema}`.`tricky`"
        count = project.run_sql(f"select count(*) from {relation}", fetch="one")[0]
        snapshots = project.run_sql(f"select count(*) from {relation}.snapshots", fetch="one")[0]
        assert count == 4
        assert snapshots >= 2


# Read by Spark: every shape, NULL spellings, a quoted line break, non-ASCII text.
SPARK_READ_CSV = (
    "id,amount,qty,day,at,flag,label,note\n"
    '1,1.50,7,2024-02-29,2020-01-01 10:00:00,TRUE,caf\u00e9,"two\nlines"\n'
    "2,-3,-0,2023-01-31,2020-12-31 23:59:59,false,NULL,null\n"
    "3,,,,,,\u00a0null ,plain\n"
    "4,0.001,12,1900-03-01,1999-01-01 00:00:01,False,  padded  ,\n"
)
# Left to agate: values it rewrites ('1,000' is 1000 to agate, NULL to a cast).
AGATE_READ_CSV = 'id,amount\n1,"1,000"\n2,$5\n3,7\n'


def _spark_value(value, sql_type):
    if value is None:
        return None
    if sql_type == "double":
        return float(value)
    if sql_type == "bigint":
        return int(value)
    return value


# Under Spark Connect the file is on this machine and Spark on the server's: seeds go through
# agate. Off the embedded lakehouse the seed lands as any table does, which the s3_rest tests'
# projects (each with a seed) check (CI time).
@pytest.mark.only_profile("local", "cluster")
# Its rerun reads the CSV through agate again (the log line it checks): built every run.
class TestSeedsReadBySparkMatchAgate(BuildsEveryRun):
    """A seed Spark reads itself gives the table dbt's agate path gives: same types, same rows."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"spark_read.csv": SPARK_READ_CSV, "agate_read.csv": AGATE_READ_CSV}

    @pytest.fixture(autouse=True)
    def spark_reads_small_files(self, monkeypatch):
        # dbt runs in this process: the size below which agate reads a seed is lowered here.
        monkeypatch.setattr("dbt.adapters.lakehouse.models.seeds.SPARK_READ_MIN_BYTES", 0)

    def _expected(self, project, name):
        from dbt_common.clients.agate_helper import from_csv

        from dbt.adapters.lakehouse.impl import LakehouseAdapter

        table = from_csv(f"{project.project_root}/seeds/{name}.csv", text_columns=[])
        types = [LakehouseAdapter.convert_type(table, i) for i in range(len(table.column_names))]
        rows = [
            tuple(_spark_value(value, sql_type) for value, sql_type in zip(row, types, strict=True))
            for row in table.rows
        ]
        return dict(zip(table.column_names, types, strict=True)), rows

    def _actual(self, project, name):
        relation = f"`{project.database}`.`{project.test_schema}`.`{name}`"
        rows = project.run_sql(f"select * from {relation} order by id", fetch="all")
        types = {
            row[0]: row[1]
            for row in project.run_sql(f"describe table {relation}", fetch="all")
            if row[0] and not row[0].startswith("#")
        }
        return types, [tuple(row) for row in rows]

    @pytest.mark.parametrize("rerun", ["first run", "rerun", "full refresh"])
    def test_same_types_and_rows_as_agate(self, project, rerun):
        args = ["--debug", "seed"] + (["--full-refresh"] if rerun == "full refresh" else [])
        _, output = run_dbt_and_capture(args)
        text = output_text(output)
        assert "spark_read.csv: read through agate" not in text
        assert "agate_read.csv: read through agate, column amount holds values agate" in text
        for name in ("spark_read", "agate_read"):
            assert self._actual(project, name) == self._expected(project, name), name
        types, rows = self._actual(project, "spark_read")
        assert list(types.values()) == [
            "bigint",
            "double",
            "bigint",
            "date",
            "timestamp",
            "boolean",
            "string",
            "string",
        ]
        assert rows[1][6:] == (None, None) and rows[2][6] is None  # NULL, null, ' null '
        assert rows[0][7] == "two\nlines" and rows[3][6] == "  padded  "
        assert self._actual(project, "agate_read")[1] == [(1, 1000), (2, 5), (3, 7)]

    def test_show_samples_the_rows(self, project):
        results = run_dbt(["seed", "--show", "--select", "spark_read"])
        sample = results[0].agate_table  # what `--show` prints ten random rows of
        assert [row["label"] for row in sample.rows] == ["caf\u00e9", None, None, "  padded  "]
        assert [type(t).__name__ for t in sample.column_types][:3] == ["Number"] * 3
