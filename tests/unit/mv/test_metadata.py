"""A table's metadata as a view's refresh reads it (mv/metadata.py): Iceberg's metadata JSON
parsed, and the metadata tables read only when needed. That the JVM's reading and the metadata
tables' agree on real tables: tests/functional/adapter/test_materialized_view.py (its relation
type comes from the metadata tables) and
tests/functional/lakehouse/mv/test_materialized_views.py."""

from __future__ import annotations

import json

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.metadata import (
    ParsedMetadata,
    Snapshot,
    SqlMetadata,
    parse_metadata_json,
    reader,
)
from dbt.adapters.lakehouse.mv.reading import foreign_writer, view_status
from dbt.adapters.lakehouse.mv.state import schema_hash

# The shape TableMetadataParser writes (format v2), trimmed to what is read and a little more.
METADATA = {
    "format-version": 2,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    "location": "s3://bucket/warehouse/bench/mv",
    "last-updated-ms": 1795858752000,
    "properties": {
        "lakehouse.mv.sql_hash": "ab12",
        "lakehouse.mv.upstream.lakehouse.bench.events": "22",
        "write.format.default": "parquet",
    },
    "current-snapshot-id": 33,
    "refs": {"main": {"snapshot-id": 33, "type": "branch"}, "audit_1": {"snapshot-id": 44}},
    "snapshots": [
        {
            "snapshot-id": 11,
            "timestamp-ms": 1795858700000,
            "summary": {"operation": "append", "added-records": "10"},
        },
        {
            "snapshot-id": 33,
            "parent-snapshot-id": 11,
            "timestamp-ms": 1795858750000,
            "summary": {
                "operation": "overwrite",
                "total-files-size": "4096",
                "lakehouse.mv.refreshed_at": "2026-11-28T10:06:22Z",
                "dbt.node": "model.p.mv",
            },
        },
        {
            "snapshot-id": 44,
            "parent-snapshot-id": 33,
            "timestamp-ms": 1795858760000,
            "summary": {"operation": "append"},
        },
    ],
}


def test_main_snapshots_and_the_views_properties_from_the_metadata_json() -> None:
    found = parse_metadata_json(json.dumps(METADATA))
    assert found.main == 33  # main's ref, not the audit branch's 44
    assert found.snapshots == {
        11: Snapshot(None, "append", 1795858700000, {}),
        33: Snapshot(
            11,
            "overwrite",
            1795858750000,
            {"lakehouse.mv.refreshed_at": "2026-11-28T10:06:22Z"},
            4096,
            "model.p.mv",
        ),
        44: Snapshot(33, "append", 1795858760000, {}),
    }
    assert found.properties == {
        "lakehouse.mv.sql_hash": "ab12",
        "lakehouse.mv.upstream.lakehouse.bench.events": "22",
    }


def test_metadata_without_refs_or_snapshots() -> None:
    older = {k: v for k, v in METADATA.items() if k != "refs"}
    assert parse_metadata_json(json.dumps(older)).main == 33
    empty = {"format-version": 2, "current-snapshot-id": -1, "snapshots": [], "properties": {}}
    found = parse_metadata_json(json.dumps(empty))
    assert (found.main, dict(found.snapshots), dict(found.properties)) == (None, {}, {})


def test_the_metadata_tables_are_read_when_needed_and_once() -> None:
    asked: list[str] = []
    rows = {
        # each metadata file's (snapshot, schema): 33 written under schema 0, then altered
        "metadata_log_entries": [(33, 1, 3), (11, 0, 1), (33, 0, 2)],
        "refs": [(33,)],
        "snapshots": [
            (11, None, "append", 1795858700000, "{}", None, None),
            (33, 11, "overwrite", 1795858750000, '{"lakehouse.mv.refreshed_at":"t"}', "512", "m"),
        ],
        "show tblproperties": [("lakehouse.mv.sql_hash", "ab12"), ("provider", "iceberg")],
    }

    def query(sql: str) -> list[tuple]:
        asked.append(sql)
        return next(found for key, found in rows.items() if key in sql)

    # No JVM handed over (as under Spark Connect): SQL, each table's reading kept.
    read = reader(None, query)
    table = TableName("lakehouse", "bench", "mv")
    assert isinstance(read(table), SqlMetadata) and asked == []
    assert read(table).main == 33 and read(table).main == 33
    assert len(asked) == 1 and "where name = 'main'" in asked[0]
    assert read(table).snapshots[33] == Snapshot(
        11, "overwrite", 1795858750000, {"lakehouse.mv.refreshed_at": "t"}, 512, "m", 0
    )
    assert read(table).snapshots[11].total_bytes is None
    assert read(table).properties == {"lakehouse.mv.sql_hash": "ab12"}
    # the schema now, against the one each snapshot was written under (by id alone)
    assert read(table).current_schema_id == 1
    assert read(table).schema_columns == {0: "0", 1: "1"}
    assert len(asked) == 4


def test_rows_another_model_wrote_are_told_from_a_views_build() -> None:
    record = {"lakehouse.mv.refreshed_at": "t"}
    snapshots = {
        1: Snapshot(None, "append", 1, record, writer="model.p.v"),  # the view's build
        2: Snapshot(1, "replace", 2, {}),  # a compaction keeps the build's rows
        3: Snapshot(2, "overwrite", 3, {}, writer="model.p.v"),  # built as a table since
        4: Snapshot(3, "replace", 4, {}),
        5: Snapshot(1, "overwrite", 5, {}),  # a writer that records no lineage
    }
    table = TableName("lakehouse", "s", "v")

    def writer(main: int | None) -> str | None:
        return foreign_writer(lambda _: ParsedMetadata(main, snapshots, {}), table)

    assert [writer(main) for main in (1, 2, 3, 4, 5, None)] == [
        None,
        None,
        "model.p.v",
        "model.p.v",
        None,
        None,
    ]


def test_a_view_whose_rows_another_model_wrote_is_stale_whatever_its_upstreams_did() -> None:
    built = {"lakehouse.mv.refreshed_at": "t0"}
    view = ParsedMetadata(
        3,
        {
            1: Snapshot(None, "append", 1, built, writer="model.p.v"),
            3: Snapshot(1, "overwrite", 3, {}, writer="model.p.v"),  # as a `table` since
        },
        {
            "lakehouse.mv.sql_hash": "h",
            "lakehouse.mv.refreshed_at": "t0",
            "lakehouse.mv.upstream.c.s.u": "7",
            "lakehouse.mv.upstream_schema.c.s.u": schema_hash([("id", "bigint")]),
        },
    )
    upstream = ParsedMetadata(7, {7: Snapshot(None, "append", 1, {})}, {})

    def read(table: TableName) -> ParsedMetadata:
        return view if table.name == "v" else upstream

    record, statuses = view_status(lambda _: [("id", "bigint")], read, TableName("c", "s", "v"))
    assert record.refreshed_at == "t0"  # the properties' mirror: all there is
    itself, orders = statuses
    assert (itself.name, itself.fresh, itself.current) == ("c.s.v", False, 3)
    assert "last written by model.p.v, not by a refresh of this view" in itself.note
    assert (orders.name, orders.fresh) == ("c.s.u", True)


def test_a_decisions_metadata_tables_are_read_in_one_statement() -> None:
    from dbt.adapters.lakehouse.mv.metadata import SqlReader

    asked: list[str] = []
    # (index, read, its columns as strings): the upstream's head and log, the node's too and
    # its snapshots
    batch = [
        ("0", "main", "5", None, None, None, None, None, None),
        ("0", "log", "5", "0", "100", None, None, None, None),
        ("1", "main", "33", None, None, None, None, None, None),
        ("1", "log", "33", "2", "200", None, None, None, None),
        ("1", "snapshots", "33", None, "overwrite", "1795858750000", "{}", "512", "m"),
    ]

    def query(sql: str) -> list[tuple]:
        asked.append(sql)
        if "union all" not in sql:
            raise AssertionError(f"read on its own: {sql}")
        return batch

    read = SqlReader(None, query)
    upstream, node = TableName("c", "s", "up"), TableName("c", "s", "node")
    read.prefetch([upstream, node], [node])
    assert len(asked) == 1 and asked[0].count("union all") == 4
    assert (read(upstream).main, read(upstream).current_schema_id) == (5, 0)
    assert read(node).snapshots[33] == Snapshot(None, "overwrite", 1795858750000, {}, 512, "m", 2)
    assert len(asked) == 1

    # A table not there fails the statement: each is read on its own then, with its error.
    def failing(sql: str) -> list[tuple]:
        asked.append(sql)
        raise RuntimeError("TABLE_OR_VIEW_NOT_FOUND")

    again = SqlReader(None, failing)
    again.prefetch([upstream, node], [])
    assert "main" not in vars(again(upstream))


def test_one_tables_head_and_log_are_one_statement_run_the_way_asked() -> None:
    from dbt.adapters.lakehouse.mv.metadata import SqlReader

    def refused(sql: str) -> list[tuple]:
        raise AssertionError(f"read through the reader's own query: {sql}")

    asked: list[str] = []

    def beside(sql: str) -> list[tuple]:  # another thread's query (reuse/connect_inputs.py)
        asked.append(sql)
        return [("0", "main", "7", *[None] * 6), ("0", "log", "7", "1", "100", *[None] * 4)]

    read = SqlReader(None, refused)
    upstream = TableName("c", "s", "up")
    read.prefetch([upstream], [], beside)
    assert len(asked) == 1 and asked[0].count("union all") == 1
    assert (read(upstream).main, read(upstream).current_schema_id) == (7, 1)
    read.prefetch([upstream], [])  # known already: no statement
    assert len(asked) == 1
