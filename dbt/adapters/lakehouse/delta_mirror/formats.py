"""`table_formats`: which formats a table is described in (Iceberg always, Delta optionally),
and the table properties a dual-format table must have (copy-on-write)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Iceberg's defaults are copy-on-write; set anyway, so a catalog-level default cannot make a
# dual-format table merge-on-read.
COPY_ON_WRITE = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}


def merge_on_read_keys(properties: Mapping[str, Any]) -> list[str]:
    return sorted(
        k for k in COPY_ON_WRITE if str(properties.get(k, "")).strip().lower() == "merge-on-read"
    )


def merge_on_read_refusal(owner: str, keys: Sequence[str], where: str) -> str:
    return (
        f"{owner} is a dual-format table (table_formats [iceberg, delta]) but {where} sets "
        f"{', '.join(keys)} to merge-on-read. Merge-on-read keeps deleted rows in delete "
        "files (position deletes in format v2, deletion vectors in v3), which the Delta log "
        "cannot carry: Delta readers would return deleted rows. "
        "Nothing was written. Fix: remove merge-on-read from table_properties (dual-format "
        "tables are copy-on-write), or drop delta from table_formats."
    )
