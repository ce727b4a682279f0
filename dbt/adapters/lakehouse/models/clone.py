"""`dbt clone` on Iceberg: how a table of the state's manifest is cloned, and the SQL of a
zero-copy clone (the materialization is macros/materializations/clone.sql; docs/models.md).

A zero-copy clone is a new catalog entry registered on the source's current metadata file: it
reads the source's data files and writes nothing of its own until it changes. What keeps that
safe, both ways:
- the clone's first commit gives it its own metadata and data paths (nothing it writes lands in
  the source's folders), turns off `gc.enabled` (Iceberg then refuses to expire snapshots or
  remove orphans on it, so it never deletes a file it shares) and turns off deleting old
  metadata files after commits (its metadata log starts with the source's own files, which a
  source may have switched on);
- a tag on the source at the cloned snapshot, named after the clone, keeps the files the clone
  reads through the source's own snapshot expiry. A re-clone moves the tag.

Iceberg cannot register a table in a catalog of another kind or place, and the Hadoop catalog
cannot register tables at all; there the clone is a copy (CREATE OR REPLACE ... AS SELECT, the
source's partitioning kept). A source mounted read-only cannot take the tag: a copy too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.iceberg.table_name import quote, string_literal

ZERO_COPY = "zero-copy"
COPY = "copy"
# Marks a zero-copy clone (and what it was cloned from): maintenance reads it.
CLONE_OF_PROPERTY = "dbt-lakehouse.clone-of"
TAG_PREFIX = "dbt-clone:"


@dataclass(frozen=True)
class CloneMode:
    mode: str  # ZERO_COPY or COPY
    reason: str  # why, for the log line and the node's result

    def as_dict(self) -> dict[str, str]:
        return {"mode": self.mode, "reason": self.reason}


def choose_mode(
    target_catalog: str,
    source_catalog: str,
    catalog_kinds: Mapping[str, str | None],
    read_only: Mapping[str, str],
) -> CloneMode:
    """Zero-copy where Iceberg can register the source's metadata in the clone's catalog and
    pin its files with a tag; a copy otherwise, saying why."""
    if source_catalog in read_only:
        return CloneMode(
            COPY,
            f"the source's depot {read_only[source_catalog]} is mounted read_only, so no tag "
            "can keep its files for a zero-copy clone",
        )
    if target_catalog != source_catalog:
        return CloneMode(
            COPY,
            f"the source is in catalog `{source_catalog}` and the clone in `{target_catalog}`; "
            "a zero-copy clone shares files within one catalog only",
        )
    if catalog_kinds.get(target_catalog) == "hadoop":
        return CloneMode(COPY, "a hadoop catalog cannot register a table on existing metadata")
    return CloneMode(ZERO_COPY, "registered on the source's metadata; no data file copied")


def tag_name(clone_name: str) -> str:
    """The source's tag that keeps a clone's files: one per clone, so a re-clone moves it."""
    return TAG_PREFIX + clone_name


def zero_copy_statements(
    catalog: str,
    clone_in_catalog: str,
    clone_name: str,
    source_name: str,
    metadata_file: str,
    snapshot_id: int | None,
    location: str,
) -> list[str]:
    """The statements of a zero-copy clone, in order, once `clone_name` is free.

    `clone_in_catalog`: the clone's `schema.table` as register_table takes it; `clone_name` and
    `source_name`: both as SQL names them; `location`: where a table of the clone's name lives
    in its catalog (its own folder, never the source's). The tag comes first: a clone that
    exists is always pinned, while a tag left by a failed register is moved by the next clone.
    """
    root = location.rstrip("/")
    properties = {
        "write.metadata.path": f"{root}/metadata",
        "write.data.path": f"{root}/data",
        "gc.enabled": "false",
        "write.metadata.delete-after-commit.enabled": "false",
        CLONE_OF_PROPERTY: source_name + ("" if snapshot_id is None else f"@{snapshot_id}"),
    }
    literal = string_literal
    rendered = ", ".join(f"{literal(k)} = {literal(v)}" for k, v in properties.items())
    statements = []
    if snapshot_id is not None:
        statements.append(
            f"alter table {source_name} create or replace tag "
            f"{quote(tag_name(f'{catalog}.{clone_in_catalog}'))} "
            f"as of version {snapshot_id}"
        )
    statements += [
        f"call {quote(catalog)}.system.register_table(table => "
        f"{string_literal(clone_in_catalog)}, metadata_file => {string_literal(metadata_file)})",
        # One commit sets the paths, so its own metadata file is the first in the clone's folder.
        f"alter table {clone_name} set tblproperties ({rendered})",
        f"alter table {clone_name} set location {string_literal(root)}",
    ]
    return statements


def is_zero_copy_clone(properties: Mapping[str, Any]) -> bool:
    """A table that shares files with another (its clone-of property, or GC switched off by
    hand): its files are never expired or removed as orphans here."""
    return CLONE_OF_PROPERTY in properties or str(properties.get("gc.enabled", "true")) == "false"


def latest_metadata(rows: Sequence[Sequence[Any]]) -> tuple[str, int | None]:
    """(metadata file, snapshot id) from `metadata_log_entries` rows, newest first."""
    if not rows:
        raise ValueError("the source table has no metadata log entries")
    file, snapshot_id = rows[0][0], rows[0][1]
    return str(file), None if snapshot_id is None else int(snapshot_id)


def plan_clone(resolved: Any, target: Any, source: Any) -> dict[str, str]:
    """The mode `target` is cloned from `source` in (impl.py's `clone_mode`): the session's
    catalogs (their kinds) and read-only mounts from the resolved profile."""
    kinds = {
        mount.name: mount.context.kind if mount.context is not None else None
        for mount in resolved.spec.catalogs
    }
    return choose_mode(
        str(target.database), str(source.database), kinds, resolved.read_only
    ).as_dict()


def table_location(adapter: Any, relation: Any) -> str:
    """Where the catalog keeps `relation` (DESCRIBE's Location), for the clone's own folder."""
    described = adapter.describe_relation(relation)
    location = None if described is None else described.details.get("Location")
    if not location:
        raise DbtRuntimeError(f"dbt-lakehouse: the catalog reports no location for {relation}")
    return str(location)


def zero_copy_sql(target: Any, source: Any, metadata_rows: Any, location: str) -> list[str]:
    """impl.py's `clone_sql`: the statements for relations (as macros hold them)."""
    metadata_file, snapshot_id = latest_metadata([tuple(row) for row in metadata_rows])
    return zero_copy_statements(
        catalog=str(target.database),
        clone_in_catalog=f"{target.schema}.{target.identifier}",
        clone_name=target.render(),
        source_name=source.render(),
        metadata_file=metadata_file,
        snapshot_id=snapshot_id,
        location=location,
    )
