"""Relations are `catalog`.`namespace`.`table`: dbt's database is the Spark catalog name.

A relation may read its table as of a point in the table's history (`time_travel`): then it
renders with Spark's clause (`... TIMESTAMP AS OF '...'`) wherever SQL uses it, while its
name (`render()`, which dbt's cache and the adapter's metadata lookups use) stays the table's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.base.relation import BaseRelation, Policy
from dbt.adapters.contracts.relation import ComponentName, HasQuoting, RelationConfig
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.dataset_address import (
    catalog_name,
    is_dataset_address,
    parse_dataset_address,
)
from dbt.adapters.lakehouse.time_travel.as_of import AsOf, checks_now, parse_as_of


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
    # {timestamp|snapshot_id|ref_name: value}, as AsOf.as_config() gives it; None: the
    # table's current state.
    time_travel: dict[str, Any] | None = None

    def quoted(self, identifier: str) -> str:
        # Backticks inside a name are escaped by doubling, as Spark SQL expects.
        return "`{}`".format(identifier.replace("`", "``"))

    def _render_iterator(self) -> Iterator[tuple[ComponentName | None, str | None]]:
        for key, part in super()._render_iterator():
            yield key, None if part is None or key is None else self._written(key, part)

    def _written(self, key: ComponentName, part: str) -> str:
        # Iceberg catalogs keep a name's case and Spark does not fold it, so `MODEL` and `model`
        # would be two tables. dbt folds unquoted names to lower case when it searches
        # (quoting: false), so unquoted namespace and table names are written folded too.
        folds = key in (ComponentName.Schema, ComponentName.Identifier)
        return part.lower() if folds and not self.quote_policy.get_part(key) else part

    def written_names(self) -> tuple[str, str, str]:
        """(catalog, namespace, table) as this relation's statements write them, unquoted."""
        database, schema, identifier = (
            self._written(key, str(self.path.get_part(key)))
            for key in (ComponentName.Database, ComponentName.Schema, ComponentName.Identifier)
        )
        return database, schema, identifier

    @property
    def as_of(self) -> AsOf | None:
        if self.time_travel is None:
            return None
        return parse_as_of(self.time_travel, f"relation {self.render()}")

    def with_time_travel(self, as_of: AsOf | None) -> LakehouseRelation:
        # replace, not incorporate: incorporate deep-merges, which would keep an earlier key.
        return dataclasses.replace(self, time_travel=None if as_of is None else as_of.as_config())

    def __str__(self) -> str:
        plain = super().__str__()
        as_of = self.as_of
        if as_of is None:
            return plain
        # The clause binds to the table name, inside dbt's --empty limit and microbatch filter
        # subqueries, which both start from the name.
        name = self.render()
        return plain.replace(name, f"{name} {as_of.clause}", 1)

    def in_dataset(self, source: RelationConfig) -> LakehouseRelation:
        """A source whose identifier is a DataOS dataset address (`dataos://<depot>:<collection>
        /<dataset>`) as the table it names, in the catalog its depot is mounted as
        (profile/dataset_mounts.py); any other source as it is."""
        if not is_dataset_address(self.identifier):
            return self
        name = f"source {getattr(source, 'source_name', '?')}.{getattr(source, 'name', '?')}"
        try:
            address = parse_dataset_address(str(self.identifier))
        except DepotConfigError as exc:
            raise CompilationError(f"{name}: {exc.msg}") from None
        catalog = _dataset_catalog(address.depot)
        path = {"database": catalog, "schema": address.collection, "identifier": address.dataset}
        return self.incorporate(path=path)

    @classmethod
    def create_from(
        cls, quoting: HasQuoting, relation_config: RelationConfig, **kwargs: Any
    ) -> LakehouseRelation:
        relation: LakehouseRelation = super().create_from(quoting, relation_config, **kwargs)
        if relation_config.resource_type == "source":
            relation = relation.in_dataset(relation_config)
        # Only dbt's source() passes event_time_filter. Its other calls name the live table:
        # the manifest's relation_name, freshness, the docs catalog.
        if "event_time_filter" not in kwargs or relation_config.resource_type != "source":
            return relation
        as_of = source_as_of(relation_config)
        if as_of is None:
            return relation
        travelled = relation.with_time_travel(as_of)
        check_source_time_travel(travelled, as_of)
        return travelled


def _dataset_catalog(depot: str) -> str:
    """The catalog the registered adapter mounted `depot` as; outside dbt (no adapter), the
    catalog it would be mounted as."""
    from dbt.adapters.lakehouse.profile.dataset_mounts import catalog_for

    try:
        from dbt.adapters.factory import get_adapter_by_type

        credentials = get_adapter_by_type("lakehouse").config.credentials
    except Exception:  # no lakehouse adapter registered in this process
        return catalog_name(depot)
    return catalog_for(credentials, depot)


def source_as_of(source: RelationConfig) -> AsOf | None:
    """A source's `config: {as_of: {...}}` (set on the source or its table), or None."""
    config = getattr(source, "config", None)
    spec = config.get("as_of") if config is not None else None
    if spec is None:
        return None
    name = f"source {getattr(source, 'source_name', '?')}.{getattr(source, 'name', '?')}"
    return parse_as_of(spec, name)


def check_source_time_travel(relation: LakehouseRelation, as_of: AsOf) -> None:
    """Check a source's as_of as dbt resolves source() for a node it runs.

    The relation has no adapter of its own; the one the process registered runs the check on
    the node's connection, as `lakehouse.as_of` does.
    """
    from dbt.adapters.factory import get_adapter_by_type

    if checks_now():
        get_adapter_by_type("lakehouse").check_time_travel(relation, as_of)


def split_table_name(name: str) -> tuple[str, str]:
    """`schema.table` -> (schema, table); anything else is refused with the expected form."""
    parts = [p.strip().strip("`") for p in name.split(".")] if name else []
    if len(parts) != 2 or not all(parts):
        raise CompilationError(f"Table name must be in the format <schema>.<table>; got {name!r}.")
    return parts[0], parts[1]
