"""Engine-free checks of the incremental strategies: the SQL each renders, the config checks
that run before any SQL, the type-widening rules of on_schema_change, and statement-scoped
confs.

Macros render the way dbt renders them: each macro is its own template, and every macro is
reachable from the context through a wrapper that turns `return(...)` into a value.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dbt.include.global_project as global_project
import jinja2
import pytest
import pytz
from dbt_common.clients.jinja import extract_toplevel_blocks
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.engine.sql_errors import check_failure_sql, failed_check_message
from dbt.adapters.lakehouse.engine.statement_conf import statement_conf, statement_plan_conf
from dbt.adapters.lakehouse.models.incremental import (
    TypeChange,
    iceberg_type,
    plan_type_changes,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from dbt.adapters.lakehouse.relation import LakehouseRelation
from dbt.include import lakehouse

OURS = Path(lakehouse.PACKAGE_PATH) / "macros" / "materializations" / "incremental"
DBT_INCREMENTAL = (
    Path(global_project.PACKAGE_PATH) / "macros" / "materializations" / "models" / "incremental"
)
STRATEGIES = ["append", "merge", "replace", "insert_overwrite", "delete+insert", "microbatch"]


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _raise_compiler_error(message: str) -> None:
    raise CompilationError(message)


def _sql_string(text: str) -> str:
    template = (Path(lakehouse.PACKAGE_PATH) / "macros" / "utils" / "sql_string.sql").read_text()
    env = jinja2.Environment()
    return str(env.from_string(template).module.lakehouse_sql_string(text))  # type: ignore[attr-defined]


class _Adapter:
    """What the strategy macros ask of the adapter while rendering."""

    def __init__(self, context: dict[str, Any], merge_defaults: dict[str, Any]) -> None:
        self._context = context
        self._merge_defaults = merge_defaults

    def changes_merge_default(self, node_id: str, name: str) -> Any:
        return self._merge_defaults.get(name)

    def dispatch(self, name: str, macro_namespace: str | None = None) -> Any:
        for prefix in ("lakehouse__", "default__"):
            if prefix + name in self._context:
                return self._context[prefix + name]
        raise KeyError(name)

    @staticmethod
    def quote(identifier: str) -> str:
        return f"`{identifier}`"

    @staticmethod
    def check_failure_sql(message_sql: str) -> str:
        return check_failure_sql(message_sql)


class _MacroGenerator:
    """A macro as dbt hands it out: callable, and naming itself in `.macro.unique_id`."""

    def __init__(self, unique_id: str, call: Any) -> None:
        self.macro = SimpleNamespace(unique_id=unique_id)
        self._call = call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)


class Renderer:
    def __init__(
        self,
        config: dict[str, Any],
        model: dict[str, Any] | None = None,
        merge_defaults: dict[str, Any] | None = None,
    ) -> None:
        self.context: dict[str, Any] = {
            "return": _return,
            "lakehouse_sql_string": _sql_string,
            "exceptions": SimpleNamespace(raise_compiler_error=_raise_compiler_error),
            "config": SimpleNamespace(get=lambda key, default=None: config.get(key, default)),
            "model": {"name": "orders", "unique_id": "model.pkg.orders", **(model or {})},
            "modules": SimpleNamespace(pytz=pytz, datetime=dt),
        }
        self.context["adapter"] = _Adapter(self.context, merge_defaults or {})
        env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
        paths = sorted(OURS.glob("*.sql")) + [
            DBT_INCREMENTAL / "merge.sql",
            DBT_INCREMENTAL / "column_helpers.sql",
        ]
        blocks: dict[str, tuple[str, str]] = {}  # name -> (package, source)
        for path in paths:
            package = "dbt_lakehouse" if path.is_relative_to(OURS) else "dbt"
            for block in extract_toplevel_blocks(
                path.read_text(), allowed_blocks={"macro"}, collect_raw_data=False
            ):
                blocks.setdefault(block.block_name, (package, block.full_block))  # ours first
        # Jinja copies the globals when a template is built: every name must be there first.
        self._macros: dict[str, Any] = {}
        for name, (package, _) in blocks.items():
            self.context[name] = _MacroGenerator(f"macro.{package}.{name}", self._callable(name))
        for name, (_, source) in blocks.items():
            template = env.from_string(source, globals=self.context)
            self._macros[name] = getattr(template.module, name)

    def _callable(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return self._macros[name](*args, **kwargs)
            except _Return as returned:
                return returned.value

        return call

    def strategy(self, name: str, **arg_dict: Any) -> str:
        macro = self.context[f"lakehouse__get_incremental_{name.replace('+', '_')}_sql"]
        return re.sub(r"\s+", " ", str(macro(_args(**arg_dict)))).strip()


def _column(name: str, dtype: str) -> LakehouseColumn:
    return LakehouseColumn(column=name, dtype=dtype)


COLUMNS = [
    _column("id", "bigint"),
    _column("region", "string"),
    _column("amount", "decimal(10,2)"),
    _column("ts", "timestamp"),
    _column("tags", "map<string,string>"),
]
TARGET = LakehouseRelation.create(database="lakehouse", schema="sales", identifier="orders")
TEMP = LakehouseRelation.create(identifier="sales__orders__dbt_tmp").include(
    database=False, schema=False
)


def _args(**overrides: Any) -> dict[str, Any]:
    args = {
        "target_relation": TARGET,
        "temp_relation": TEMP,
        "unique_key": "id",
        "dest_columns": COLUMNS,
        "incremental_predicates": None,
    }
    args.update(overrides)
    return args


COLS = "`id`, `region`, `amount`, `ts`, `tags`"


# ---- SQL shapes ------------------------------------------------------------------------------


def test_append_inserts_named_columns() -> None:
    sql = Renderer({}).strategy("append")
    assert sql == (
        f"insert into `lakehouse`.`sales`.`orders` ({COLS}) select {COLS} from "
        "`sales__orders__dbt_tmp`"
    )


def test_replace_is_a_static_overwrite_scoped_to_the_statement() -> None:
    raw = Renderer({}).context["lakehouse__get_incremental_replace_sql"](_args())
    assert statement_conf(str(raw)) == {"spark.sql.sources.partitionOverwriteMode": "static"}
    sql = re.sub(r"\s+", " ", str(raw))
    assert f"insert overwrite `lakehouse`.`sales`.`orders` ({COLS}) select {COLS}" in sql
    assert "partition (" not in sql.lower()


def test_insert_overwrite_is_dynamic_and_never_names_partitions() -> None:
    raw = Renderer({"partition_by": ["days(ts)"]}).context[
        "lakehouse__get_incremental_insert_overwrite_sql"
    ](_args())
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
    raw = Renderer({}).context["lakehouse__get_incremental_merge_sql"](_args())
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
    renderer.context["lakehouse__get_merge_sql"] = _MacroGenerator(
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
    assert _sql_string("it's a \\ path") == "'it\\'s a \\\\ path'"


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
