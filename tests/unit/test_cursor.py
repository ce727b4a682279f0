"""A batch's `-- lakehouse:finally` statements run after an earlier statement failed."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.lakehouse.cursor import LakehouseCursor


class _Spark:
    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        self.statements: list[str] = []
        self.sparkContext = self

    def setJobGroup(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 - Spark's name
        pass

    def sql(self, statement: str, args: Any = None) -> Any:
        self.statements.append(statement)
        if statement in self.failing:
            raise RuntimeError(f"failed: {statement}")
        return None


FINALLY_3 = "-- lakehouse:finally\nselect 3"
BATCH = "select 1;\nselect 2;\n-- lakehouse:finally\nselect 3;\nselect 4"


def _run(failing: set[str]) -> tuple[_Spark, Exception | None]:
    spark = _Spark(failing)
    cursor = LakehouseCursor(spark, "g")  # type: ignore[arg-type]
    try:
        cursor.execute(BATCH)
    except RuntimeError as exc:
        return spark, exc
    return spark, None


def test_a_batch_without_failures_runs_every_statement() -> None:
    spark, error = _run(set())
    assert error is None
    assert spark.statements == ["select 1", "select 2", FINALLY_3, "select 4"]


def test_after_a_failure_only_finally_statements_run_and_the_first_error_is_raised() -> None:
    spark, error = _run({"select 1", "-- lakehouse:finally\nselect 3"})
    assert spark.statements == ["select 1", "-- lakehouse:finally\nselect 3"]
    assert str(error) == "failed: select 1"


def test_a_failing_finally_statement_fails_the_batch() -> None:
    with pytest.raises(RuntimeError, match="select 3"):
        LakehouseCursor(_Spark({"-- lakehouse:finally\nselect 3"}), "g").execute(BATCH)  # type: ignore[arg-type]
