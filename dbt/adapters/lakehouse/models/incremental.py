"""Incremental models, decided before any SQL runs: which strategy, whether its configs fit it,
and which column type changes `on_schema_change: sync_all_columns` may apply.

Every check reports all problems of a model at once, naming the model, what was given, and
what is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError

ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")
# Strategies that need a key, and the ones the merge-only configs belong to.
KEYED_STRATEGIES = ("merge", "delete+insert")
PREDICATE_STRATEGIES = ("merge", "delete+insert")


def strategy_macro_name(strategy: str) -> str:
    return f"get_incremental_{strategy.replace('+', '_')}_sql"


def resolve_incremental_strategy(
    raw_strategy: str | None,
    unique_key: Any,
    model_name: str,
    valid: Iterable[str],
    builtin: Iterable[str],
    custom_macros: Iterable[str],
) -> str:
    valid = list(valid)
    strategy = raw_strategy or ("merge" if unique_key else "append")
    macro_name = strategy_macro_name(strategy)
    is_custom = strategy not in builtin and macro_name in set(custom_macros)
    if strategy not in valid and not is_custom:
        # dbt's own wording first (its adapter suite, and users, search for it), then ours.
        raise CompilationError(
            f"Invalid incremental_strategy '{strategy}' for model '{model_name}': dbt could not "
            f'find an incremental strategy macro with the name "{macro_name}". Accepted: '
            f"{', '.join(valid)}; or define a macro named {macro_name} for a custom strategy."
        )
    return strategy


def _is_str_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value)


def _str_or_list(value: Any) -> bool:
    return (isinstance(value, str) and bool(value.strip())) or (_is_str_list(value) and value)


def validate_incremental_config(
    model_name: str,
    strategy: str,
    config: Mapping[str, Any],
    builtin: Iterable[str],
) -> None:
    """Raise one CompilationError listing every incremental config that does not fit.

    `config` holds the model's values for: unique_key, incremental_predicates,
    merge_update_columns, merge_exclude_columns, delete_condition, latest_by, partition_by,
    on_schema_change, event_time. A custom strategy (not built in) gets only the generic checks.
    """
    problems: list[str] = []
    builtin = set(builtin)

    def get(key: str) -> Any:
        value = config.get(key)
        return None if value in ("", [], ()) else value

    unique_key = get("unique_key")
    if unique_key is not None and not _str_or_list(unique_key):
        problems.append(
            f"unique_key must be a column name or a list of column names; got {unique_key!r}"
        )
    on_schema_change = config.get("on_schema_change")
    if on_schema_change is not None and on_schema_change not in ON_SCHEMA_CHANGE:
        problems.append(
            f"on_schema_change {on_schema_change!r} is not accepted; use one of "
            f"{', '.join(ON_SCHEMA_CHANGE)}"
        )
    predicates = get("incremental_predicates")
    if predicates is not None and not _is_str_list(predicates):
        problems.append(
            f"incremental_predicates must be a list of SQL conditions (strings); got {predicates!r}"
        )
    for key in ("merge_update_columns", "merge_exclude_columns"):
        value = get(key)
        if value is not None and not _is_str_list(value):
            problems.append(f"{key} must be a list of column names; got {value!r}")
    if get("merge_update_columns") is not None and get("merge_exclude_columns") is not None:
        problems.append(
            "merge_update_columns and merge_exclude_columns were both given; set at most one"
        )
    delete_condition = get("delete_condition")
    if delete_condition is not None and not (
        isinstance(delete_condition, str) and delete_condition.strip()
    ):
        problems.append(
            "delete_condition must be a SQL predicate on the source row (a string such as "
            f"\"op = 'd'\"); got {delete_condition!r}"
        )
    latest_by = get("latest_by")
    if latest_by is not None and not _str_or_list(latest_by):
        problems.append(
            f"latest_by must be a column or SQL expression, or a list of them; got {latest_by!r}"
        )

    if strategy in builtin:
        if strategy in KEYED_STRATEGIES and unique_key is None:
            problems.append(
                f"incremental_strategy '{strategy}' needs a unique_key (a column or a list of "
                "columns); set one, or use 'append'"
            )
        merge_only = [
            key
            for key in (
                "merge_update_columns",
                "merge_exclude_columns",
                "delete_condition",
                "latest_by",
            )
            if get(key) is not None
        ]
        if strategy != "merge" and merge_only:
            problems.append(
                f"{', '.join(merge_only)} apply to incremental_strategy 'merge' only; the model "
                f"uses '{strategy}'"
            )
        if strategy not in PREDICATE_STRATEGIES and predicates is not None:
            problems.append(
                f"incremental_predicates apply to {' and '.join(PREDICATE_STRATEGIES)} only; the "
                f"model uses '{strategy}'"
            )
        if strategy == "insert_overwrite" and not get("partition_by"):
            problems.append(
                "incremental_strategy 'insert_overwrite' replaces the partitions present in the "
                "new rows, so it needs partition_by; an unpartitioned table would be replaced "
                "whole. Set partition_by, or use 'replace' to replace the whole table on purpose"
            )
        if strategy == "microbatch" and not get("event_time"):
            problems.append("incremental_strategy 'microbatch' needs event_time (a column)")

    if problems:
        raise CompilationError(
            f"Invalid incremental config for model '{model_name}':\n  - " + "\n  - ".join(problems)
        )


# ---- configs that name columns -----------------------------------------------------------------

# A latest_by entry that is a bare (or backticked) name must be a column; any other entry is an
# expression, which Spark's analyzer checks when the statement is planned, before it writes.
_PLAIN_NAME = re.compile(r"^\s*(?:`(?P<quoted>(?:[^`]|``)+)`|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))\s*$")


def _as_list(value: Any) -> list[Any]:
    if value is None or value in ("", [], ()):
        return []
    return [value] if isinstance(value, str) else list(value)


def _plain_name(expression: str) -> str | None:
    match = _PLAIN_NAME.match(expression)
    if match is None:
        return None
    return match.group("bare") or match.group("quoted").replace("``", "`")


def validate_model_columns(
    model_name: str,
    strategy: str,
    config: Mapping[str, Any],
    column_names: Iterable[str],
    builtin: Iterable[str],
) -> None:
    """Raise one CompilationError naming every config entry that names no column of the model.

    Runs on every build of an incremental model, the first run and `--full-refresh`
    included, against the columns the model's query produces, so a typo fails before
    anything is written instead of on the next incremental run. `config` holds unique_key,
    merge_update_columns, merge_exclude_columns, latest_by and event_time.
    """
    if strategy not in set(builtin):
        return  # a custom strategy decides for itself what its configs mean
    columns = list(column_names)
    known = {name.lower() for name in columns}
    named: list[tuple[str, str]] = []
    if strategy in KEYED_STRATEGIES:
        named += [("unique_key", key) for key in _as_list(config.get("unique_key"))]
    if strategy == "merge":
        for key in ("merge_update_columns", "merge_exclude_columns"):
            named += [(key, name) for name in _as_list(config.get(key))]
        for expression in _as_list(config.get("latest_by")):
            name = _plain_name(str(expression))
            if name is not None:
                named.append(("latest_by", name))
    if strategy == "microbatch":
        named += [("event_time", name) for name in _as_list(config.get("event_time"))]
    problems = [
        f"{key} '{name}' is not one of its columns"
        for key, name in named
        if str(name).lower() not in known
    ]
    if problems:
        raise CompilationError(
            f"Invalid incremental config for model '{model_name}':\n  - "
            + "\n  - ".join(problems)
            + f"\nThe model's columns are: {', '.join(columns)}. Nothing was written."
        )


# ---- on_schema_change: column types ----------------------------------------------------------

_INT_ALIASES = re.compile(r"\b(tinyint|smallint|byte|short|integer)\b")
_STRING_ALIASES = re.compile(r"\b(?:var)?char\(\s*\d+\s*\)")
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")


def iceberg_type(spark_type: str) -> str:
    """The type Iceberg stores for a Spark type name (it has no smallint, char or varchar)."""
    text = spark_type.strip().lower()
    text = _INT_ALIASES.sub("int", text)
    text = _STRING_ALIASES.sub("string", text)
    text = re.sub(r"\blong\b", "bigint", text)
    text = re.sub(r"\bdecimal\b(?!\()", "decimal(10,0)", text)
    return re.sub(r"\s+", "", text)


def is_widening(old: str, new: str) -> bool:
    """Whether Iceberg can change a column from `old` to `new` in place (type promotion)."""
    old, new = iceberg_type(old), iceberg_type(new)
    if (old, new) in {("int", "bigint"), ("float", "double")}:
        return True
    old_dec, new_dec = _DECIMAL.match(old), _DECIMAL.match(new)
    if old_dec and new_dec:
        return old_dec.group(2) == new_dec.group(2) and int(new_dec.group(1)) > int(
            old_dec.group(1)
        )
    return False


@dataclass(frozen=True)
class TypeChange:
    column: str
    old_type: str
    new_type: str


def plan_type_change_rows(model_name: str, changes: list[dict[str, str]]) -> list[dict[str, str]]:
    """plan_type_changes over the rows dbt's schema-change macros pass (column_name, old_type,
    new_type), in the same form."""
    planned = plan_type_changes(
        model_name, [TypeChange(c["column_name"], c["old_type"], c["new_type"]) for c in changes]
    )
    return [
        {"column_name": c.column, "old_type": c.old_type, "new_type": c.new_type} for c in planned
    ]


def plan_type_changes(model_name: str, changes: Iterable[TypeChange]) -> list[TypeChange]:
    """The ALTER COLUMN ... TYPE changes to apply, or an error naming every one Iceberg refuses.

    Changes that only differ in spelling (smallint vs int, varchar(10) vs string) are dropped.
    """
    to_apply: list[TypeChange] = []
    refused: list[TypeChange] = []
    for change in changes:
        if iceberg_type(change.old_type) == iceberg_type(change.new_type):
            continue
        (to_apply if is_widening(change.old_type, change.new_type) else refused).append(change)
    if refused:
        lines = [f"{c.column}: table has {c.old_type}, model gives {c.new_type}" for c in refused]
        raise CompilationError(
            f"on_schema_change 'sync_all_columns' cannot change column types of model "
            f"'{model_name}' in place:\n  - " + "\n  - ".join(lines) + "\nIceberg widens int to "
            "bigint, float to double and decimal(P,S) to decimal(P2,S) with P2 > P; any other "
            "change (narrowing, or another type) needs `dbt run --full-refresh` for this model. "
            "Nothing was changed."
        )
    return to_apply
