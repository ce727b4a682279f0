"""A Delta Lake log beside an Iceberg table: what to commit, decided from Iceberg's metadata.

Iceberg is the table; the Delta log (`_delta_log/` at the Iceberg table root) is a second
description of the same Parquet files, so engines that read only Delta see the rows Iceberg
readers see, with no copy. This module is the diff: which files a Delta commit adds and removes
so the log describes an Iceberg snapshot. Also pure: formats.py (the configs), schema.py (what
Delta cannot represent), file_stats.py (per-file statistics and partition values). sync.py
reads Iceberg (iceberg_files.py) and writes the log.

Facts it relies on (Iceberg 1.10 on Spark 3.5, delta-rs 1.6, DuckDB's delta extension 1.5),
each checked on this project's runtime; docs/delta.md has the list:
- add paths must be relative to the table root; absolute paths break DuckDB and delta-rs;
- readers skip files on the statistics, so every bound must be exact or wider: decimals as
  exact JSON numbers, timestamps at millisecond precision floored (min) and ceiled (max);
- readers match columns by name, not Iceberg's field ids: a renamed column, or a dropped name
  added again, would read wrong values from files written before the change;
- position-delete files (merge-on-read) have no Delta equivalent that delta-rs reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.delta_mirror.schema import field_id

# The Delta app transaction carrying the Iceberg snapshot a log version mirrors: re-running a
# mirror of the same snapshot is then a no-op (DeltaTable.transaction_version).
APP_ID = "dbt-lakehouse/iceberg"
SNAPSHOT_KEY = "iceberg.snapshot-id"


class DeltaMirrorError(DbtRuntimeError):
    """The Delta log could not describe an Iceberg snapshot."""

    CODE = 10110
    MESSAGE = "Delta log error"


@dataclass(frozen=True)
class DataFile:
    """A live data file of the Iceberg snapshot, as the Delta log describes it."""

    path: str  # relative to the table root
    size: int
    stats: str
    partition_values: Mapping[str, str | None] = field(default_factory=dict)


def relative_path(file_path: str, root: str) -> str:
    """A file's path relative to the table root, for Delta's add action."""
    normal_root = normalise_uri(root).rstrip("/") + "/"
    normal_file = normalise_uri(file_path)
    if not normal_file.startswith(normal_root):
        raise DeltaMirrorError(
            f"Data file {file_path} lies outside the table root {root} (write.data.path set "
            "elsewhere?). A Delta log can only name files under its own root with relative "
            "paths; readers break on absolute ones."
        )
    return normal_file[len(normal_root) :]


def normalise_uri(uri: str) -> str:
    """One spelling per location: s3a:// as s3://, file:/x and file:///x as /x."""
    if uri.startswith("s3a://"):
        return "s3://" + uri[len("s3a://") :]
    if uri.startswith("file://"):
        return uri[len("file://") :]
    if uri.startswith("file:"):
        return uri[len("file:") :]
    return uri


@dataclass
class MirrorPlan:
    """One Delta commit: `create` (no log yet), `redeclare` (a new schema or partitioning:
    every live file again, CREATE OR REPLACE in the log), `append` (adds and removes), or
    `noop` (the log already describes this snapshot)."""

    kind: str
    adds: list[DataFile] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    add_columns: list[dict[str, Any]] = field(default_factory=list)


def _shape(fields: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, bool, int | None]]:
    # The field id is part of the shape: a log without ids (or with stale ones after a rebuild
    # that gave a column a new id) is redeclared once, so later checks read its own record.
    return [
        (str(f["name"]), json.dumps(f["type"], sort_keys=True), bool(f["nullable"]), field_id(f))
        for f in fields
    ]


def plan_mirror(
    files: Sequence[DataFile],
    schema_fields: Sequence[Mapping[str, Any]],
    partition_columns: Sequence[str],
    delta: DeltaState | None,
) -> MirrorPlan:
    """The commit that makes the Delta log describe `files` with this schema and partitioning."""
    if delta is None:
        return MirrorPlan("create", adds=list(files))
    wanted = _shape(schema_fields)
    held = _shape(delta.schema_fields)
    if list(partition_columns) != list(delta.partition_columns) or wanted[: len(held)] != held:
        return MirrorPlan("redeclare", adds=list(files))
    live = {f.path for f in files}
    return MirrorPlan(
        "append",
        adds=[f for f in files if f.path not in delta.paths],
        removes=sorted(delta.paths - live),
        add_columns=[dict(f) for f in schema_fields[len(held) :]],
    )


@dataclass(frozen=True)
class DeltaState:
    """What the Delta log holds now."""

    paths: frozenset[str]
    schema_fields: Sequence[Mapping[str, Any]]
    partition_columns: Sequence[str]
    mirrored_snapshot: int | None
