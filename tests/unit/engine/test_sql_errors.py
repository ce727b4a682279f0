"""A statement's errors as Spark 3.5 and Spark 4 word them (engine/sql_errors.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.engine.diagnosis import engine_error_type, explain_engine_error
from dbt.adapters.lakehouse.engine.sql_errors import explain_sql_error, failed_check_message
from dbt.adapters.lakehouse.exceptions import (
    DataCheckError,
    LakehouseDatabaseError,
    NamespaceMissingError,
    RelationMissingError,
)

_ADVICE = (
    "If the schema is inferred from a Scala tuple/case class, or a Java bean, please try to use "
    "scala.Option[_] or other nullable types (e.g. java.lang.Integer instead of int/scala.Int)."
)
# Spark 3.5 and Spark 4.1's texts for a NULL written into a required column `id`.
SPARK_35_NULL = (
    "org.apache.spark.SparkException: Job aborted due to stage failure: ... "
    f"java.lang.NullPointerException: Null value appeared in non-nullable field:\nid\n{_ADVICE}"
    "\n\tat org.apache.spark..."
)
SPARK_41_NULL = (
    "org.apache.spark.SparkRuntimeException: [NOT_NULL_ASSERT_VIOLATION] NULL value appeared in "
    f"non-nullable field: \nid\n{_ADVICE} SQLSTATE: 42000"
)


@pytest.mark.parametrize("text", [SPARK_35_NULL, SPARK_41_NULL])
def test_a_null_in_a_required_column_is_explained_alike_on_both_lines(text: str) -> None:
    explained = explain_sql_error(text)
    assert explained is not None
    assert explained.startswith("A NULL reached the required column id: ")
    assert "a contract's not_null or primary_key constraint" in explained
    assert explain_engine_error(text) == explained
    assert engine_error_type(text) is LakehouseDatabaseError


def test_a_nested_field_is_named_by_its_path_and_a_missing_path_still_explains() -> None:
    nested = SPARK_41_NULL.replace("\nid\n", "\n- address\n- zip\n")
    assert (explain_sql_error(nested) or "").startswith(
        "A NULL reached the required column address.zip:"
    )
    bare = "org.apache.spark.SparkRuntimeException: [NOT_NULL_ASSERT_VIOLATION] SQLSTATE: 42000"
    assert (explain_sql_error(bare) or "").startswith(
        "A NULL reached the required column (unnamed):"
    )


def test_other_errors_are_not_taken_for_a_required_null() -> None:
    assert explain_sql_error("[TABLE_OR_VIEW_NOT_FOUND] The table or view `a`.`b` ...") is None
    assert explain_sql_error("[CAST_INVALID_INPUT] The value 'x' ... SQLSTATE: 22018") is None


def test_a_failed_check_reads_the_same_on_both_lines() -> None:
    spark_35 = (
        "org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] "
        "[dbt-lakehouse check] key 7 repeats\n\tat x"
    )
    spark_41 = spark_35.replace("repeats\n", "repeats SQLSTATE: P0001\n")
    for text in (spark_35, spark_41):
        assert failed_check_message(text) == "key 7 repeats"
        assert engine_error_type(text) is DataCheckError


def test_spark_4_texts_of_a_missing_table_and_schema_map_to_the_same_types() -> None:
    # As Spark 4.1 words them: the condition, the SQL state, then the position in the statement.
    table = (
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `lakehouse`.`analytics`.`nope` cannot be "
        "found. Verify the spelling and correctness of the schema and catalog.\nTo tolerate the "
        "error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS. SQLSTATE: 42P01; line 6 "
        "pos 18;"
    )
    schema = (
        "[SCHEMA_NOT_FOUND] The schema `lakehouse`.`nope` cannot be found. Verify the spelling "
        "and correctness of the schema and catalog. SQLSTATE: 42704"
    )
    assert engine_error_type(table) is RelationMissingError
    assert engine_error_type(schema) is NamespaceMissingError
    assert explain_sql_error(table) is None and failed_check_message(table) is None
