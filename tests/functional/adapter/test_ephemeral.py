"""dbt-tests-adapter `ephemeral/` suite: ephemeral models as CTEs, nested and failing.

Two tests compare the SQL dbt ran with a hard-coded Postgres statement
(`create view "dbt"."schema"."x__dbt_tmp" as (...);`). Here the same tests run the same
steps and compare against the statement this adapter runs for the same models: Spark's
`create or replace view`, with backquoted names under the `lakehouse` catalog, and no
intermediate `__dbt_tmp` view (the view is replaced in place). The CTEs, which are what the
tests are about, are compared exactly as the suite writes them.
"""

from __future__ import annotations

import os
import re

import pytest
from dbt.tests.adapter.ephemeral.test_ephemeral import (
    BaseEphemeralErrorHandling,
    BaseEphemeralMulti,
    BaseEphemeralNested,
)
from dbt.tests.util import check_relations_equal, run_dbt

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


def _ran_sql(model: str) -> str:
    """The SQL dbt ran for a model, as the suite normalises it: digits and blanks removed; and
    without the digest a view's statement records for reuse (docs/reuse.md), checked there."""
    path = f"./target/run/test/models/{model}.sql"
    assert os.path.exists(path)
    with open(path) as fp:
        ran = _REUSE_DIGEST.sub("", fp.read())
    return "".join(re.sub(r"\d+", "", ran).split())


_REUSE_DIGEST = re.compile(
    r"tblproperties\s*\(\s*'lakehouse\.build\.view'\s*=\s*'[0-9a-f]+'\s*\)\s*"
)


class TestEphemeralMulti(BaseEphemeralMulti):
    def test_ephemeral_multi(self, project):
        run_dbt(["seed"])
        results = run_dbt(["run"])
        assert len(results) == 3

        check_relations_equal(project.adapter, ["seed", "dependent"])
        check_relations_equal(project.adapter, ["seed", "double_dependent"])
        check_relations_equal(project.adapter, ["seed", "super_dependent"])
        # The suite's expected CTEs, in Spark's view DDL.
        expected_sql = (
            "create or replace view `lakehouse`.`test_test_ephemeral`.`double_dependent` as "
            "with __dbt__cte__base as ("
            "select * from test_test_ephemeral.seed"
            "),  __dbt__cte__base_copy as ("
            "select * from __dbt__cte__base"
            ")-- base_copy just pulls from base. Make sure the listed"
            "-- graph of CTEs all share the same dbt_cte__base cte"
            "select * from __dbt__cte__base where gender = 'Male'"
            "union all"
            "select * from __dbt__cte__base_copy where gender = 'Female'"
        )
        assert _ran_sql("double_dependent") == "".join(expected_sql.split())


class TestEphemeralNested(BaseEphemeralNested):
    def test_ephemeral_nested(self, project):
        results = run_dbt(["run"])
        assert len(results) == 2
        # The suite's expected CTEs, in Spark's view DDL.
        expected_sql = (
            "create or replace view `lakehouse`.`test_test_ephemeral`.`root_view` as "
            "with __dbt__cte__ephemeral_level_two as ("
            "select * from `lakehouse`.`test_test_ephemeral`.`source_table`"
            "),  __dbt__cte__ephemeral as ("
            "select * from __dbt__cte__ephemeral_level_two"
            ")select * from __dbt__cte__ephemeral"
        )
        assert _ran_sql("root_view") == "".join(expected_sql.split())


class TestEphemeralErrorHandling(BaseEphemeralErrorHandling):
    pass
