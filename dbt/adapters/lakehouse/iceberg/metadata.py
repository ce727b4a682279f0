"""Rows of Iceberg's metadata tables as Python values: a snapshot (`<t>.snapshots`) and a
branch or tag (`<t>.refs`), one definition for every feature that reads them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


def format_millis(millis: int) -> str:
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{millis % 1000:03d} UTC"


# Keyword-only: parent_id and committed_ms are both ints, and the two readers this replaces
# passed them in opposite orders; a positional call would swap them silently.
@dataclass(frozen=True, kw_only=True)
class Snapshot:
    snapshot_id: int
    parent_id: int | None
    committed_ms: int  # epoch milliseconds

    def describe(self) -> str:
        return f"snapshot {self.snapshot_id} (committed {format_millis(self.committed_ms)})"


@dataclass(frozen=True)
class Ref:
    name: str
    kind: str  # "BRANCH" or "TAG" as the refs table gives it; callers may lower() it
    snapshot_id: int
    # The ref's own retention (None: the table's defaults apply).
    max_ref_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None

    def describe(self) -> str:
        return f"{self.name} ({self.kind}, snapshot {self.snapshot_id})"
