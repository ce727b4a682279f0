"""Reads of a table's Iceberg metadata tables (snapshots, refs, properties, files, manifests)
that the operations plan with and measure their effect by.

The readers take a `Query`: the adapter runs it through the cursor, so read-only depots, commit
retries and error mapping apply as for any statement.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot
from dbt.adapters.lakehouse.time_travel.history import int_or_none

Query = Callable[[str], list[tuple[Any, ...]]]

MERGE_ON_READ_KEYS = ("write.delete.mode", "write.update.mode", "write.merge.mode")


def is_merge_on_read(properties: Mapping[str, str]) -> bool:
    return any(properties.get(key, "").lower() == "merge-on-read" for key in MERGE_ON_READ_KEYS)


def read_snapshots(query: Query, table: str) -> list[Snapshot]:
    return [
        Snapshot(snapshot_id=int(r[0]), parent_id=int_or_none(r[1]), committed_ms=int(r[2]))
        for r in query(
            f"select snapshot_id, parent_id, unix_millis(committed_at) from {table}.snapshots"
        )
    ]


def read_refs(query: Query, table: str) -> list[Ref]:
    return [
        Ref(
            str(r[0]), str(r[1]), int(r[2]), int_or_none(r[3]), int_or_none(r[4]), int_or_none(r[5])
        )
        for r in query(
            "select name, type, snapshot_id, max_reference_age_in_ms, min_snapshots_to_keep, "
            f"max_snapshot_age_in_ms from {table}.refs"
        )
    ]


def read_properties(query: Query, table: str) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in query(f"show tblproperties {table}")}


def data_files(
    query: Query, table: str, small_below: int | None = None, only: str = ""
) -> tuple[int, int, int]:
    """(data files, their bytes, files below `small_below` bytes) of main's current snapshot;
    `only`: a further condition on the `files` metadata table."""
    threshold = small_below if small_below is not None else 0
    row = query(
        f"select count(*), coalesce(sum(file_size_in_bytes), 0), "
        f"count_if(file_size_in_bytes < {threshold}) from {table}.files where content = 0"
        + (f" and {only}" if only else "")
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def manifests(query: Query, table: str) -> tuple[int, int]:
    row = query(f"select count(*), coalesce(sum(length), 0) from {table}.manifests")[0]
    return int(row[0]), int(row[1])
