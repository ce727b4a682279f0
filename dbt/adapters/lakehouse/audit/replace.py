"""Replacing an existing table on an audit branch: the schema and partition spec changes an
INSERT OVERWRITE on the branch needs first, or why the model cannot be audited this run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dbt.adapters.lakehouse.audit.run import AuditError
from dbt.adapters.lakehouse.models.partitioning import same_field_text


@dataclass
class BranchReplacePlan:
    """What an audited replace must change on the table before INSERT OVERWRITE on the branch.

    Iceberg keeps one schema and partition spec per table, shared by every branch: these
    changes are seen by `main` readers at once (added columns read as NULL; dropped columns
    disappear; old rows keep their data files and are still read through `main`)."""

    add: list[tuple[str, str]] = field(default_factory=list)  # (column, type)
    drop: list[str] = field(default_factory=list)
    widen: list[tuple[str, str]] = field(default_factory=list)  # (column, new type)
    partition_drop: list[str] = field(default_factory=list)
    partition_add: list[str] = field(default_factory=list)


def plan_branch_replace(
    model_name: str,
    relation: str,
    new_columns: Sequence[tuple[str, str]],
    table_columns: Sequence[tuple[str, str]],
    new_partitioning: Sequence[str],
    table_partitioning: Sequence[str],
) -> BranchReplacePlan:
    """The schema and spec changes that make `relation` take the model's rows on a branch.

    Column types follow Iceberg's in-place promotions (int to bigint, float to double, decimal
    precision up); another type change cannot be made without replacing the table for every
    reader, so it is refused before anything changes.
    """
    from dbt.adapters.lakehouse.models.incremental import iceberg_type, is_widening

    plan = BranchReplacePlan()
    existing = {name.lower(): (name, dtype) for name, dtype in table_columns}
    wanted = {name.lower() for name, _ in new_columns}
    refused: list[str] = []
    for name, dtype in new_columns:
        found = existing.get(name.lower())
        if found is None:
            plan.add.append((name, dtype))
        elif iceberg_type(found[1]) != iceberg_type(dtype):
            if is_widening(found[1], dtype):
                plan.widen.append((found[0], dtype))
            else:
                refused.append(f"{found[0]}: table has {found[1]}, model gives {dtype}")
    if refused:
        raise AuditError(
            f"Model '{model_name}' cannot be audited on a branch this run: it changes column "
            f"types of {relation} that Iceberg cannot change in place:\n  - "
            + "\n  - ".join(refused)
            + "\nIceberg keeps one schema per table, shared by main and every branch, so the "
            "change would reach main's readers before the audit. Run this model once without "
            "auditing (config `write_audit_publish: false`, or a run without the target key). "
            "Nothing was written."
        )
    plan.drop = [name for key, (name, _) in existing.items() if key not in wanted]
    current = [same_field_text(f) for f in table_partitioning]
    target = [same_field_text(f) for f in new_partitioning]
    if current != target:
        plan.partition_drop = list(table_partitioning)
        plan.partition_add = list(new_partitioning)
    return plan
