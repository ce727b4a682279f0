"""A relation as Spark's `DESCRIBE EXTENDED` prints it: its columns, its table details and its
Iceberg partition fields (each parsed as a `SpecField`: transform, source column, width)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.iceberg.table_name import quote

# Iceberg's default partition field names: the source column's name with this suffix.
_FIELD_SUFFIX = {
    "identity": "",
    "years": "_year",
    "months": "_month",
    "days": "_day",
    "hours": "_hour",
    "bucket": "_bucket",
    "truncate": "_trunc",
    "void": "_null",
}
_TRANSFORM_CALL = re.compile(r"^(\w+)\((.*)\)$", re.S)
_IDENTIFIER_PART = re.compile(r"`((?:[^`]|``)+)`|([^.`]+)")


@dataclass(frozen=True)
class SpecField:
    """One field of a partition spec as DESCRIBE prints it: `days(ts)`, `bucket(4, id)`,
    `` `odd col` `` (identity)."""

    transform: str
    column: tuple[str, ...]  # the source column's path
    param: int | None = None
    text: str = ""
    source_type: str | None = None  # when DESCRIBE names it (identity-only specs)

    @property
    def name(self) -> str | None:
        """Iceberg's default name of the field (the key in a partition tuple)."""
        suffix = _FIELD_SUFFIX.get(self.transform)
        return None if suffix is None or not self.column else ".".join(self.column) + suffix

    @property
    def quoted_column(self) -> str:
        return ".".join(quote(part) for part in self.column)


def _column_path(text: str) -> tuple[str, ...]:
    parts: list[str] = []
    position = 0
    text = text.strip()
    while position < len(text):
        found = _IDENTIFIER_PART.match(text, position)
        if found is None:
            return ()
        quoted, bare = found.groups()
        parts.append(quoted.replace("``", "`") if quoted is not None else bare.strip())
        position = found.end()
        if position < len(text):
            if text[position] != ".":
                return ()
            position += 1
    return tuple(parts)


def parse_spec_field(text: str) -> SpecField:
    """A `# Partitioning` entry of DESCRIBE TABLE: `days(ts)`, `bucket(16, id)`, `truncate(4,
    s)`, `region` (identity). Anything else keeps its text with an unknown transform."""
    text = text.strip()
    call = _TRANSFORM_CALL.match(text)
    if call is None:
        return SpecField("identity", _column_path(text), None, text)
    transform, inner = call.group(1).lower(), call.group(2)
    if transform in ("bucket", "truncate"):
        width, _, column = inner.partition(",")
        if not width.strip().isdigit():
            return SpecField(transform, (), None, text)
        return SpecField(transform, _column_path(column), int(width), text)
    return SpecField(transform, _column_path(inner), None, text)


def parse_describe(rows: Iterable[Sequence[Any]]) -> tuple[dict[str, str], list[SpecField]]:
    """DESCRIBE TABLE EXTENDED rows: the top-level columns (name -> type) and the fields of
    the table's current partition spec. Spark prints a spec of identity fields only as
    `# Partition Information` (quoted column names with their types), any other spec as
    `# Partitioning` (`Part 0 | days(ts)`)."""
    columns: dict[str, str] = {}
    fields: list[SpecField] = []
    section = "columns"
    for row in rows:
        name = str(row[0] or "").strip()
        kind = str(row[1] or "").strip()
        if name == "# Partitioning":
            section = "partitioning"
        elif name == "# Partition Information":
            section = "identity"
        elif not name or (name.startswith("#") and name != "# col_name"):
            section = ""
        elif section == "columns":
            columns[name] = kind
        elif section == "partitioning" and name.startswith("Part "):
            fields.append(parse_spec_field(kind))
        elif section == "identity" and name != "# col_name":
            fields.append(SpecField("identity", _column_path(name), None, name, kind))
    return columns, fields


@dataclass
class RelationDescription:
    columns: list[LakehouseColumn]
    details: dict[str, str]
    # Iceberg partition fields as DESCRIBE prints them, e.g. ['days(ts)', 'bucket(16, id)'].
    partitioning: list[str]


def read_description(rows: Iterable[Sequence[Any]], relation: Any) -> RelationDescription:
    """The columns (until the first `#` section), the `# Detailed Table Information` (or view)
    rows and the partition fields of `relation` from its DESCRIBE EXTENDED rows."""
    columns: list[LakehouseColumn] = []
    details: dict[str, str] = {}
    # Spark prints an identity-only spec under `# Partition Information`, others under
    # `# Partitioning`; parse_describe reads both.
    partitioning = [spec_field.text for spec_field in parse_describe(rows)[1]]
    in_columns = True
    in_details = False
    for row in rows:
        name, data_type, comment = (row[0] or "").strip(), row[1], row[2]
        if in_columns:
            if not name or name.startswith("#"):
                in_columns = False
            else:
                columns.append(
                    LakehouseColumn(
                        table_database=relation.database,
                        table_schema=relation.schema,
                        table_name=relation.identifier,
                        table_type=relation.type,
                        column=name,
                        dtype=str(data_type),
                        column_index=len(columns),
                        comment=comment or None,
                    )
                )
                continue
        if name.startswith("# Detailed") or name.startswith("# View Information"):
            in_details = True
            continue
        if in_details and name and not name.startswith("#"):
            details[name] = "" if data_type is None else str(data_type)
    return RelationDescription(columns=columns, details=details, partitioning=partitioning)
