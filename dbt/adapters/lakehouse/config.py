"""Model configs this adapter understands, beyond dbt's own.

`AdapterConfig` declares keys; values are validated where they are used (partition_by in
`models/partitioning.py`, before anything is written; the incremental keys in
`models/incremental.py`, called
from the incremental materialization before any SQL runs).
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
    format_version: 1, 2 or 3: the Iceberg table format version the table is written in (a
        depot sets a default with spec.formatVersion; none: Iceberg's default, 2). 3 brings
        deletion vectors and row lineage; an existing table is upgraded on its next run, never
        downgraded (models/format_version.py, docs/format-v3.md).
    write_order_by: columns or expressions for ALTER TABLE ... WRITE ORDERED BY, applied
        after each table build so later writes are sorted.
    unique_key: (dbt standard) a column name or a list of column names; required by `merge`
        and `delete+insert`. Keys match null-safely (`<=>`): a NULL key is a value.
    merge_update_columns / merge_exclude_columns: list[str]; the columns a `merge` updates on
        matched rows (dbt standard; at most one of the two).
    incremental_predicates: list[str]; extra SQL conditions on the target rows a `merge` or
        `delete+insert` may touch (dbt standard; `merge` predicates may qualify columns with
        DBT_INTERNAL_DEST / DBT_INTERNAL_SOURCE, `delete+insert` predicates see target columns
        only).
    delete_condition: str; `merge` only. A SQL predicate on the source row, e.g. "op = 'd'".
        A matched target row whose source row meets it is deleted; an unmatched source row that
        meets it is not inserted (CDC). NULL counts as "not a delete".
    latest_by: str or list[str]; `merge` only. Columns or expressions ordering several source
        rows for one key: the greatest wins (NULLs lose), later entries break ties, then the
        remaining columns in model order, greatest first. Without it, a batch that repeats a
        key fails naming the model and the key value.
    write_audit_publish: bool; `false` keeps a table out of an audited run (profile key
        `write_audit_publish`): its writes land on `main` at once.
    maintenance: Iceberg table maintenance (the maintenance/ package), e.g.
        {after_run: [compaction,
        snapshot_expiry], compaction: {target_file_size_mb: 128}}: `after_run` operations run
        after a successful build; the option mappings also serve `lakehouse_maintain`.
    mv_freshness: `materialized_view` only. Freshness thresholds in a dbt source freshness's
        shape, e.g. {warn_after: {count: 12, period: hour}, error_after: {count: 1, period:
        day}}, judged by `lakehouse.mv_status` and `dbt-lakehouse mv status` (mv/freshness.py;
        not dbt's model `freshness`, which is `build_after`).
    reuse: bool; every SQL node that writes or reads tables (the profile's `reuse`, true by
        default, when unset). true: reused as its last build left it when nothing it reads
        moved and its definition is unchanged (reuse/, docs/reuse.md), also with hooks;
        false: always built. LAKEHOUSE_REUSE=on|off sets it for a whole run.
    checkpoint: true, `auto` or false; `view` only. Whether the run's later statements read the
        view through a checkpoint, its rows computed once (checkpoints/,
        docs/models.md#stacked-views). `auto` (the default, when unset): when its inlined plan
        scans 16 relations or more, one of them 4 times or more; true: always; false: never.
    """

    partition_by: list[Any] | str | dict[str, Any] | None = None
    table_properties: dict[str, Any] | None = None
    format_version: int | str | None = None
    write_order_by: list[str] | str | None = None
    merge_update_columns: list[str] | None = None
    merge_exclude_columns: list[str] | None = None
    incremental_predicates: list[str] | None = None
    delete_condition: str | None = None
    latest_by: list[str] | str | None = None
    write_audit_publish: bool | None = None
    maintenance: dict[str, Any] | None = None
    mv_freshness: dict[str, Any] | None = None
    reuse: bool | None = None
    checkpoint: bool | str | None = None
