"""Compaction: `rewrite_data_files` (and, on a merge-on-read table, the position delete files),
over the whole table or, with `scope: run`, only the partitions the run wrote
(compaction_scope.py builds the filter). Skipped next to an open audit branch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dbt.adapters.lakehouse.iceberg.describe import parse_describe
from dbt.adapters.lakehouse.iceberg.lineage import INVOCATION_KEY
from dbt.adapters.lakehouse.iceberg.metadata import Ref
from dbt.adapters.lakehouse.iceberg.table_name import string_literal
from dbt.adapters.lakehouse.maintenance.audit_branches import audit_block
from dbt.adapters.lakehouse.maintenance.compaction_scope import (
    PARTITION_JSON,
    choose_run,
    run_filter,
)
from dbt.adapters.lakehouse.maintenance.config import sort_order
from dbt.adapters.lakehouse.maintenance.metadata import (
    Query,
    data_files,
    is_merge_on_read,
    read_properties,
)
from dbt.adapters.lakehouse.maintenance.report import Effect
from dbt.adapters.lakehouse.maintenance.target import Target

# A file is "small" below Iceberg's own default min-file-size-bytes: 75% of the target size.
SMALL_FRACTION = 0.75


@dataclass(frozen=True)
class _Scope:
    only: str  # a condition on the `files` metadata table selecting the scope's files
    where: str | None  # rewrite_data_files' `where`; None: the whole table
    label: str  # the start of the line's scope part


def _run_scope(query: Query, target: Target, effect: Effect) -> _Scope | None:
    """`scope: run`: the partitions the run's snapshots added live data files to, as a
    condition on `files` and a `where` for the rewrite; None (with the line saying so) when
    the run left no live data files in the table."""
    table = target.sql_name
    if target.run_invocation:
        choice = choose_run(target.run_invocation, [])
    else:
        line = query(
            f"select s.snapshot_id, s.operation, s.summary[{string_literal(INVOCATION_KEY)}] "
            f"from {table}.history h join {table}.snapshots s on s.snapshot_id = h.snapshot_id "
            "where h.is_current_ancestor order by h.made_current_at desc"
        )
        choice = choose_run(None, [(int(r[0]), r[1], r[2]) for r in line])
    if choice.invocation is None:
        return _Scope("", None, f"scope run falls back to the whole table: {choice.label}")
    columns, fields = parse_describe(query(f"describe table extended {table}"))
    if not fields:
        return _Scope("", None, "scope run is the whole table: it is unpartitioned")
    rows = query(
        f"select distinct data_file.spec_id, to_json(data_file.partition, {PARTITION_JSON}) "
        f"from {table}.entries where status <> 2 and data_file.content = 0 and snapshot_id in "
        f"(select snapshot_id from {table}.snapshots where "
        f"summary[{string_literal(INVOCATION_KEY)}] = {string_literal(choice.invocation)})"
    )
    if not rows:
        effect.scope = f"scope run: {choice.label} left no live data files in the table"
        effect.notes.append("nothing to do")
        return None
    # A null in a tuple means null source values only if the file's spec has that field: so
    # only if every spec field the table ever had is in the current spec, and the file's spec
    # has as many fields as the current one (`partition_summaries` holds one per field).
    spec_sizes = {
        int(r[0]): int(r[1])
        for r in query(
            "select distinct partition_spec_id, size(partition_summaries) "
            f"from {table}.manifests where content = 0"
        )
    }
    names = {f.name for f in fields}
    partitions: list[tuple[Mapping[str, Any], bool]] = []
    tuples: list[str] = []
    for spec_id, text in sorted(rows, key=lambda r: (str(r[1]), int(r[0]))):
        values = json.loads(str(text), parse_float=Decimal)
        partitions.append(
            (values, set(values) == names and spec_sizes.get(int(spec_id)) == len(fields))
        )
        if str(text) not in tuples:
            tuples.append(str(text))
    scope_filter = run_filter(fields, columns, partitions)
    if scope_filter.where is None:
        effect.notes.append(
            f"no filter on {', '.join(scope_filter.left_out)} selects these partitions, so "
            "the rewrite covers the whole table"
        )
    elif scope_filter.left_out:
        effect.notes.append(
            f"the rewrite's filter leaves out {', '.join(scope_filter.left_out)} (no filter "
            "form), so small files of neighbouring partitions may be rewritten too"
        )
    only = f"to_json(partition, {PARTITION_JSON}) in ({', '.join(map(string_literal, tuples))})"
    return _Scope(
        only, scope_filter.where, f"scope run: {len(tuples)} partition(s) of {choice.label}"
    )


def compact(
    query: Query, target: Target, options: Mapping[str, Any], refs: Sequence[Ref], effect: Effect
) -> None:
    table = target.sql_name
    order = sort_order(str(options["strategy"]), target.write_order_by, str(target))
    target_bytes = int(options["target_file_size_mb"]) * 1024 * 1024
    blocked = audit_block(refs, "compaction")
    if blocked:
        effect.skipped = blocked
        return
    scope = _Scope("", None, "")
    if options.get("scope", "table") == "run":
        found = _run_scope(query, target, effect)
        if found is None:
            return
        scope = found
    files, size, small = data_files(query, table, int(target_bytes * SMALL_FRACTION), scope.only)
    effect.files_before, effect.bytes_before = files, size
    effect.files_after, effect.bytes_after = files, size
    if scope.label:
        effect.scope = f"{scope.label}, {small} small file(s)" if scope.only else scope.label
    min_input = int(options["min_input_files"])
    if small < min_input:
        effect.notes.append(
            f"nothing to do: {small} small file(s), fewer than min_input_files={min_input}"
        )
        return
    properties = read_properties(query, table)
    if effect.dry_run:
        effect.notes.append(f"{small} small file(s) would be rewritten")
        return
    merge_on_read = is_merge_on_read(properties)
    # Position deletes whose data files the rewrite replaced apply to nothing any more, but
    # stay in the snapshot (and in its total-position-deletes, so the docs' row count would
    # fall short) unless removed here: rewrite_position_delete_files below leaves a partition
    # with fewer delete files than its own min-input-files untouched (bench/maintenance.py).
    dangling = ", 'remove-dangling-deletes', 'true'" if merge_on_read else ""
    args = [
        f"table => {target.in_catalog}",
        f"options => map('target-file-size-bytes', '{target_bytes}', "
        f"'min-input-files', '{min_input}'{dangling})",
    ]
    if order is not None:
        args.append("strategy => 'sort'")
        args.append(f"sort_order => '{order}'")
    if scope.where is not None:
        args.append(f"where => {string_literal(scope.where)}")
    row = query(f"CALL {target.procedures}.rewrite_data_files({', '.join(args)})")[0]
    effect.notes.append(f"{int(row[0])} rewritten into {int(row[1])}")
    if merge_on_read:
        # Iceberg 1.10's fifth column: removed_delete_files_count.
        if len(row) > 4 and row[4]:
            effect.notes.append(f"{int(row[4])} dangling delete file(s) removed")
        where = "" if scope.where is None else f", where => {string_literal(scope.where)}"
        deletes = query(
            f"CALL {target.procedures}.rewrite_position_delete_files(table => "
            f"{target.in_catalog}{where})"
        )[0]
        effect.notes.append(
            f"position delete files {int(deletes[0])} rewritten into {int(deletes[1])}"
        )
    effect.files_after, effect.bytes_after, _ = data_files(query, table, None, scope.only)
