"""The SQL each incremental strategy renders, engine-free: the statement's shape, its keys and
predicates, and the checks a first build runs in the same statement."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
import pytz
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.engine.sql_errors import check_failure_sql, failed_check_message
from dbt.adapters.lakehouse.engine.statement_conf import statement_conf, statement_plan_conf
from unit.models.incremental_macros import (
    COLS,
    COLUMNS,
    TARGET,
    TEMP,
    MacroGenerator,
    Renderer,
    sql_string,
    strategy_args,
)

# ---- SQL shapes ------------------------------------------------------------------------------


def test_append_inserts_named_columns() -> None:
    sql = Renderer({}).strategy("append")
    assert sql == (
        f"insert into `lakehouse`.`sales`.`orders` ({COLS}) select {COLS} from "
        "`sales__orders__dbt_tmp`"
    )


def test_replace_is_a_static_overwrite_scoped_to_the_statement() -> None:
    raw = Renderer({}).context["lakehouse__get_incremental_replace_sql"](strategy_args())
    assert statement_conf(str(raw)) == {"spark.sql.sources.partitionOverwriteMode": "static"}
    sql = re.sub(r"\s+", " ", str(raw))
    assert f"insert overwrite `lakehouse`.`sales`.`orders` ({COLS}) select {COLS}" in sql
    assert "partition (" not in sql.lower()


def test_insert_overwrite_is_dynamic_and_never_names_partitions() -> None:
    raw = Renderer({"partition_by": ["days(ts)"]}).context[
        "lakehouse__get_incremental_insert_overwrite_sql"
    ](strategy_args())
    assert statement_conf(str(raw)) == {"spark.sql.sources.partitionOverwriteMode": "dynamic"}
    sql = re.sub(r"\s+", " ", str(raw)).lower()
    assert "insert overwrite `lakehouse`.`sales`.`orders`" in sql
    assert "partition (" not in sql and "partition(" not in sql


def test_merge_single_key_is_null_safe_and_updates_every_column() -> None:
    sql = Renderer({}).strategy("merge")
    assert "merge into `lakehouse`.`sales`.`orders` as DBT_INTERNAL_DEST" in sql
    assert "using `sales__orders__dbt_tmp` as DBT_INTERNAL_SOURCE" in sql
    assert "on (DBT_INTERNAL_SOURCE.id <=> DBT_INTERNAL_DEST.id)" in sql
    assert "when matched then update set `id` = DBT_INTERNAL_SOURCE.`id`," in sql
    assert "`tags` = DBT_INTERNAL_SOURCE.`tags`" in sql
    assert f"when not matched then insert ({COLS})" in sql
    assert "delete" not in sql


def test_merge_lets_spark_hash_the_new_rows_instead_of_sorting_the_target() -> None:
    raw = Renderer({}).context["lakehouse__get_incremental_merge_sql"](strategy_args())
    assert statement_plan_conf(str(raw)) == {
        "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64MB"
    }
    assert statement_conf(str(raw)) == {}


def test_merge_joins_on_equality_when_the_new_keys_hold_no_null() -> None:
    # The same rows match as with <=> (a non-NULL key never matches a NULL one), and Spark
    # joins on the key itself instead of on coalesce(key) and isnull(key).
    sql = Renderer({}).strategy("merge", unique_key=["id", "region"], null_safe_keys=False)
    assert (
        "on (DBT_INTERNAL_SOURCE.id = DBT_INTERNAL_DEST.id) and "
        "(DBT_INTERNAL_SOURCE.region = DBT_INTERNAL_DEST.region)"
    ) in sql
    assert "<=>" not in sql


def test_a_projects_get_merge_sql_is_called_with_dbts_arguments_only() -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def own_merge(*args: Any, **kwargs: Any) -> str:
        calls.append((args, kwargs))
        return "merge the project's way"

    renderer = Renderer({})
    renderer.context["lakehouse__get_merge_sql"] = MacroGenerator(
        "macro.my_project.lakehouse__get_merge_sql", own_merge
    )
    sql = renderer.strategy("merge", unique_key="id", null_safe_keys=False)
    assert sql == "merge the project's way"
    assert calls == [((TARGET, TEMP, "id", COLUMNS, None), {})]


def test_merge_composite_key_and_predicates() -> None:
    sql = Renderer({}).strategy(
        "merge",
        unique_key=["id", "region"],
        incremental_predicates=["DBT_INTERNAL_DEST.ts > date'2024-01-01'"],
    )
    assert (
        "on (DBT_INTERNAL_DEST.ts > date'2024-01-01') and (DBT_INTERNAL_SOURCE.id <=> "
        "DBT_INTERNAL_DEST.id) and (DBT_INTERNAL_SOURCE.region <=> DBT_INTERNAL_DEST.region)"
    ) in sql


def test_merge_update_columns() -> None:
    sql = Renderer({"merge_update_columns": ["amount"]}).strategy("merge")
    assert "when matched then update set amount = DBT_INTERNAL_SOURCE.amount when not" in sql


def test_merge_exclude_columns() -> None:
    sql = Renderer({"merge_exclude_columns": ["ts", "TAGS"]}).strategy("merge")
    update = sql.split("when matched then update set")[1].split("when not matched")[0]
    assert update.strip() == (
        "`id` = DBT_INTERNAL_SOURCE.`id`, `region` = DBT_INTERNAL_SOURCE.`region`, "
        "`amount` = DBT_INTERNAL_SOURCE.`amount`"
    )
    assert f"insert ({COLS})" in sql


def test_merge_delete_condition_is_evaluated_on_the_source_row() -> None:
    sql = Renderer({"delete_condition": "op = 'd'"}).strategy("merge")
    assert f"using ( select {COLS}, coalesce((op = 'd'), false) as __dbt_lakehouse_delete" in sql
    assert "from `sales__orders__dbt_tmp` ) as DBT_INTERNAL_SOURCE" in sql
    assert "when matched and DBT_INTERNAL_SOURCE.__dbt_lakehouse_delete then delete" in sql
    # the delete clause must come before the update clause: MERGE takes the first that matches
    assert sql.index("then delete") < sql.index("then update")
    assert "when not matched and not DBT_INTERNAL_SOURCE.__dbt_lakehouse_delete then insert" in sql


def test_merge_latest_by_keeps_one_row_per_key_deterministically() -> None:
    sql = Renderer({"latest_by": ["ts", "amount"]}).strategy("merge", unique_key=["id"])
    assert (
        "row_number() over ( partition by id order by (ts) desc nulls last, (amount) desc nulls "
        "last, `region` desc nulls last, `amount` desc nulls last, `ts` desc nulls last ) as "
        "__dbt_lakehouse_rank"
    ) in sql
    assert "where __dbt_lakehouse_rank = 1" in sql
    assert "`tags` desc" not in sql  # maps cannot be ordered


def test_merge_applies_upstream_changes_by_default_and_a_model_config_wins() -> None:
    # A model whose rows carry lakehouse.changes' columns: the latest change per key (an
    # update's INSERT before its DELETE), and a DELETE deletes.
    from dbt.adapters.lakehouse.changes.adapter import MERGE_DEFAULTS

    sql = Renderer({}, merge_defaults=MERGE_DEFAULTS).strategy("merge", unique_key=["id"])
    assert (
        "partition by id order by (_change_ordinal) desc nulls last, "
        "(_change_type = 'INSERT') desc nulls last,"
    ) in sql
    assert "coalesce((_change_type = 'DELETE'), false) as __dbt_lakehouse_delete" in sql
    assert "when matched and DBT_INTERNAL_SOURCE.__dbt_lakehouse_delete then delete" in sql
    own = Renderer({"latest_by": "ts"}, merge_defaults=MERGE_DEFAULTS).strategy(
        "merge", unique_key=["id"]
    )
    assert "order by (ts) desc nulls last" in own and "_change_ordinal" not in own


def test_delete_insert_is_one_null_safe_merge() -> None:
    sql = Renderer({}).strategy(
        "delete+insert", unique_key=["ID", "region"], incremental_predicates=["id != 2"]
    )
    assert sql.count("merge into") == 1 and ";" not in sql
    assert "select distinct `id` as `__dbt_src_id`, `region` as `__dbt_src_region`, null as" in sql
    assert (
        "on DBT_INTERNAL_SOURCE.__dbt_src_is_key and DBT_INTERNAL_DEST.`id` <=> "
        "DBT_INTERNAL_SOURCE.`__dbt_src_id` and DBT_INTERNAL_DEST.`region` <=> "
        "DBT_INTERNAL_SOURCE.`__dbt_src_region` and (id != 2) when matched then delete"
    ) in sql
    assert "when not matched and not DBT_INTERNAL_SOURCE.__dbt_src_is_key then insert" in sql


def test_microbatch_replaces_exactly_its_window_in_one_merge() -> None:
    batch = {
        "event_time_start": dt.datetime(2024, 1, 2, tzinfo=pytz.utc),
        "event_time_end": dt.datetime(2024, 1, 3, tzinfo=pytz.utc),
    }
    sql = Renderer({"event_time": "ts"}, model={"batch": batch}).strategy("microbatch")
    low, high = "timestamp'2024-01-02 00:00:00+00:00'", "timestamp'2024-01-03 00:00:00+00:00'"
    assert sql.count("merge into") == 1
    assert (
        f"on DBT_INTERNAL_DEST.`ts` >= {low} and DBT_INTERNAL_DEST.`ts` < {high} and "
        f"DBT_INTERNAL_SOURCE.__dbt_lakehouse_window = (DBT_INTERNAL_DEST.`ts` >= {low}) "
        "when matched then delete"
    ) in sql
    assert "select null, null, null, null, null, true" in sql
    assert (
        f"case when DBT_INTERNAL_SOURCE.`ts` >= {low} and DBT_INTERNAL_SOURCE.`ts` < {high} "
        "then DBT_INTERNAL_SOURCE.`ts` else raise_error("
    ) in sql


def test_microbatch_without_a_batch_window_fails() -> None:
    with pytest.raises(CompilationError, match="without a batch window"):
        Renderer({"event_time": "ts"}).strategy("microbatch")


def test_sql_string_escapes_backslashes_then_quotes() -> None:
    assert sql_string("it's a \\ path") == "'it\\'s a \\\\ path'"


def _first_build(renderer: Renderer, strategy: str, **config: Any) -> str:
    new_rows = "(\nselect * from src\n) as DBT_INTERNAL_NEW_ROWS"
    if strategy == "merge":
        macro = renderer.context["lakehouse_merge_first_build_sql"]
        sql = macro(new_rows, config.get("unique_key", "id"), COLUMNS)
    else:
        sql = renderer.context["lakehouse_microbatch_first_build_sql"](new_rows, COLUMNS)
    return re.sub(r"\s+", " ", str(sql)).strip()


def test_first_build_of_a_merge_checks_keys_in_the_same_statement() -> None:
    sql = _first_build(Renderer({}), "merge", unique_key=["id", "region"])
    assert sql.startswith(f"select {COLS} from ( select *, count(*) over (partition by id, region)")
    assert "from ( select * from src ) as DBT_INTERNAL_NEW_ROWS" in sql
    # a filter, so Spark cannot prune the check away with an unused column
    assert "where case when __dbt_lakehouse_key_rows > 1 then raise_error(concat(" in sql
    assert "concat_ws(', ', coalesce(cast(id as string), 'NULL'), coalesce(cast(region" in sql
    assert "Model \\'orders\\' (incremental_strategy \\'merge\\')" in sql


def test_first_build_of_a_cdc_merge_keeps_the_latest_row_and_drops_deletes() -> None:
    renderer = Renderer({"latest_by": "ts", "delete_condition": "op = 'd'"})
    sql = _first_build(renderer, "merge")
    assert sql.startswith(f"select {COLS} from ( select {COLS}, coalesce((op = 'd'), false)")
    assert "row_number() over ( partition by id order by (ts) desc nulls last," in sql
    assert "where __dbt_lakehouse_rank = 1" in sql
    assert sql.endswith("as DBT_INTERNAL_SOURCE where not __dbt_lakehouse_delete")
    assert "raise_error" not in sql  # latest_by: repeated keys are resolved, never refused


def test_first_build_of_a_microbatch_checks_the_window() -> None:
    batch = {
        "event_time_start": dt.datetime(2024, 1, 2, tzinfo=pytz.utc),
        "event_time_end": dt.datetime(2024, 1, 3, tzinfo=pytz.utc),
    }
    sql = _first_build(Renderer({"event_time": "TS"}, model={"batch": batch}), "microbatch")
    assert sql.startswith("select `id`, `region`, `amount`, case when `ts` >= timestamp'2024-01-02")
    assert "else raise_error(concat(" in sql and "end as `ts`, `tags` from (" in sql


def test_a_failed_check_is_found_in_the_engine_text_and_not_in_quoted_sql() -> None:
    expression = check_failure_sql("'key 7 repeats'")
    assert (
        failed_check_message(f"org.apache.spark.sql.ParseException: ... {expression} ...") is None
    )
    engine_text = (
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 failed: "
        "java.lang.RuntimeException: [dbt-lakehouse check] key 7 repeats\n\tat org.apache..."
    )
    assert failed_check_message(engine_text) == "key 7 repeats"


def test_a_failed_check_on_spark_4_leaves_out_the_sql_state() -> None:
    # Spark 4 ends the error's line with its SQL state; the check's message does not hold it.
    engine_text = (
        "org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] [dbt-lakehouse check] "
        "key 7 repeats SQLSTATE: P0001\n\tat org.apache..."
    )
    assert failed_check_message(engine_text) == "key 7 repeats"
    assert failed_check_message("[dbt-lakehouse check] a SQLSTATE: in the message") == (
        "a SQLSTATE: in the message"
    )
