"""`format_version`: which Iceberg table format version a model's table is written in (1, 2 or
3), from the model's config, its `table_properties`, or its depot's default, and what a
requested version means for a table that already exists.

Pure: the adapter (models/adapter.py) reads the existing table's version and runs the upgrade.
Facts this relies on (Iceberg 1.12 on Spark 3.5 and 4.1, checked on this project's runtime;
docs/format-v3.md has the list):
- `format-version` in a CREATE (OR REPLACE)'s TBLPROPERTIES, or ALTER TABLE SET TBLPROPERTIES,
  upgrades a table (v1 -> v2 -> v3) in one metadata commit; data and delete files stay;
- a downgrade is refused by Iceberg ("Cannot downgrade v3 table to v2"), in a REPLACE too;
- a REPLACE that names no version keeps the table's;
- a v1 table takes no row-level deletes: a merge-on-read DELETE/UPDATE/MERGE fails at write
  time ("Deletes are supported in V2 and above").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.profile.depot.table_defaults import (
    FormatVersionError,
    parse_format_version,
)

PROPERTY = "format-version"
MERGE_ON_READ_KEYS = ("write.delete.mode", "write.update.mode", "write.merge.mode")


def requested_format_version(
    configured: Any,
    properties: Mapping[str, Any] | None,
    depot_default: int | None,
    model_name: str,
) -> int | None:
    """The version a model asks for: its `format_version`, else a `format-version` in its
    table_properties (how it was asked before the config existed), else the depot's
    `spec.formatVersion`; None: nothing asked, Iceberg's default on create, the table's own
    version kept on a rebuild."""
    owner = f"Model '{model_name}'"
    from_config = parse_format_version(configured, f"format_version of {owner}")
    raw = (properties or {}).get(PROPERTY)
    from_properties = parse_format_version(raw, f"table_properties '{PROPERTY}' of {owner}")
    if from_config is not None and from_properties is not None and from_config != from_properties:
        raise FormatVersionError(
            f"{owner} sets format_version {from_config} and table_properties "
            f"'{PROPERTY}' {from_properties}. Nothing was written. Fix: keep one of the two "
            "(format_version is the config for it)."
        )
    if from_config is not None:
        return from_config
    if from_properties is not None:
        return from_properties
    return depot_default


def check_write_modes(version: int | None, properties: Mapping[str, Any], model_name: str) -> None:
    """A v1 table with merge-on-read would be created, then fail on its first delete."""
    if version != 1:
        return
    keys = [
        k
        for k in MERGE_ON_READ_KEYS
        if str(properties.get(k, "")).strip().lower() == "merge-on-read"
    ]
    if keys:
        raise FormatVersionError(
            f"Model '{model_name}' asks for format version 1 with {', '.join(keys)} "
            "merge-on-read, but Iceberg v1 has no delete files: its first update or delete "
            "would fail ('Deletes are supported in V2 and above'). Nothing was written. Fix: "
            "format_version 2 or 3, or copy-on-write."
        )


def version_change(existing: int, requested: int | None, table: str, model_name: str) -> bool:
    """Whether the existing table must be upgraded to `requested`; a downgrade is refused."""
    if requested is None or requested == existing:
        return False
    if requested > existing:
        return True
    raise FormatVersionError(
        f"Model '{model_name}' asks for format version {requested}, but table {table} is "
        f"already format version {existing}, and Iceberg tables cannot be downgraded (not by "
        "a --full-refresh either: CREATE OR REPLACE keeps the table and its version). Nothing "
        f"was written. Fix: set format_version {existing} (or remove it), or drop the table "
        f"(`drop table {table}`, which discards its history) and run again."
    )
