"""Seeds reach Spark as one DataFrame, not as row-by-row INSERT statements.

Every value travels as text (None stays NULL) into a temporary view; the seed macro then casts
each column to its declared type in a single CREATE OR REPLACE TABLE ... AS SELECT, so quotes,
`%` and NULLs need no escaping and the load is one Iceberg commit.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import agate
    from pyspark.sql import SparkSession


def seed_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return str(value)


def register_seed_view(
    spark: SparkSession, view_name: str, agate_table: agate.Table, column_names: list[str]
) -> int:
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField(name, StringType(), True) for name in column_names])
    rows = [tuple(seed_text(value) for value in row) for row in agate_table.rows]
    frame = spark.createDataFrame(rows, schema=schema)
    frame.createOrReplaceTempView(view_name)
    return len(rows)
