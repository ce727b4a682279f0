"""Delta's per-file statistics and partition values for a data file Iceberg wrote. Readers
skip files on the statistics, so every bound is exact or wider: decimals as exact JSON numbers,
timestamps at millisecond precision floored (min) and ceiled (max)."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# Spark types whose identity partitions become Delta partition columns; values of other types
# (timestamps, floats, binary) have spellings in Delta's partitionValues that readers do not
# agree on, so such a table declares fewer (or no) Delta partitions and readers read the value
# from the file, which Iceberg writes there too.
PARTITION_TYPES = ("string", "integer", "long", "short", "byte", "date", "boolean")
_MILLIS = 1000


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
    whole, _, fraction = str(text).replace(" ", "T").partition(".")
    # Spark drops trailing zeros of the fraction; Python 3.10's fromisoformat wants 3 or 6 digits.
    moment = dt.datetime.fromisoformat(whole + (f".{fraction:0<6}" if fraction else ""))
    delta = moment - dt.datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def stat_value(spark_type: str, value: Any, upper: bool) -> Any:
    """A bound in Delta's stats JSON, or None when it is better left out.

    `value` arrives as iceberg_files.read_files selects it: timestamps as epoch micros,
    timestamp_ntz, dates and decimals as text, the rest as Spark returns them.
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
