"""Model contracts on Iceberg: which constraints the table itself holds, and the column list a
contracted table is created with.

Iceberg has one constraint it checks on every write: a required field. So `not_null` is
enforced (the column is created NOT NULL, and Spark fails any write of a NULL into it), and a
`primary_key` makes its columns required and becomes the table's identifier fields. Nothing
checks a key's uniqueness, a `check` expression or a reference, so those are accepted and
reported by dbt as not enforced, and never reach the DDL (Spark's parser has no syntax for them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from dbt.adapters.base import ConstraintSupport
from dbt_common.contracts.constraints import (
    ColumnLevelConstraint,
    ConstraintType,
    ModelLevelConstraint,
)
from dbt_common.exceptions import DbtValidationError

CONSTRAINT_SUPPORT = {
    ConstraintType.check: ConstraintSupport.NOT_ENFORCED,
    ConstraintType.not_null: ConstraintSupport.ENFORCED,
    ConstraintType.unique: ConstraintSupport.NOT_ENFORCED,
    # The key's columns are required (enforced); its uniqueness is not.
    ConstraintType.primary_key: ConstraintSupport.NOT_ENFORCED,
    ConstraintType.foreign_key: ConstraintSupport.NOT_ENFORCED,
}

_REQUIRING = (ConstraintType.not_null, ConstraintType.primary_key)


class ContractTable(NamedTuple):
    columns: list[str]  # `name type [not null]`, in the contract's order
    required: list[str]  # the NOT NULL columns' rendered names
    identifier_fields: list[str]  # the primary key's rendered names, in its order


def _unquoted(name: str) -> str:
    return name.strip().strip('`"')


def contract_table(
    raw_columns: dict[str, dict[str, Any]],
    raw_constraints: list[dict[str, Any]],
    adapter: Any,
) -> ContractTable:
    """The columns a contracted table is created with. Every constraint goes through dbt's own
    parsing and support check, so dbt warns about the not-enforced ones as for any adapter."""
    render: Callable[[Any], str | None] = lambda _: None  # noqa: E731
    quoted: dict[str, str] = {}
    required: set[str] = set()
    key: list[str] = []
    for column in raw_columns.values():
        name = column["name"]
        quoted[name.lower()] = adapter.quote(name) if column.get("quote") else name
        for raw in column.get("constraints") or []:
            constraint: ColumnLevelConstraint = adapter._parse_column_constraint(raw)
            adapter.process_parsed_constraint(constraint, render)
            if constraint.type in _REQUIRING:
                required.add(name.lower())
            if constraint.type == ConstraintType.primary_key:
                key.append(name.lower())
    for raw in raw_constraints or []:
        model_constraint: ModelLevelConstraint = adapter._parse_model_constraint(raw)
        adapter.process_parsed_constraint(model_constraint, render)
        if model_constraint.type == ConstraintType.primary_key:
            names = [_unquoted(c).lower() for c in model_constraint.columns]
            required.update(names)
            key.extend(n for n in names if n not in key)
    unknown = [n for n in sorted(required) if n not in quoted]
    if unknown:
        raise DbtValidationError(
            f"primary_key names column(s) {', '.join(unknown)}, which the contract does not list"
        )
    columns = [
        f"{quoted[c['name'].lower()]} {c['data_type']}"
        + (" not null" if c["name"].lower() in required else "")
        for c in raw_columns.values()
    ]
    return ContractTable(
        columns=columns,
        required=[quoted[n] for n in quoted if n in required],
        identifier_fields=[quoted[n] for n in key],
    )
