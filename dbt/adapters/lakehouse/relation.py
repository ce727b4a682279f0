"""Relations are `catalog`.`namespace`.`table`: dbt's database is the Spark catalog name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dbt.adapters.base.relation import BaseRelation, Policy
from dbt.adapters.contracts.relation import ComponentName
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

    def _render_iterator(self) -> Iterator[tuple[ComponentName | None, str | None]]:
        # Iceberg catalogs keep a name's case and Spark does not fold it, so `MODEL` and `model`
        # would be two tables. dbt folds unquoted names to lower case when it searches
        # (quoting: false), so unquoted namespace and table names are written folded too.
        for key, part in super()._render_iterator():
            if (
                part is not None
                and key in (ComponentName.Schema, ComponentName.Identifier)
                and not self.quote_policy.get_part(key)
            ):
                part = part.lower()
            yield key, part


def split_table_name(name: str) -> tuple[str, str]:
    """`schema.table` -> (schema, table); anything else is refused with the expected form."""
    parts = [p.strip().strip("`") for p in name.split(".")] if name else []
    if len(parts) != 2 or not all(parts):
        raise CompilationError(f"Table name must be in the format <schema>.<table>; got {name!r}.")
    return parts[0], parts[1]
