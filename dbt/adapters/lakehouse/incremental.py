"""Which incremental strategy a model runs with, decided before any SQL runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dbt_common.exceptions import CompilationError


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
        raise CompilationError(
            f"Invalid incremental_strategy '{strategy}' for model '{model_name}'. Accepted: "
            f"{', '.join(valid)}; or define a macro named {macro_name} for a custom strategy."
        )
    if strategy == "merge" and not unique_key:
        raise CompilationError(
            f"incremental_strategy 'merge' needs a unique_key for model '{model_name}': set "
            "unique_key to a column or a list of columns, or use 'append'."
        )
    return strategy
