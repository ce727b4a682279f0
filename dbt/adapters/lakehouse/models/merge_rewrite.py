"""A MERGE into a small Iceberg table runs without Spark's runtime group filter.

Before a copy-on-write MERGE rewrites the target's files, Spark runs its join once more, as a
job of its own, to find the files holding a matched row, so that untouched files are kept
(`spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled`). On a small table that job
costs more than rewriting the whole table: 40 source rows merged into tables of 0.7, 3.7 and
15 MB took 0.38, 0.43 and 0.85 s without it against 0.56, 0.55 and 0.94 s with it, while at
58 MB the filter won (1.62 s against 2.39 s) (bench/merge_group_filter.py). The rows are the
same either way; only which files are rewritten differs, so the setting is a `-- lakehouse:plan`
line (engine/statement_conf.py), left alone when the profile sets it. Merge-on-read tables
ignore it. Under Spark Connect the table's size would take a job to read: no line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.stats_reader import read_total_bytes
from dbt.adapters.lakehouse.iceberg.table_name import TableName

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

GROUP_FILTER = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"
# Below this the whole table rewrites in less time than the filter's job takes (at most 15 MB
# measured so; half of that, for tables that compress less well or have many files).
SMALL_TABLE_BYTES = 8 * 1024 * 1024


def plan_lines(total_bytes: int | None) -> str:
    """The `-- lakehouse:plan` lines of a MERGE into a table of `total_bytes` (None: unknown)."""
    if total_bytes is None or total_bytes > SMALL_TABLE_BYTES:
        return ""
    return f"-- lakehouse:plan {GROUP_FILTER}=false"


def merge_plan_lines(adapter: LakehouseAdapter, relation: Any) -> str:
    """The `-- lakehouse:plan` lines of a MERGE into `relation`; '' when none applies or its
    size cannot be read (a missing table: the MERGE says why)."""
    with adapter._spark_session(f"read {relation}'s size") as spark:
        if runtime.is_connect(spark):
            return ""
        try:
            total = read_total_bytes(spark, TableName.of(relation).sql_name)
        except Exception:
            return ""
    return plan_lines(total)
