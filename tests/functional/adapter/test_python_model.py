"""dbt's own Python model suite (dbt-tests-adapter `python_model/`), run in the adapter's own
SparkSession.

Left out of `BasePySparkTests`: the Koalas model (`databricks.koalas`, the pre-Spark-3.2 name
of pandas-on-Spark, is not installed) and the pandas-on-Spark one: pyspark 3.5's
`pyspark.pandas` fails to import under NumPy 2 (it uses `np.NaN`), and the pyarrow this
project installs needs NumPy 2. A pandas or Spark DataFrame result is covered.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
    BasePythonSampleTests,
)
from dbt.tests.adapter.python_model.test_spark import (
    PANDAS_MODEL,
    PYSPARK_MODEL,
    BasePySparkTests,
)
from dbt.tests.util import run_dbt

# dbt's Python model semantics; Python models on S3 and the REST catalog: test_python_models.py.
pytestmark = pytest.mark.only_profile("local")


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass


class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPythonSample(BasePythonSampleTests):
    pass


class TestPySparkDataFrames(BasePySparkTests):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "pandas_df.py": PANDAS_MODEL,
            "pyspark_df.py": PYSPARK_MODEL,
        }

    def test_different_dataframes(self, project):
        results = run_dbt(["run"])
        assert len(results) == 2
        for name in ("pandas_df", "pyspark_df"):
            found = project.run_sql(
                f"select City, Latitude from {project.database}.{project.test_schema}.{name} "
                "order by City",
                fetch="all",
            )
            assert [tuple(r) for r in found][:2] == [("Bogota", 4.6), ("Brasilia", -15.78)], name
