"""A model's `partition_by` config, parsed into a validated Iceberg partition spec and its DDL.

Entries are checked all at once before anything is written, so a user sees every problem in
one error naming the model and the entry as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.exceptions import PartitionConfigError

# Iceberg's own spellings, mapped to the plural forms Spark DDL documents.
TRANSFORM_ALIASES = {
    "identity": "identity",
    "years": "years",
    "year": "years",
    "months": "months",
    "month": "months",
    "days": "days",
    "day": "days",
    "date": "days",
    "hours": "hours",
    "hour": "hours",
    "date_hour": "hours",
    "bucket": "bucket",
    "truncate": "truncate",
}
TIME_TRANSFORMS = frozenset({"years", "months", "days", "hours"})
PARAMETRIZED = frozenset({"bucket", "truncate"})
_ICEBERG_NAMES = {"years": "year", "months": "month", "days": "day", "hours": "hour"}

ACCEPTED = (
    "Accepted entries: 'col', 'identity(col)', 'years(col)', 'months(col)', 'days(col)', "
    "'hours(col)' (singular year/month/day/hour also), 'bucket(n, col)', "
    "'truncate(width, col)', or a mapping such as {field: id, transform: bucket, n: 16}."
)

_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.DOTALL)
_DICT_KEYS = {"field", "column", "transform", "n", "width", "buckets"}


@dataclass(frozen=True)
class PartitionField:
    transform: str
    column: str
    param: int | None = None
    source: str = ""

    def _quoted_column(self) -> str:
        return ".".join("`{}`".format(part.replace("`", "``")) for part in _split_path(self.column))

    def render(self) -> str:
        column = self._quoted_column()
        if self.transform == "identity":
            return column
        if self.transform in PARAMETRIZED:
            return f"{self.transform}({self.param}, {column})"
        return f"{self.transform}({column})"

    def iceberg_transform(self) -> str:
        if self.transform in PARAMETRIZED:
            return f"{self.transform}[{self.param}]"
        return _ICEBERG_NAMES.get(self.transform, self.transform)


class _EntryError(Exception):
    pass


def _split_path(column: str) -> list[str]:
    """`a.b` or `` `odd.name`.b `` into its parts, honouring backtick quoting."""
    parts: list[str] = []
    current = ""
    quoted = False
    i = 0
    while i < len(column):
        char = column[i]
        if char == "`":
            if quoted and i + 1 < len(column) and column[i + 1] == "`":
                current += "`"
                i += 2
                continue
            quoted = not quoted
        elif char == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    if quoted:
        raise _EntryError(f"unbalanced backtick in column {column!r}")
    parts.append(current)
    return [p.strip() if not p.startswith(" ") else p for p in parts]


def _column(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise _EntryError("the column is empty")
    column = text.strip()
    parts = _split_path(column)
    if any(not part for part in parts):
        raise _EntryError(f"malformed column {column!r}")
    if any(ch in column.replace("`", "") for ch in "()") and "`" not in column:
        raise _EntryError(f"malformed column {column!r}")
    return column


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise _EntryError(f"{what} must be a positive integer, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    else:
        raise _EntryError(f"{what} must be a positive integer, got {value!r}")
    if number <= 0:
        raise _EntryError(f"{what} must be a positive integer, got {number}")
    return number


def _looks_like_int(text: str) -> bool:
    return bool(re.fullmatch(r"\s*[+-]?\d+(\.\d+)?\s*", text))


def _build(transform_name: str, args: list[Any], source: str) -> PartitionField:
    transform = TRANSFORM_ALIASES.get(transform_name.strip().lower())
    if transform is None:
        raise _EntryError(f"unknown transform {transform_name.strip()!r}")
    if transform in PARAMETRIZED:
        what = "bucket count" if transform == "bucket" else "truncate width"
        if len(args) != 2:
            form = "bucket(n, col)" if transform == "bucket" else "truncate(width, col)"
            raise _EntryError(f"{transform} takes 2 arguments as {form}, got {len(args)}")
        first, second = args
        if (
            isinstance(first, str)
            and not _looks_like_int(first)
            and isinstance(second, str)
            and _looks_like_int(second)
        ):
            order = "(n, column)" if transform == "bucket" else "(width, column)"
            raise _EntryError(f"arguments are in the wrong order: {transform} takes {order}")
        return PartitionField(transform, _column(second), _positive_int(first, what), source)
    if len(args) != 1:
        raise _EntryError(f"{transform} takes 1 argument (the column), got {len(args)}")
    return PartitionField(transform, _column(args[0]), None, source)


def _split_args(text: str) -> list[str]:
    args: list[str] = []
    depth = 0
    quoted = False
    current = ""
    for char in text:
        if char == "`":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
            if depth < 0:
                raise _EntryError("unbalanced parentheses")
        if char == "," and depth == 0 and not quoted:
            args.append(current.strip())
            current = ""
        else:
            current += char
    if depth != 0 or quoted:
        raise _EntryError("unbalanced parentheses")
    args.append(current.strip())
    return [] if args == [""] else args


def _parse_text(entry: str) -> PartitionField:
    source = entry
    if not entry.strip():
        raise _EntryError("the entry is empty")
    match = _CALL.match(entry)
    if match:
        return _build(match.group(1), _split_args(match.group(2)), source)
    if "(" in entry.replace("`", "") or ")" in entry.replace("`", ""):
        if "`" not in entry:
            raise _EntryError("malformed entry (unbalanced parentheses)")
    return PartitionField("identity", _column(entry), None, source)


def _parse_mapping(entry: dict[str, Any]) -> PartitionField:
    source = repr(entry)
    unknown = sorted(set(map(str, entry)) - _DICT_KEYS)
    if unknown:
        raise _EntryError(
            f"unknown key(s) {', '.join(unknown)}; a mapping takes field (or column), "
            "transform, n (bucket count) and width (truncate width)"
        )
    column = entry.get("field", entry.get("column"))
    transform = str(entry.get("transform") or "identity")
    canonical = TRANSFORM_ALIASES.get(transform.strip().lower())
    if canonical == "bucket":
        n = entry.get("n", entry.get("buckets"))
        if n is None:
            raise _EntryError("bucket needs n, the bucket count")
        return PartitionField("bucket", _column(column), _positive_int(n, "bucket count"), source)
    if canonical == "truncate":
        width = entry.get("width", entry.get("n"))
        if width is None:
            raise _EntryError("truncate needs width")
        return PartitionField(
            "truncate", _column(column), _positive_int(width, "truncate width"), source
        )
    return _build(transform, [column], source)


def parse_partition_by(raw: object, model_name: str = "<model>") -> list[PartitionField]:
    """Every entry parsed, or one PartitionConfigError listing each bad entry."""
    if raw is None or raw == [] or raw == "":
        return []
    entries: list[Any]
    if isinstance(raw, (str, dict)):
        entries = [raw]
    elif isinstance(raw, list):
        entries = list(raw)
    else:
        _raise(model_name, [f"partition_by must be a list, a string or a mapping, got {raw!r}"])
    fields: list[PartitionField] = []
    problems: list[str] = []
    for entry in entries:
        try:
            if isinstance(entry, str):
                fields.append(_parse_text(entry))
            elif isinstance(entry, dict):
                fields.append(_parse_mapping(entry))
            else:
                raise _EntryError("an entry must be a string or a mapping")
        except _EntryError as exc:
            problems.append(f"entry {entry!r}: {exc}")
    problems.extend(_redundancies(fields))
    if problems:
        _raise(model_name, problems)
    return fields


def _redundancies(fields: list[PartitionField]) -> list[str]:
    problems: list[str] = []
    seen: dict[tuple[str, str, int | None], PartitionField] = {}
    time_by_column: dict[str, PartitionField] = {}
    for field in fields:
        key = (field.transform, field.column.lower(), field.param)
        if key in seen:
            problems.append(
                f"entry {field.source!r}: partitions {field.column!r} the same way as "
                f"{seen[key].source!r}"
            )
            continue
        seen[key] = field
        if field.transform in TIME_TRANSFORMS:
            other = time_by_column.get(field.column.lower())
            if other is not None:
                problems.append(
                    f"entry {field.source!r}: {field.column!r} already has the time transform "
                    f"{other.source!r}; Iceberg allows one of years/months/days/hours per column"
                )
            else:
                time_by_column[field.column.lower()] = field
    return problems


def _raise(model_name: str, problems: list[str]) -> Any:
    lines = "\n".join(f"  - {p}" for p in problems)
    raise PartitionConfigError(
        f"Invalid partition_by for model '{model_name}':\n{lines}\n{ACCEPTED}"
    )


def validate_partition_columns(
    fields: list[PartitionField], columns: Iterable[str], model_name: str
) -> None:
    available = [str(c) for c in columns]
    known = {c.lower() for c in available}
    problems = [
        f"entry {field.source!r}: column {_split_path(field.column)[0]!r} is not in the model"
        for field in fields
        if _split_path(field.column)[0].lower() not in known
    ]
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise PartitionConfigError(
            f"Invalid partition_by for model '{model_name}':\n{lines}\n"
            f"The model's columns are: {', '.join(available)}."
        )


def same_field_text(text: str) -> str:
    """A partition field's text in one spelling, so a rendered field and DESCRIBE's compare
    equal (no spaces or backticks, lower case)."""
    return re.sub(r"\s+", "", text.replace("`", "")).lower()


def render_partition_clause(fields: list[PartitionField]) -> str:
    if not fields:
        return ""
    return "partitioned by (" + ", ".join(field.render() for field in fields) + ")"


def partition_clause(partition_by: Any, columns: list[str] | None, model_name: str) -> str:
    """`partition_by` validated (against the model's columns when known) and rendered."""
    fields = parse_partition_by(partition_by, model_name)
    if fields and columns is not None:
        validate_partition_columns(fields, columns, model_name)
    return render_partition_clause(fields)
