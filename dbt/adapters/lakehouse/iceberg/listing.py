"""The relations of a namespace, from the catalog's own listing: tables and views, never a
session's temporary views; a failed lookup is never taken for an empty namespace. The embedded
lakehouse's catalog is listed from its SQLite rows, with no call into Spark (Iceberg's
JdbcCatalog lists the same rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.relation import RelationType

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    EmbeddedCatalog,
    namespace_names,
    objects_in,
)
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, ViewsUnsupportedError

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

SHOW_RELATIONS_MACRO = "lakehouse__show_relations"
LIST_SCHEMAS_MACRO = "list_schemas"


def embedded_catalog_of(adapter: LakehouseAdapter, catalog: str) -> EmbeddedCatalog | None:
    """The embedded lakehouse's catalog when `catalog` is it and its file is there (read here,
    without the engine); else None."""
    return embedded_catalog_in(adapter._resolved().spec, catalog)


def embedded_catalog_in(spec: Any, catalog: str) -> EmbeddedCatalog | None:
    """The same, for the profile's resolved engine spec."""
    embedded = spec.embedded_catalog
    if embedded is None or spec.is_connect or embedded.name != catalog.strip("`"):
        return None
    return embedded if embedded.database_file.exists() else None


def list_schema_names(adapter: LakehouseAdapter, database: str) -> list[str]:
    """What SHOW NAMESPACES lists in `database` (dbt may pass it quoted): the embedded
    catalog's top-level namespaces from its rows, any other catalog's through the engine."""
    embedded = embedded_catalog_of(adapter, database)
    if embedded is not None:
        found = namespace_names(embedded.database_file, embedded.name)
        return sorted({namespace.split(".")[0] for namespace in found})
    results = adapter.execute_macro(LIST_SCHEMAS_MACRO, kwargs={"database": database})
    return [str(row[0]) for row in results]


def list_relations(adapter: LakehouseAdapter, schema_relation: Any) -> list[Any]:
    embedded = embedded_catalog_of(adapter, str(schema_relation.database))
    if embedded is not None:
        _, namespace, _ = schema_relation.written_names()
        return [
            adapter.Relation.create(
                database=schema_relation.database,
                schema=schema_relation.schema,
                identifier=name,
                type=RelationType.View if is_view else RelationType.Table,
            )
            for name, is_view in objects_in(embedded.database_file, embedded.name, namespace)
        ]
    relations: list[Any] = []
    for kind, relation_type in (("tables", RelationType.Table), ("views", RelationType.View)):
        try:
            rows = adapter.execute_macro(
                SHOW_RELATIONS_MACRO, kwargs={"schema_relation": schema_relation, "kind": kind}
            )
        except NamespaceMissingError:
            # Only a namespace that does not exist means "no relations"; any other failure
            # (catalog down, permission) must surface, or dbt would rebuild over history.
            return []
        except ViewsUnsupportedError:
            if kind == "views":
                continue  # e.g. the hadoop catalog: it cannot hold views at all
            raise
        for row in rows:
            if len(row) > 2 and row[2] in (True, "true"):
                continue  # a session-local temporary view, not part of the lakehouse
            relations.append(
                adapter.Relation.create(
                    database=schema_relation.database,
                    schema=schema_relation.schema,
                    identifier=row[1],
                    type=relation_type,
                )
            )
    return relations
