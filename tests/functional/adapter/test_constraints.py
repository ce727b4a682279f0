"""dbt-tests-adapter `constraints/` ColumnsEqual suite: model contracts check names and types.

Fixture overrides are data only: the suite's contract YAML says `text` and its type table is
Postgres (timestamptz, json, `::` casts); here they are the Spark SQL types a user writes in a
contract and the type names Spark reports back (`int`, `string`, `array<int>`, ...).
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRollback,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement,
    BaseIncrementalContractSqlHeader,
    BaseIncrementalForeignKeyConstraint,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
    BaseTableContractSqlHeader,
    BaseViewConstraintsColumnsEqual,
)

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


def _spark_yml(yml: str) -> str:
    return yml.replace("data_type: text", "data_type: string")


_SCHEMA_YML = _spark_yml(fixtures.model_schema_yml)


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


# ---- constraints: what the DDL holds, and what a NULL does ------------------------------------
#
# Iceberg enforces one constraint: a required field. `not_null` and `primary_key` columns are
# created NOT NULL (Spark drops NOT NULL from a CTAS, so a first build creates the table from
# the contract's columns, its rows staged first: the NULL check runs before the target is
# touched; a rebuild of a table of the same shape is one INSERT OVERWRITE);
# the key is the table's identifier fields; check, unique and foreign_key are accepted, warned
# about as not enforced, and left out of the DDL (models/contracts.py).


# The DDL as the suite compares it: every token naming my_model, the staging table
# `my_model__dbt_contract` and a `;` stuck to it included, reads `<model_identifier>`.
_STAGED_ROWS = """
create or replace table <model_identifier> (
    {columns}
) using iceberg;
insert into <model_identifier>
select {names} from ({select}) as model_subq;
create or replace table <model_identifier> (
    {columns}
) using iceberg ;
"""
_FILL_AND_DROP = """
insert into <model_identifier> select * from <model_identifier>
-- lakehouse:finally
drop table if exists <model_identifier> purge
"""

_CONTRACT_DDL = (
    _STAGED_ROWS.format(
        columns="id integer not null, color string, date_day string",
        names="id, color, date_day",
        select="""-- depends_on: <foreign_key_model_identifier>
  select 'blue' as color, 1 as id, '2019-01-01' as date_day""",
    )
    + "alter table <model_identifier> set identifier fields id;"
    + _FILL_AND_DROP
)


class _ContractDdl:
    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return _CONTRACT_DDL


class TestTableConstraintsRuntimeDdlEnforcement(_ContractDdl, BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": _spark_yml(fixtures.model_fk_constraint_schema_yml),
        }


class TestIncrementalConstraintsRuntimeDdlEnforcement(
    _ContractDdl, BaseIncrementalConstraintsRuntimeDdlEnforcement
):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": _spark_yml(fixtures.model_fk_constraint_schema_yml),
        }


class TestModelConstraintsRuntimeEnforcement(_ContractDdl, BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": _spark_yml(fixtures.constrained_model_schema_yml),
        }


class TestConstraintQuotedColumn(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": _spark_yml(fixtures.model_quoted_column_schema_yml),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return (
            _STAGED_ROWS.format(
                columns="id integer not null, `from` string not null, date_day string",
                names="id, `from`, date_day",
                select="select 'blue' as `from`, 1 as id, '2019-01-01' as date_day",
            )
            + _FILL_AND_DROP
        )


# Spark's own check, as the insert into a NOT NULL column reports it, explained by the adapter
# in one line on both engine lines (Spark 3.5 and 4 word the check differently).
_NULL_ERRORS = ["A NULL reached the required column id: "]


class TestTableConstraintsRollback(BaseConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_model_sql,
            "constraints_schema.yml": _SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_error_messages(self) -> list[str]:
        return _NULL_ERRORS


class TestIncrementalConstraintsRollback(BaseIncrementalConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model.sql": fixtures.my_incremental_model_sql,
            "constraints_schema.yml": _SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_error_messages(self) -> list[str]:
        return _NULL_ERRORS


# The suite's header is Postgres (`set session time zone`, `current_setting`). Here the header
# defines a temporary view the model reads: a time zone set here would outlive the model in
# the Spark session every test of the process shares.
_SQL_HEADER_MODEL = """
{{% call set_sql_header(config) %}}
create or replace temporary view contract_header_zone as select 'Asia/Kolkata' as column_name;
{{%- endcall %}}
{config}
select column_name from contract_header_zone
"""


class TestTableContractSqlHeader(BaseTableContractSqlHeader):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_contract_sql_header.sql": _SQL_HEADER_MODEL.format(
                config="{{ config(materialized='table') }}"
            ),
            "constraints_schema.yml": _spark_yml(fixtures.model_contract_header_schema_yml),
        }


class TestIncrementalContractSqlHeader(BaseIncrementalContractSqlHeader):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "my_model_contract_sql_header.sql": _SQL_HEADER_MODEL.format(
                config="{{ config(materialized='incremental', on_schema_change='fail') }}"
            ),
            "constraints_schema.yml": _spark_yml(fixtures.model_contract_header_schema_yml),
        }


class TestIncrementalForeignKeyConstraint(BaseIncrementalForeignKeyConstraint):
    pass
