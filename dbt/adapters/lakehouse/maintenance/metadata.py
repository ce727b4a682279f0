"""Reads of a table's Iceberg metadata tables (snapshots, refs, properties, files, manifests)
that the operations plan with and measure their effect by.

The readers take a `Query`: the adapter runs it through the cursor, so read-only depots, commit
retries and error mapping apply as for any statement.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot

Query = Callable[[str], list[tuple[Any, ...]]]

MERGE_ON_READ_KEYS = ("write.delete.mode", "write.update.mode", "write.merge.mode")


def is_merge_on_read(properties: Mapping[str, str]) -> bool:
    return any(properties.get(key, "").lower() == "merge-on-read" for key in MERGE_ON_READ_KEYS)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def read_snapshots(query: Query, table: str) -> list[Snapshot]:
    return [
        Snapshot(snapshot_id=int(r[0]), parent_id=_int(r[1]), committed_ms=int(r[2]))
        for r in query(
            f"select snapshot_id, parent_id, unix_millis(committed_at) from {table}.snapshots"
        )
    ]


def read_refs(query: Query, table: str) -> list[Ref]:
    return [
        Ref(str(r[0]), str(r[1]), int(r[2]), _int(r[3]), _int(r[4]), _int(r[5]))
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
