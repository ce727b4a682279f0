"""Relations are `catalog`.`namespace`.`table`: dbt's database is the Spark catalog name."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbt.adapters.base.relation import BaseRelation, Policy
from dbt_common.exceptions import CompilationError


@dataclass
class LakehouseQuotePolicy(Policy):
    database: bool = True
    schema: bool = True
    identifier: bool = True


@dataclass
class LakehouseIncludePolicy(Policy):
    database: bool = True
    schema: bool = True
    identifier: bool = True


@dataclass(frozen=True, eq=False, repr=False)
class LakehouseRelation(BaseRelation):
    quote_policy: Policy = field(default_factory=lambda: LakehouseQuotePolicy())
    include_policy: Policy = field(default_factory=lambda: LakehouseIncludePolicy())
    quote_character: str = "`"
    require_alias: bool = False
    # Every table this adapter writes is Iceberg; dbt-spark macros we fall back to ask this.
    is_iceberg: bool = True
    is_delta: bool = False
    is_hudi: bool = False

    def quoted(self, identifier: str) -> str:
        # Backticks inside a name are escaped by doubling, as Spark SQL expects.
        return "`{}`".format(identifier.replace("`", "``"))


def split_table_name(name: str) -> tuple[str, str]:
    """`schema.table` -> (schema, table); anything else is refused with the expected form."""
    parts = [p.strip().strip("`") for p in name.split(".")] if name else []
    if len(parts) != 2 or not all(parts):
        raise CompilationError(f"Table name must be in the format <schema>.<table>; got {name!r}.")
    return parts[0], parts[1]
