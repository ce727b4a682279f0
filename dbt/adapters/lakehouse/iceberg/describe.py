"""A relation as Spark's `DESCRIBE EXTENDED` prints it: its columns, its table details and its
Iceberg partition fields, read from the rows in one pass."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.maintenance.compaction_scope import parse_describe


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
