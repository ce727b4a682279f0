"""The tables dbt's graph says a node reads: its parents, through views and ephemeral models to
the tables and sources below them.

Under Spark Connect a decision needs two round trips: an `EXPLAIN` that says what the query
really reads, then one statement reading those tables' metadata. Each costs a few hundred
milliseconds on a served engine, on every node that decides. The metadata of the tables the
graph names is read beside the `EXPLAIN` (reuse/connect_inputs.py), so the two overlap (where
the server's cores are not busy, the decision waits for the longer of the two instead of
both). The graph is a guess, never the answer: a table the
`EXPLAIN` names that the graph did not is read after it, one the graph named that the `EXPLAIN`
does not is not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dbt.adapters.lakehouse.iceberg.table_name import TableName

# A model the graph reads through: its own query is inlined into its readers' plans.
_READ_THROUGH = frozenset({"view", "ephemeral"})


def graph_tables(
    graph: Mapping[str, Any] | None, node_id: str, catalogs: Iterable[str]
) -> tuple[TableName, ...]:
    """The tables of the mounted `catalogs` (by name) the graph says `node_id` reads; none when
    dbt gave no graph."""
    if not graph:
        return ()
    nodes: Mapping[str, Any] = graph.get("nodes") or {}
    sources: Mapping[str, Any] = graph.get("sources") or {}
    mounted = {c.lower() for c in catalogs}
    found: dict[str, TableName] = {}
    seen: set[str] = set()
    pending = list(_parents(nodes.get(node_id)))
    while pending:
        parent = pending.pop()
        if parent in seen:
            continue
        seen.add(parent)
        if parent in sources:
            source = sources[parent]
            name = _name(source.get("database"), source.get("schema"), source.get("identifier"))
        elif parent in nodes:
            node = nodes[parent]
            if (node.get("config") or {}).get("materialized") in _READ_THROUGH:
                pending.extend(_parents(node))
                continue
            name = _name(node.get("database"), node.get("schema"), node.get("alias"))
        else:
            continue
        if name is not None and name.catalog.lower() in mounted:
            found[str(name)] = name
    return tuple(found.values())


def _parents(node: Mapping[str, Any] | None) -> list[str]:
    return list(((node or {}).get("depends_on") or {}).get("nodes") or [])


def _name(catalog: Any, namespace: Any, name: Any) -> TableName | None:
    """The table as an unquoted name writes it (relation.py folds it to lower case); a quoted
    name of another case is only read again after the EXPLAIN."""
    if not (catalog and namespace and name):
        return None
    return TableName(str(catalog), str(namespace).lower(), str(name).lower())
