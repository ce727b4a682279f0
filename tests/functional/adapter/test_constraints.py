"""dbt-tests-adapter `constraints/` ColumnsEqual suite: model contracts check names and types.

Fixture overrides are data only: the suite's contract YAML says `text` and its type table is
Postgres (timestamptz, json, `::` casts); here they are the Spark SQL types a user writes in a
contract and the type names Spark reports back (`int`, `string`, `array<int>`, ...).
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseIncrementalConstraintsColumnsEqual,
    BaseTableConstraintsColumnsEqual,
    BaseViewConstraintsColumnsEqual,
)

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")

_SCHEMA_YML = fixtures.model_schema_yml.replace("data_type: text", "data_type: string")


class _SparkTypes:
    @pytest.fixture
    def string_type(self) -> str:
        return "string"

    @pytest.fixture
    def int_type(self) -> str:
        return "int"

    @pytest.fixture
    def data_types(self) -> list[list[str]]:
        # sql_column_value, schema_data_type, error_data_type (as Spark names it)
        return [
            ["1", "int", "int"],
            ["'1'", "string", "string"],
            ["true", "boolean", "boolean"],
            ["cast('2013-11-03 00:00:00' as timestamp)", "timestamp", "timestamp"],
            ["cast('2013-11-03 00:00:00' as timestamp_ntz)", "timestamp_ntz", "timestamp_ntz"],
            ["array('a','b','c')", "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["cast('1' as decimal(10,2))", "decimal(10,2)", "decimal(10,2)"],
            ["map('bar', 'baz')", "map<string,string>", "map<string,string>"],
        ]


class TestTableConstraintsColumnsEqual(_SparkTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
            "constraints_schema.yml": _SCHEMA_YML,
        }


class TestViewConstraintsColumnsEqual(_SparkTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
            "constraints_schema.yml": _SCHEMA_YML,
        }


class TestIncrementalConstraintsColumnsEqual(_SparkTypes, BaseIncrementalConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": _SCHEMA_YML,
        }
