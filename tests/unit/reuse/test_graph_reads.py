"""The tables dbt's graph says a node reads (reuse/graph_reads.py), read ahead under Spark
Connect beside the EXPLAIN that says what it really reads."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.graph_reads import graph_tables


def node(materialized: str, alias: str, *parents: str, schema: str = "Jaffle") -> dict[str, Any]:
    return {
        "config": {"materialized": materialized},
        "database": "lakehouse",
        "schema": schema,
        "alias": alias,
        "depends_on": {"nodes": list(parents)},
    }


GRAPH = {
    "nodes": {
        "seed.p.raw": node("seed", "RAW"),
        "model.p.stg": node("view", "stg", "seed.p.raw", "source.p.src.events"),
        "model.p.eph": node("ephemeral", "eph", "model.p.stg", "model.p.dim"),
        "model.p.dim": node("table", "dim", "seed.p.raw"),
        "snapshot.p.snap": node("snapshot", "snap", "model.p.dim", schema="snaps"),
        "model.p.fact": node("incremental", "fact", "model.p.eph", "snapshot.p.snap"),
        "model.p.elsewhere": node("table", "x", "source.p.files.logs"),
    },
    "sources": {
        "source.p.src.events": {"database": "lakehouse", "schema": "raw", "identifier": "events"},
        "source.p.files.logs": {"database": "spark_catalog", "schema": "f", "identifier": "logs"},
    },
}


def test_views_and_ephemeral_models_are_read_through_to_the_tables_below() -> None:
    found = graph_tables(GRAPH, "model.p.fact", ["LAKEHOUSE"])
    assert sorted(map(str, found)) == [
        "lakehouse.jaffle.dim",
        "lakehouse.jaffle.raw",  # an unquoted name as its statements wrote it
        "lakehouse.raw.events",
        "lakehouse.snaps.snap",
    ]
    assert all(isinstance(t, TableName) for t in found)


def test_no_graph_another_catalog_or_an_unknown_node_guess_nothing() -> None:
    assert graph_tables(None, "model.p.fact", ["lakehouse"]) == ()
    assert graph_tables(GRAPH, "model.p.elsewhere", ["lakehouse"]) == ()
    assert graph_tables(GRAPH, "model.p.gone", ["lakehouse"]) == ()
    assert graph_tables(GRAPH, "seed.p.raw", ["lakehouse"]) == ()
