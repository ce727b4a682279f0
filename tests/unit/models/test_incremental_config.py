"""Engine-free checks of incremental models before any SQL: their configs, the type-widening
rules of on_schema_change, and statement-scoped confs."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.engine.statement_conf import statement_conf
from dbt.adapters.lakehouse.models.incremental import (
    TypeChange,
    iceberg_type,
    plan_type_changes,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from unit.models.incremental_macros import (
    STRATEGIES,
)

# ---- config checks ---------------------------------------------------------------------------


def _validate(strategy: str, **config: Any) -> None:
    validate_incremental_config("orders", strategy, config, builtin=STRATEGIES)


def test_valid_configs_pass() -> None:
    _validate("merge", unique_key=["id"], delete_condition="op = 'd'", latest_by="ts")
    _validate("delete+insert", unique_key="id", incremental_predicates=["id > 1"])
    _validate("insert_overwrite", partition_by=["days(ts)"])
    _validate("microbatch", event_time="ts", unique_key="id")
    _validate("my_custom", delete_condition="x")  # custom strategies get generic checks only


@pytest.mark.parametrize(
    ("strategy", "config", "expected"),
    [
        ("merge", {}, "'merge' needs a unique_key"),
        ("delete+insert", {}, "'delete+insert' needs a unique_key"),
        ("append", {"delete_condition": "op = 'd'"}, "delete_condition apply to"),
        ("replace", {"latest_by": "ts"}, "latest_by apply to incremental_strategy 'merge' only"),
        ("append", {"incremental_predicates": ["x"]}, "incremental_predicates apply to"),
        ("insert_overwrite", {}, "'insert_overwrite' replaces the partitions"),
        ("merge", {"unique_key": "id", "latest_by": 3}, "latest_by must be a column"),
        ("merge", {"unique_key": {"a": 1}}, "unique_key must be a column name"),
        ("merge", {"unique_key": "id", "on_schema_change": "sync"}, "on_schema_change 'sync'"),
        (
            "merge",
            {"unique_key": "id", "merge_update_columns": ["a"], "merge_exclude_columns": ["b"]},
            "both given",
        ),
    ],
)
def test_invalid_configs_name_model_value_and_accepted(
    strategy: str, config: dict[str, Any], expected: str
) -> None:
    with pytest.raises(CompilationError) as raised:
        _validate(strategy, **config)
    assert "model 'orders'" in str(raised.value)
    assert expected in str(raised.value)


def test_strategy_defaults_and_custom_strategies() -> None:
    def resolve(raw: str | None, key: object = None, custom: tuple[str, ...] = ()) -> str:
        return resolve_incremental_strategy(raw, key, "orders", STRATEGIES, STRATEGIES, custom)

    assert resolve(None) == "append"
    assert resolve(None, "id") == "merge"
    assert resolve("upsert_all", custom=("get_incremental_upsert_all_sql",)) == "upsert_all"
    with pytest.raises(CompilationError) as raised:
        resolve("upsert_all")
    text = str(raised.value)
    assert "'upsert_all' for model 'orders'" in text and "delete+insert, microbatch" in text
    assert "get_incremental_upsert_all_sql" in text


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(CompilationError) as raised:
        _validate("append", delete_condition="x", on_schema_change="nope", unique_key=5)
    text = str(raised.value)
    assert "delete_condition" in text and "on_schema_change" in text and "unique_key" in text


def test_configs_naming_columns_are_checked_against_the_models_columns() -> None:
    columns = ["id", "Region", "seq"]

    def check(strategy: str, **config: Any) -> None:
        validate_model_columns("orders", strategy, config, columns, builtin=STRATEGIES)

    check("merge", unique_key=["ID", "region"], latest_by=["seq", "`seq`", "coalesce(x, 1)"])
    check("delete+insert", unique_key="id")
    check("microbatch", event_time="seq", unique_key="nope")  # microbatch ignores unique_key
    check("my_custom", unique_key="nope")  # a custom strategy decides for itself
    with pytest.raises(CompilationError) as raised:
        check(
            "merge",
            unique_key=["id", "idd"],
            merge_update_columns=["vv"],
            latest_by=["`sq`", "seq + 1"],
        )
    text = str(raised.value)
    assert "model 'orders'" in text
    for problem in (
        "unique_key 'idd' is not one of its columns",
        "merge_update_columns 'vv' is not one of its columns",
        "latest_by 'sq' is not one of its columns",
        "The model's columns are: id, Region, seq",
    ):
        assert problem in text
    assert "seq + 1" not in text  # an expression is left to Spark's analyzer
    with pytest.raises(CompilationError, match="unique_key 'nope' is not one of its columns"):
        check("delete+insert", unique_key="nope")
    with pytest.raises(CompilationError, match="event_time 'ts' is not one of its columns"):
        check("microbatch", event_time="ts")


# ---- on_schema_change types ------------------------------------------------------------------


def test_iceberg_type_canonical_names() -> None:
    assert iceberg_type("SMALLINT") == "int"
    assert iceberg_type("varchar(10)") == "string"
    assert iceberg_type("struct<a: smallint, b: char(2)>") == "struct<a:int,b:string>"


def test_widening_is_planned_and_spelling_changes_dropped() -> None:
    changes = [
        TypeChange("a", "int", "bigint"),
        TypeChange("b", "float", "double"),
        TypeChange("c", "decimal(10,2)", "decimal(12,2)"),
        TypeChange("d", "int", "smallint"),
    ]
    assert [c.column for c in plan_type_changes("orders", changes)] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("bigint", "int"),
        ("double", "float"),
        ("decimal(12,2)", "decimal(10,2)"),
        ("decimal(10,2)", "decimal(12,3)"),
        ("int", "string"),
    ],
)
def test_narrowing_or_incompatible_change_fails_naming_column_and_types(old: str, new: str) -> None:
    with pytest.raises(CompilationError) as raised:
        plan_type_changes("orders", [TypeChange("amount", old, new)])
    assert f"amount: table has {old}, model gives {new}" in str(raised.value)
    assert "model 'orders'" in str(raised.value)


def test_statement_conf_lines() -> None:
    statement = (
        '/* {"app": "dbt"} */\n-- lakehouse:conf spark.sql.sources.partitionOverwriteMode='
        "dynamic\ninsert overwrite t select 1"
    )
    assert statement_conf(statement) == {"spark.sql.sources.partitionOverwriteMode": "dynamic"}
    assert statement_conf("select '-- lakehouse:conf a=b'") == {}
