"""A table's history as time travel and rollback read it: its snapshots, the snapshot log
(when each became main's current one) and its branches and tags, from the Iceberg metadata
tables, and how messages show them.

The reader takes a `Query` (the adapter runs it through the cursor, so engine errors are mapped
as for any statement).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot

Query = Callable[[str], list[tuple[Any, ...]]]

SHOWN = 5  # snapshots or refs listed in a message


@dataclass(frozen=True)
class LogEntry:
    """An entry of the snapshot log: when a snapshot became main's current one."""

    snapshot_id: int
    made_current_ms: int


@dataclass(frozen=True)
class TableHistory:
    table: str  # the table's name as messages show it
    snapshots: Mapping[int, Snapshot]
    log: tuple[LogEntry, ...]  # oldest first
    refs: tuple[Ref, ...]  # kind lower-cased: "branch" or "tag"

    @property
    def main(self) -> Snapshot | None:
        for ref in self.refs:
            if ref.name == "main" and ref.kind == "branch":
                return self.snapshots.get(ref.snapshot_id)
        return None

    def line(self, snapshot_id: int) -> list[Snapshot]:
        """The snapshot and its ancestors, newest first (as far as they are kept)."""
        found: list[Snapshot] = []
        current = self.snapshots.get(snapshot_id)
        while current is not None and current not in found:
            found.append(current)
            current = self.snapshots.get(current.parent_id) if current.parent_id else None
        return found


def listed(items: Iterable[str], total: int) -> str:
    shown = list(items)
    more = f", and {total - len(shown)} more" if total > len(shown) else ""
    return "; ".join(shown) + more


def int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def read_history(query: Query, table: str) -> TableHistory:
    snapshots = {
        int(r[0]): Snapshot(
            snapshot_id=int(r[0]), committed_ms=int(r[1]), parent_id=int_or_none(r[2])
        )
        for r in query(
            f"select snapshot_id, unix_millis(committed_at), parent_id from {table}.snapshots"
        )
    }
    log = tuple(
        sorted(
            (
                LogEntry(int(r[0]), int(r[1]))
                for r in query(
                    f"select snapshot_id, unix_millis(made_current_at) from {table}.history"
                )
            ),
            key=lambda e: e.made_current_ms,
        )
    )
    refs = tuple(
        Ref(str(r[0]), str(r[1]).lower(), int(r[2]))
        for r in query(f"select name, type, snapshot_id from {table}.refs")
    )
    return TableHistory(table, snapshots, log, refs)
