"""dbt-tests-adapter `simple_copy/` suite: seeds copied into tables, views and incrementals.

Overrides, each for the same reason (the suite is written for Postgres):
- `TestEmptyModelsArentRun` lists the schema's relations with dbt's test helper
  `get_tables_in_schema`, a query on Postgres's `information_schema.tables`, which Spark's
  catalogs lack; the same test lists them with Spark's `show tables` and `show views`.
- `TestSimpleCopyUppercase` replaces the test target with a Postgres one (database
  `dbtMixedCase`); here it is this module's own target (`local`), and the upper-case model
  names the test is about are unchanged.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.simple_copy.test_copy_uppercase import BaseSimpleCopyUppercase
from dbt.tests.adapter.simple_copy.test_simple_copy import (
    EmptyModelsArentRunBase,
    SimpleCopyBase,
)
from dbt.tests.util import run_dbt

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestSimpleCopyBase(SimpleCopyBase):
    @pytest.mark.skip(
        reason="creates a Postgres materialized view beside the project with "
        "`create materialized view`; Spark SQL 3.5 has no materialized views (it fails to parse "
        "the statement), so there is none to ignore. test_simple_copy covers the copy itself."
    )
    def test_simple_copy_with_materialized_views(self, project):
        pass


class TestEmptyModelsArentRun(EmptyModelsArentRunBase):
    def test_dbt_doesnt_run_empty_models(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        results = run_dbt()
        assert len(results) == 7

        # The suite's get_tables_in_schema() in Spark SQL: every table and view in the schema
        # (on an Iceberg catalog `show tables` lists tables only, `show views` the views).
        tables = {
            row[1]
            for kind in ("tables", "views")
            for row in project.run_sql(f"show {kind} in {project.test_schema}", fetch="all")
        }
        assert "seed" in tables and "view_model" in tables

        assert "empty" not in tables
        assert "disabled" not in tables


class TestSimpleCopyUppercase(BaseSimpleCopyUppercase):
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, lakehouse_root):
        # conftest's `local` target (this module runs on `local` only).
        return {
            "type": "lakehouse",
            "threads": 4,
            "warehouse": str(lakehouse_root / "warehouse"),
            "spark": {"master": "local[2]", "driver_memory": "2g"},
        }
