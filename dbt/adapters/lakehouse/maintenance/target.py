"""A table to maintain (its names and maintenance options), and what an operation reaches
beyond SQL: file sizes from the file system and the Delta log of a dual-format table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse.iceberg.table_name import TableName


@dataclass(frozen=True)
class Target(TableName):
    """A table to maintain: its names and the options of its `maintenance` config."""

    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    write_order_by: Any = None
    # After a model's build: the invocation that built it (compaction `scope: run`); None in
    # lakehouse_maintain, where the run is the one that made the current snapshot.
    run_invocation: str | None = None


FileSizes = Callable[[Sequence[str]], dict[str, int]]


@dataclass(frozen=True)
class DeltaLog:
    """The Delta log beside a dual-format table (delta_mirror/sync.py, through the adapter)."""

    exists: Callable[[Target], bool]
    # Mirror main's current snapshot: compaction deletes nothing, but the expiry after it
    # may delete the files it replaced, which the log would otherwise still list.
    follow: Callable[[Target], None]
    checkpoint: Callable[[Target], int]  # the version checkpointed
