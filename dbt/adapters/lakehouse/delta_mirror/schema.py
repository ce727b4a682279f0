"""Schema changes a Delta log cannot follow. Delta readers find a column in a file by name,
Iceberg by field id: the log records each top-level column's Iceberg field id, so a column
renamed, or dropped and added again, is noticed before Delta readers would misread files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Each top-level column's Iceberg field id, in its Delta field metadata: a name dropped and
# added again outside dbt keeps its name but not its id, and the log must notice.
FIELD_ID_KEY = "iceberg.field-id"


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
