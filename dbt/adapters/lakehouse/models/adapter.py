"""The adapter's incremental-model methods (impl.py delegates here): the strategy a model runs
with and its config checks, against the adapter's own list of strategies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.models.incremental import (
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


def resolve_strategy(
    adapter: LakehouseAdapter,
    raw_strategy: str | None,
    unique_key: Any,
    model_name: str,
    custom_macros: list[str],
) -> str:
    """The strategy a model runs with, or a compile error listing the accepted ones.

    Without a configured strategy: `merge` when a unique_key is set, else `append`. A name
    outside the built-in list is a custom strategy when its macro exists.
    """
    return resolve_incremental_strategy(
        raw_strategy,
        unique_key,
        model_name,
        valid=adapter.valid_incremental_strategies(),
        builtin=adapter.builtin_incremental_strategies(),
        custom_macros=custom_macros,
    )


def validate_config(
    adapter: LakehouseAdapter, model_name: str, strategy: str, config: dict[str, Any]
) -> str:
    """Check the model's incremental configs against its strategy (all problems at once)."""
    validate_incremental_config(
        model_name, strategy, config, builtin=adapter.valid_incremental_strategies()
    )
    return ""


def validate_columns(
    adapter: LakehouseAdapter,
    model_name: str,
    strategy: str,
    config: dict[str, Any],
    columns: list[Any],
) -> str:
    """Check that the configs naming columns name columns the model's query produces."""
    validate_model_columns(
        model_name,
        strategy,
        config,
        [getattr(column, "name", column) for column in columns],
        builtin=adapter.valid_incremental_strategies(),
    )
    return ""
