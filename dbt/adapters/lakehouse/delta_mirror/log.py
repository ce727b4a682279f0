"""A Delta Lake log beside an Iceberg table: what to commit, decided from Iceberg's metadata.

Iceberg is the table; the Delta log (`_delta_log/` at the Iceberg table root) is a second
description of the same Parquet files, so engines that read only Delta see the rows Iceberg
readers see, with no copy. This module is the pure part: the configs, the file diff, the
per-file statistics, the partition values, and what Delta cannot represent. `delta_mirror/sync.py`
reads Iceberg and writes the log.

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

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

ICEBERG = "iceberg"
DELTA = "delta"
FORMATS = (ICEBERG, DELTA)
# The Delta app transaction carrying the Iceberg snapshot a log version mirrors: re-running a
# mirror of the same snapshot is then a no-op (DeltaTable.transaction_version).
APP_ID = "dbt-lakehouse/iceberg"
SNAPSHOT_KEY = "iceberg.snapshot-id"
# Each top-level column's Iceberg field id, in its Delta field metadata: a name dropped and
# added again outside dbt keeps its name but not its id, and the log must notice.
FIELD_ID_KEY = "iceberg.field-id"
# Iceberg's defaults are copy-on-write; set anyway, so a catalog-level default cannot make a
# dual-format table merge-on-read.
COPY_ON_WRITE = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}
# Spark types whose identity partitions become Delta partition columns; values of other types
# (timestamps, floats, binary) have spellings in Delta's partitionValues that readers do not
# agree on, so such a table declares fewer (or no) Delta partitions and readers read the value
# from the file, which Iceberg writes there too.
PARTITION_TYPES = ("string", "integer", "long", "short", "byte", "date", "boolean")
_MILLIS = 1000


class DeltaConfigError(CompilationError):
    """A `table_formats` config, or a change to a dual-format table, Delta cannot take."""


class DeltaMirrorError(DbtRuntimeError):
    """The Delta log could not describe an Iceberg snapshot."""

    CODE = 10110
    MESSAGE = "Delta log error"


# ---- configuration --------------------------------------------------------------------------


def parse_table_formats(value: Any, owner: str) -> tuple[str, ...]:
    """`table_formats` checked: iceberg always, delta optional, nothing else."""
    accepted = "Accepted: [iceberg] (the default) or [iceberg, delta]."
    if value is None:
        return (ICEBERG,)
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise DeltaConfigError(f"table_formats of {owner} must be a list of names. {accepted}")
    lowered = [n.strip().lower() for n in names]
    unknown = [n for n in lowered if n not in FORMATS]
    if unknown:
        raise DeltaConfigError(
            f"table_formats of {owner} names {', '.join(map(repr, unknown))}. {accepted}"
        )
    if ICEBERG not in lowered:
        raise DeltaConfigError(
            f"table_formats of {owner} lacks iceberg: every table is an Iceberg table, the "
            f"Delta log is a second description of its files. {accepted}"
        )
    return tuple(f for f in FORMATS if f in lowered)


def merge_on_read_keys(properties: Mapping[str, Any]) -> list[str]:
    return sorted(
        k for k in COPY_ON_WRITE if str(properties.get(k, "")).strip().lower() == "merge-on-read"
    )


def merge_on_read_refusal(owner: str, keys: Sequence[str], where: str) -> str:
    return (
        f"{owner} is a dual-format table (table_formats [iceberg, delta]) but {where} sets "
        f"{', '.join(keys)} to merge-on-read. Merge-on-read keeps deleted rows in position-"
        "delete files, which Delta readers cannot apply: they would return deleted rows. "
        "Nothing was written. Fix: remove merge-on-read from table_properties (dual-format "
        "tables are copy-on-write), or drop delta from table_formats."
    )


# ---- schema changes Delta cannot follow -------------------------------------------------------


@dataclass(frozen=True)
class SchemaHazard:
    column: str
    reason: str


def schema_hazards(
    current: Mapping[int, str], added_names: Iterable[str], writing: Iterable[Mapping[int, str]]
) -> list[SchemaHazard]:
    """Which columns new to the Delta log would read wrong values from live files.

    `current` maps Iceberg field ids to names now; `writing` holds the same map for each schema
    live data files were written with. Delta readers find a column in a file by name: a column
    renamed since a file was written reads NULL there, and a name dropped and added again (a
    new field id) reads the old column's values, where Iceberg reads NULL.
    """
    by_name = {name: field_id for field_id, name in current.items()}
    hazards: list[SchemaHazard] = []
    schemas = list(writing)
    for name in sorted(set(added_names)):
        field_id = by_name.get(name)
        if field_id is None:
            continue
        for schema in schemas:
            old_name = schema.get(field_id)
            if old_name is not None and old_name != name:
                hazards.append(
                    SchemaHazard(
                        name,
                        f"column {old_name!r} was renamed to {name!r}; Delta readers match "
                        "columns by name and would read NULL from files written before",
                    )
                )
                break
            old_ids = [i for i, n in schema.items() if n == name and i != field_id]
            if old_ids:
                hazards.append(
                    SchemaHazard(
                        name,
                        f"column {name!r} was dropped and added again; live files still hold "
                        "the dropped column's values, which Delta readers would return where "
                        "Iceberg returns NULL",
                    )
                )
                break
    return hazards


def field_id(delta_field: Mapping[str, Any]) -> int | None:
    """The Iceberg field id a Delta field was mirrored with (None in logs written before ids
    were recorded)."""
    value = (delta_field.get("metadata") or {}).get(FIELD_ID_KEY)
    return None if value is None else int(value)


def with_field_ids(
    fields: Sequence[Mapping[str, Any]], current: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Spark's schema fields with each top-level column's Iceberg field id recorded."""
    by_name = {name: field_id for field_id, name in current.items()}
    recorded: list[dict[str, Any]] = []
    for spark_field in fields:
        metadata = dict(spark_field.get("metadata") or {})
        found = by_name.get(str(spark_field["name"]))
        if found is not None:
            metadata[FIELD_ID_KEY] = found
        recorded.append({**spark_field, "metadata": metadata})
    return recorded


def reassigned_names(
    held: Sequence[Mapping[str, Any]],
    current: Mapping[int, str],
    mirrored: Mapping[int, str] | None,
) -> list[str]:
    """Names the Delta log holds whose Iceberg field id is not the one they were mirrored with:
    the id the log recorded, else the one in the schema of the snapshot the log mirrors
    (`mirrored`). A name with neither is returned too, to be checked against the live files.
    A name no longer in the table is not: the log is redeclared without it."""
    now = {name: field_id for field_id, name in current.items()}
    then = {} if mirrored is None else {name: i for i, name in mirrored.items()}
    names: list[str] = []
    for delta_field in held:
        name = str(delta_field["name"])
        if name not in now:
            continue
        recorded = field_id(delta_field)
        if recorded is None:
            recorded = then.get(name)
        if recorded != now[name]:
            names.append(name)
    return names


def readd_refusal(owner: str, names: Sequence[str]) -> str:
    return (
        f"{owner} is a dual-format table (table_formats [iceberg, delta]); adding column(s) "
        f"{', '.join(names)} again, after they were dropped while files written with them are "
        "still live, would make Delta readers return the dropped values (they match columns "
        "by name; Iceberg by field id). Nothing was written. Fix: rebuild the table with "
        "--full-refresh (every file is then written anew), or use a new column name."
    )


def type_change_refusal(owner: str, changes: Sequence[str]) -> str:
    return (
        f"{owner} is a dual-format table (table_formats [iceberg, delta]); changing the type "
        f"of {', '.join(changes)} in place cannot be described in its Delta log (Delta needs "
        "its type-widening feature, which delta-rs does not write), so Delta readers would "
        "misread older files. Nothing was written. Fix: rebuild the table with --full-refresh, "
        "or keep the old type."
    )


# ---- statistics and partition values ------------------------------------------------------------


@dataclass(frozen=True)
class ColumnStats:
    lower: Any = None
    upper: Any = None
    nulls: int | None = None
    nans: int | None = None


class _Raw(str):
    """A JSON number literal written as is (decimals keep every digit)."""


def _timestamp_text(micros: int, ceil: bool, utc: bool) -> str:
    millis = -((-micros) // _MILLIS) if ceil else micros // _MILLIS
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return text + ("Z" if utc else "")


def _ntz_micros(text: str) -> int:
    """Micros since the epoch of a timestamp_ntz as Spark casts it to string."""
    moment = dt.datetime.fromisoformat(str(text).replace(" ", "T"))
    delta = moment - dt.datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def stat_value(spark_type: str, value: Any, upper: bool) -> Any:
    """A bound in Delta's stats JSON, or None when it is better left out.

    `value` arrives as deltasync selects it: timestamps as epoch micros, timestamp_ntz, dates
    and decimals as text, the rest as Spark returns them.
    """
    if value is None:
        return None
    if spark_type == "timestamp":
        return _timestamp_text(int(value), ceil=upper, utc=True)
    if spark_type == "timestamp_ntz":
        return _timestamp_text(_ntz_micros(str(value)), ceil=upper, utc=False)
    if spark_type.startswith("decimal"):
        return _Raw(str(Decimal(str(value))))
    if spark_type == "date":
        return str(value)
    if spark_type in ("float", "double"):
        number = float(value)
        return None if math.isnan(number) or math.isinf(number) else number
    if spark_type in ("integer", "long", "short", "byte"):
        return int(value)
    if spark_type == "string":
        return str(value)
    if spark_type == "boolean":
        return bool(value)
    return None  # binary and nested values carry no bounds here


def _dumps(value: Any) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def stats_json(records: int, columns: Mapping[str, ColumnStats], types: Mapping[str, str]) -> str:
    """Delta's per-file stats: numRecords, and for each column with known bounds its min, max
    and null count. A float column holding NaN gets no bounds (Delta orders NaN differently)."""
    mins: dict[str, Any] = {}
    maxes: dict[str, Any] = {}
    nulls: dict[str, Any] = {}
    for name, stats in columns.items():
        spark_type = types.get(name, "")
        if stats.nulls is not None:
            nulls[name] = int(stats.nulls)
        if stats.nans:
            continue
        low = stat_value(spark_type, stats.lower, upper=False)
        high = stat_value(spark_type, stats.upper, upper=True)
        if low is not None and high is not None:
            mins[name], maxes[name] = low, high
    document: dict[str, Any] = {"numRecords": int(records)}
    if mins:
        document["minValues"], document["maxValues"] = mins, maxes
    if nulls:
        document["nullCount"] = nulls
    return _dumps(document)


def partition_value(spark_type: str, value: Any) -> str | None:
    if value is None:
        return None
    if spark_type == "boolean":
        return "true" if value else "false"
    return str(value)


def delta_partition_columns(identity_fields: Sequence[str], types: Mapping[str, str]) -> list[str]:
    """The Delta partition columns of a table: its identity partition fields of types every
    reader spells alike; transforms (days, bucket, ...) have no Delta equivalent."""
    return [name for name in identity_fields if types.get(name) in PARTITION_TYPES]


# ---- the diff ------------------------------------------------------------------------------------


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
