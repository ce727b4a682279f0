"""dbt-tests-adapter `unit_testing/` suite.

Fixture overrides are data only: the suite's literals are Postgres (`::json`, TIMESTAMPTZ,
double-quoted identifiers); here the same values are spelled in Spark SQL.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.unit_testing import test_quoted_reserved_word_column_names as reserved
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_quoted_reserved_word_column_names import (
    BaseUnitTestQuotedReservedWordColumnNames,
)
from dbt.tests.adapter.unit_testing.test_types import (
    BaseUnitTestingTypes,
    BaseUnitTestingVarcharFixtureNoTruncation,
)

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self) -> list[list[str]]:
        # sql_value, yaml_value
        return [
            ["1", "1"],
            ["'1'", "1"],
            ["true", "true"],
            ["DATE '2020-01-02'", "2020-01-02"],
            ["TIMESTAMP '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["TIMESTAMP_NTZ '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["cast('1' as decimal(10,2))", "1"],
            ["cast(7.77 as double)", "7.77"],
        ]


class TestUnitTestingVarcharFixtureNoTruncation(BaseUnitTestingVarcharFixtureNoTruncation):
    pass


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestUnitTestQuotedReservedWordColumnNames(BaseUnitTestQuotedReservedWordColumnNames):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        # Spark quotes identifiers with backticks; "GROUP" would be a string literal.
        return {
            "my_model.sql": reserved.my_model_sql,
            "my_upstream_model.sql": "select 1 as `GROUP`",
            "unit_tests.yml": reserved.test_my_model_csv_fixtures_yml,
        }
