"""Model configs this adapter understands, beyond dbt's own.

`AdapterConfig` declares keys; values are validated where they are used (partition_by in
`partitioning.py`, before anything is written; the others in the materialization macros).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.base import AdapterConfig


@dataclass
class LakehouseConfig(AdapterConfig):
    """
    partition_by: Iceberg partition spec, a list of entries such as 'region', 'days(ts)',
        'bucket(16, id)', 'truncate(4, zip)' or {field: id, transform: bucket, n: 16}.
    table_properties: Iceberg table properties (TBLPROPERTIES), e.g.
        {'write.merge.mode': 'merge-on-read'}; values are rendered as strings.
    write_order_by: columns or expressions for ALTER TABLE ... WRITE ORDERED BY, applied
        after each table build so later writes are sorted.
    merge_update_columns / merge_exclude_columns: the columns a `merge` updates (dbt standard).
    incremental_predicates: extra conditions on the merge join (dbt standard).
    """

    partition_by: list[Any] | str | dict[str, Any] | None = None
    table_properties: dict[str, Any] | None = None
    write_order_by: list[str] | str | None = None
    merge_update_columns: list[str] | None = None
    merge_exclude_columns: list[str] | None = None
    incremental_predicates: list[str] | None = None
