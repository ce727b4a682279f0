"""The relations of a namespace, from the catalog's own listing: tables and views, never a
session's temporary views; a failed lookup is never taken for an empty namespace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.relation import RelationType

from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, ViewsUnsupportedError

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

SHOW_RELATIONS_MACRO = "lakehouse__show_relations"


def list_relations(adapter: LakehouseAdapter, schema_relation: Any) -> list[Any]:
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
