"""The partitions a run wrote, as a filter rewrite_data_files takes (`scope: run` compaction).

`scope: run` compacts only the partitions the run's snapshots added live data files to. Those
come from the `entries` metadata table (an entry keeps the id of the snapshot that added its
file, even after manifest rewrites) as partition tuples, and reach rewrite_data_files as its
`where` option. Verified on Iceberg 1.10: `where` takes no partition transforms
(`system.days(ts) = ...` is "Cannot parse predicates in where option"), but range and prefix
filters on the source column prune exactly. So each partition field of the table's current
spec becomes a filter on its source column; a field that has no such form (bucket, a void or
unknown transform, a renamed field, a column of unknown or inexact type such as a nested one
or a double) is left out, which widens the filter to a superset: compaction then merely looks
at more files, it never changes a row.

Pure functions: maintenance/compaction.py reads the tuples and runs the rewrite.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dbt.adapters.lakehouse.iceberg.describe import SpecField
from dbt.adapters.lakehouse.iceberg.lineage import INVOCATION_KEY
from dbt.adapters.lakehouse.iceberg.table_name import string_literal

# How partition tuples are read as text (the same text in `entries` and `files`, so the run's
# partitions can also be counted after the rewrite replaced the run's own files): every field
# present, null as null, times in UTC with microseconds.
PARTITION_JSON = (
    "map('ignoreNullFields', 'false', 'timeZone', 'UTC', 'dateFormat', 'yyyy-MM-dd', "
    "'timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS', "
    "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS')"
)
_INTEGER_RANGES = {
    "tinyint": 2**7,
    "smallint": 2**15,
    "int": 2**31,
    "integer": 2**31,
    "bigint": 2**63,
}
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_MOMENT = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$")
_EPOCH = dt.datetime(1970, 1, 1)
_FILTERABLE = frozenset({"identity", "years", "months", "days", "hours", "truncate"})


def _column_type(columns: Mapping[str, str], spec_field: SpecField) -> str | None:
    if spec_field.source_type:
        return re.sub(r"\s+", "", spec_field.source_type.lower())
    if len(spec_field.column) != 1:  # a nested column: its type is inside a struct's text
        return None
    name = spec_field.column[0]
    found = columns.get(name)
    if found is None:
        found = next((t for c, t in columns.items() if c.lower() == name.lower()), None)
    return None if found is None else re.sub(r"\s+", "", found.lower())


def _moment_literal(kind: str, moment: dt.datetime) -> str | None:
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    if kind == "date":
        return f"DATE'{day}'"
    text = f"{day} {moment:%H:%M:%S}"
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    if kind == "timestamp":
        return f"TIMESTAMP'{text} UTC'"
    if kind == "timestamp_ntz":
        return f"TIMESTAMP_NTZ'{text}'"
    return None


def _value_literal(kind: str, value: Any) -> str | None:
    """`value` (as a partition tuple's JSON holds it) as a literal of column type `kind`;
    None for a type without an exact literal here."""
    if kind == "string" or kind.startswith(("varchar(", "char(")):
        return string_literal(str(value))
    if kind in _INTEGER_RANGES:
        return str(int(value)) if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == "boolean":
        return ("true" if value else "false") if isinstance(value, bool) else None
    if _DECIMAL.match(kind):
        number = _plain_number(value)
        return None if number is None else f"{number}BD"
    if kind == "date":
        try:
            return _moment_literal(kind, dt.datetime.strptime(str(value), "%Y-%m-%d"))
        except ValueError:
            return None
    if kind in ("timestamp", "timestamp_ntz") and _MOMENT.match(str(value)):
        return f"{kind.upper()}'{value}{' UTC' if kind == 'timestamp' else ''}'"
    return None


def _plain_number(value: Any) -> str | None:
    """A JSON number as plain decimal text (no exponent), None if it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    number = Decimal(value)
    return format(number, "f") if number.is_finite() else None


def _time_range(transform: str, kind: str, value: Any) -> tuple[str, str | None] | None:
    """The half-open range [start, end) of source values a time transform's value stands for,
    as literals of the source type `kind`; end None past the last representable moment."""
    try:
        if transform == "days":
            start = (
                _EPOCH + dt.timedelta(days=value)
                if isinstance(value, int)
                else dt.datetime.strptime(str(value), "%Y-%m-%d")
            )
        elif transform == "hours" and kind != "date":
            start = _EPOCH + dt.timedelta(hours=int(value))
        elif transform == "months":
            start = dt.datetime(1970 + int(value) // 12, int(value) % 12 + 1, 1)
        elif transform == "years":
            start = dt.datetime(1970 + int(value), 1, 1)
        else:
            return None
    except (ValueError, OverflowError, TypeError):
        return None
    try:
        if transform == "days":
            end: dt.datetime | None = start + dt.timedelta(days=1)
        elif transform == "hours":
            end = start + dt.timedelta(hours=1)
        elif transform == "months":
            end = dt.datetime(start.year + start.month // 12, start.month % 12 + 1, 1)
        else:
            end = dt.datetime(start.year + 1, 1, 1)
    except (ValueError, OverflowError):
        end = None
    low = _moment_literal(kind, start)
    if low is None:
        return None
    return low, None if end is None else _moment_literal(kind, end)


def field_filter(
    spec_field: SpecField, kind: str | None, value: Any, nulls_known: bool
) -> str | None:
    """A filter on the source column selecting (at least) the rows of partition value `value`
    of `spec_field`, or None where there is none (bucket, unknown transforms and types).
    `kind` is the source column's type; a null stands for null source values only when
    `nulls_known` (else the file's own spec may not have had the field)."""
    transform = spec_field.transform
    if kind is None or transform not in _FILTERABLE:
        return None
    column = spec_field.quoted_column
    if value is None:
        return f"{column} IS NULL" if nulls_known else None
    if transform == "identity":
        literal = _value_literal(kind, value)
        return None if literal is None else f"{column} = {literal}"
    if transform in ("years", "months", "days", "hours"):
        bounds = _time_range(transform, kind, value)
        if bounds is None:
            return None
        low, high = bounds
        return f"{column} >= {low}" + ("" if high is None else f" AND {column} < {high}")
    # truncate
    width = spec_field.param or 0
    if width < 1:
        return None
    if kind == "string":
        # Iceberg truncates to `width` code points: a shorter value is the whole string.
        prefix = str(value)
        if len(prefix) < width:
            return f"{column} = {string_literal(prefix)}"
        return f"startswith({column}, {string_literal(prefix)})"
    if kind in _INTEGER_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        # Near the type's end Iceberg's truncate wraps around (truncate(10) of the smallest
        # int is 2147483646): no range there.
        if value + width >= _INTEGER_RANGES[kind]:
            return None
        return f"{column} >= {value} AND {column} < {value + width}"
    decimal_type = _DECIMAL.match(kind)
    if decimal_type and _plain_number(value) is not None:
        precision, scale = int(decimal_type.group(1)), int(decimal_type.group(2))
        low_value = Decimal(value).quantize(Decimal(1).scaleb(-scale))
        high_value = low_value + Decimal(width).scaleb(-scale)
        fits = len(high_value.as_tuple().digits) <= precision or high_value < 0
        upper = f" AND {column} < {format(high_value, 'f')}BD" if fits else ""
        return f"{column} >= {format(low_value, 'f')}BD{upper}"
    return None


@dataclass(frozen=True)
class ScopeFilter:
    """rewrite_data_files' `where` for a run's partitions."""

    where: str | None  # None: no partition could be narrowed, the rewrite covers the table
    left_out: tuple[str, ...]  # spec fields (as DESCRIBE prints them) some partition lacks


def run_filter(
    fields: Sequence[SpecField],
    columns: Mapping[str, str],
    partitions: Sequence[tuple[Mapping[str, Any], bool]],
) -> ScopeFilter:
    """The OR, over the run's partitions (each its tuple by field name and whether a null in
    it means a null value, see `_run_scope`), of a filter per current spec field; a field
    without a filter is left out (a superset)."""
    terms: list[str] = []
    left_out: list[str] = []
    whole_table = False
    for values, nulls_known in partitions:
        parts: list[str] = []
        for spec_field in fields:
            name = spec_field.name
            found = None
            if name is not None and name in values:
                kind = _column_type(columns, spec_field)
                found = field_filter(spec_field, kind, values[name], nulls_known)
            if found is None:
                if spec_field.text not in left_out:
                    left_out.append(spec_field.text)
            else:
                parts.append(found)
        if not parts:
            whole_table = True
            continue
        term = " AND ".join(parts)
        if term not in terms:
            terms.append(term)
    if whole_table or not terms:
        return ScopeFilter(None, tuple(left_out))
    where = terms[0] if len(terms) == 1 else " OR ".join(f"({t})" for t in terms)
    return ScopeFilter(where, tuple(left_out))


@dataclass(frozen=True)
class RunChoice:
    """Which invocation `scope: run` means on a table."""

    invocation: str | None  # None: the whole table instead
    label: str  # names the invocation in the line, or says why the whole table


def choose_run(
    this_invocation: str | None, main_line: Sequence[tuple[int, str | None, str | None]]
) -> RunChoice:
    """After a model's build, the invocation that built it (`this_invocation`). In
    `lakehouse_maintain`, which writes nothing itself: the invocation of the table's last
    write, from `main_line` (main's snapshots, newest first: id, operation, dbt invocation
    id). Snapshots of `replace` (compaction, manifest rewrites: Iceberg procedures, whose
    commits carry no dbt invocation id) change no row and are passed over. A last write
    without an invocation id (written outside dbt): the whole table."""
    if this_invocation:
        return RunChoice(this_invocation, f"invocation {this_invocation[:8]}…")
    if not main_line:
        return RunChoice(None, "the table has no snapshot yet")
    rewrites = 0
    for snapshot_id, operation, invocation in main_line:
        if operation == "replace":
            rewrites += 1
            continue
        if not invocation:
            return RunChoice(
                None,
                f"its last write (snapshot {snapshot_id}) carries no {INVOCATION_KEY} "
                "(written outside dbt, or under Spark Connect, where commits do not name "
                "their run)",
            )
        made = (
            "made the current snapshot"
            if not rewrites
            else f"made snapshot {snapshot_id}, the last write before {rewrites} file rewrite(s)"
        )
        return RunChoice(invocation, f"invocation {invocation} ({made})")
    return RunChoice(None, "main's snapshots left after expiry are all file rewrites")
