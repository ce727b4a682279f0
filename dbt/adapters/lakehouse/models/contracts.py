"""Model contracts on Iceberg: which constraints the table itself holds, and the column list a
contracted table is created with.

Iceberg has one constraint it checks on every write: a required field. So `not_null` is
enforced (the column is created NOT NULL, and Spark fails any write of a NULL into it), and a
`primary_key` makes its columns required and becomes the table's identifier fields. Nothing
checks a key's uniqueness, a `check` expression or a reference, so those are accepted and
reported by dbt as not enforced, and never reach the DDL (Spark's parser has no syntax for them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from dbt.adapters.base import ConstraintSupport
from dbt_common.contracts.constraints import (
    ColumnLevelConstraint,
    ConstraintType,
    ModelLevelConstraint,
)
from dbt_common.exceptions import DbtValidationError

from dbt.adapters.lakehouse.models.incremental import iceberg_type
from dbt.adapters.lakehouse.models.partitioning import parse_partition_by, same_field_text

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


def primary_key_columns(
    raw_columns: dict[str, dict[str, Any]], raw_constraints: list[dict[str, Any]] | None
) -> list[str]:
    """The contract's primary key (column- or model-level), its columns as the contract names
    them (unquoted), in order. No dbt warnings: contract_table gives those, once per build."""
    key: list[str] = []
    for column in raw_columns.values():
        if any(c.get("type") == "primary_key" for c in column.get("constraints") or []):
            key.append(column["name"])
    for constraint in raw_constraints or []:
        if constraint.get("type") == "primary_key":
            names = [_unquoted(c) for c in constraint.get("columns") or []]
            key.extend(n for n in names if n.lower() not in {k.lower() for k in key})
    return key


def contract_table(
    raw_columns: dict[str, dict[str, Any]],
    raw_constraints: list[dict[str, Any]],
    adapter: Any,
) -> ContractTable:
    """The columns a contracted table is created with. Every constraint goes through dbt's own
    parsing and support check, so dbt warns about the not-enforced ones as for any adapter."""
    render: Callable[[Any], str | None] = lambda _: None  # noqa: E731
    quoted: dict[str, str] = {}
    key = [name.lower() for name in primary_key_columns(raw_columns, raw_constraints)]
    required: set[str] = set(key)
    for column in raw_columns.values():
        name = column["name"]
        quoted[name.lower()] = adapter.quote(name) if column.get("quote") else name
        for raw in column.get("constraints") or []:
            constraint: ColumnLevelConstraint = adapter._parse_column_constraint(raw)
            adapter.process_parsed_constraint(constraint, render)
            if constraint.type in _REQUIRING:
                required.add(name.lower())
    for raw in raw_constraints or []:
        model_constraint: ModelLevelConstraint = adapter._parse_model_constraint(raw)
        adapter.process_parsed_constraint(model_constraint, render)
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


_IDENTIFIER_FIELDS = re.compile(r"identifier-fields=\[([^\]]*)\]")


def table_shape(
    schema_fields: Sequence[tuple[str, str, bool]],
    partitioning: Sequence[str],
    table_properties: str,
) -> tuple[Any, ...]:
    """A table's shape as a contract decides it: its columns in order (name, Iceberg type,
    required), its partition fields and its identifier fields. `schema_fields` is Spark's
    (name, type, nullable); `table_properties` DESCRIBE's `Table Properties` row."""
    found = _IDENTIFIER_FIELDS.search(table_properties)
    identifier = sorted(_normal(f) for f in found.group(1).split(",") if f.strip()) if found else []
    return (
        tuple((_normal(n), iceberg_type(t), not nullable) for n, t, nullable in schema_fields),
        tuple(same_field_text(f) for f in partitioning),
        tuple(identifier),
    )


def contract_shape(
    raw_columns: dict[str, dict[str, Any]], table: ContractTable, partitioning: Sequence[str]
) -> tuple[Any, ...]:
    """The shape a contracted table is created with (table_shape's form)."""
    required = {_normal(n) for n in table.required}
    return (
        tuple(
            (_normal(c["name"]), iceberg_type(c["data_type"]), _normal(c["name"]) in required)
            for c in raw_columns.values()
        ),
        tuple(same_field_text(f) for f in partitioning),
        tuple(sorted(_normal(n) for n in table.identifier_fields)),
    )


def _normal(name: str) -> str:
    return _unquoted(name).lower()


def contract_fits(
    adapter: Any,
    relation: Any,
    raw_columns: dict[str, dict[str, Any]],
    table: ContractTable,
    partition_by: Any,
    model_name: str,
) -> bool:
    """Whether the existing table `relation` already has the shape the contract creates, so a
    rebuild can replace its rows in one commit (INSERT OVERWRITE) instead of re-creating it."""
    described = adapter.describe_relation(relation)
    if described is None:
        return False
    with adapter._spark_session(f"read the schema of {relation}") as spark:
        schema = spark.table(relation.render()).schema
    fields = [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]
    wanted = [f.render() for f in parse_partition_by(partition_by, model_name)]
    found = table_shape(
        fields, described.partitioning, described.details.get("Table Properties", "")
    )
    return found == contract_shape(raw_columns, table, wanted)
