"""dbt's seed type inference, restated as value shapes Spark can test in one pass.

dbt infers a seed column's type with agate: the first type of `build_type_tester`'s list
(Integer, Number, Date, DateTime, ISODateTime, Boolean, Text) that casts every value of the
column. Running that in Python costs tens of seconds per million rows. Instead every value is
put in one shape by patterns that Spark evaluates in the JVM, and for each shape it is known
which of those types cast every value of that shape (`ACCEPTED_BY`, checked against agate's own
casts in the unit tests). A column's type is then the first type that accepts every shape
present in it.

Shapes are deliberately narrow: a value is INTEGER, DATE, ... only when its text is also what
agate would hand on after casting (no padding, signs, separators or currency symbols), so
Spark's cast of the raw text gives the same value as the agate path. Values outside every shape
are OTHER; a column holding OTHER values is settled by agate itself on those values, or the seed
falls back to the agate path.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import agate
from dbt_common.clients.agate_helper import build_type_tester

if TYPE_CHECKING:  # pyarrow (with numpy) costs ~0.3 s to import: only a seed's load needs it
    import pyarrow as pa

# The types in dbt's preference order; a column gets the first one that casts all its values.
TYPE_ORDER: tuple[agate.data_types.DataType, ...] = tuple(build_type_tester(())._possible_types)
NULL_TEXTS = ("", "null")


class Shape(enum.IntEnum):
    NULL = 0  # what agate reads as NULL: '' or 'null', any case, after str.strip()
    INTEGER = 1
    DECIMAL = 2
    DATE = 3
    DATETIME = 4
    BOOLEAN = 5
    TEXT = 6  # holds a character none of the non-text types can parse
    OTHER = 7  # anything else: agate decides


# Regular expressions that mean the same in Python (re.fullmatch), RE2 and Java (`anchored`).
SHAPE_PATTERNS: dict[Shape, str] = {
    Shape.INTEGER: r"-?[0-9]+",
    Shape.DECIMAL: r"-?[0-9]+\.[0-9]+",
    Shape.DATE: r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    Shape.DATETIME: r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}",
    Shape.BOOLEAN: r"[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]",
}


def _type_named(name: str) -> agate.data_types.DataType:
    return next(t for t in TYPE_ORDER if type(t).__name__ == name)


INTEGER_T, NUMBER_T, DATE_T, DATETIME_T, ISODATETIME_T, BOOLEAN_T, TEXT_T = (
    _type_named(name)
    for name in ("Integer", "Number", "Date", "DateTime", "ISODateTime", "Boolean", "Text")
)

# Which types cast every value of a shape. dbt's Integer casts only Python ints, never text.
ACCEPTED_BY: dict[Shape, frozenset[agate.data_types.DataType]] = {
    Shape.NULL: frozenset(TYPE_ORDER) - {INTEGER_T},
    Shape.INTEGER: frozenset({NUMBER_T, TEXT_T}),
    Shape.DECIMAL: frozenset({NUMBER_T, TEXT_T}),
    Shape.DATE: frozenset({DATE_T, TEXT_T}),
    Shape.DATETIME: frozenset({DATETIME_T, TEXT_T}),
    Shape.BOOLEAN: frozenset({BOOLEAN_T, TEXT_T}),
    Shape.TEXT: frozenset({TEXT_T}),
}


def _ranges(chars: Iterable[str]) -> list[tuple[int, int]]:
    points = sorted({ord(c) for c in chars})
    ranges: list[tuple[int, int]] = []
    for point in points:
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return ranges


def char_class(chars: Iterable[str], negate: bool = False) -> str:
    """A character class in the syntax Java and RE2 (Arrow's regular expressions) share."""
    body = "".join(
        f"\\x{{{low:X}}}" if low == high else f"\\x{{{low:X}}}-\\x{{{high:X}}}"
        for low, high in _ranges(chars)
    )
    return f"[{'^' if negate else ''}{body}]"


@functools.cache
def _all_chars() -> list[str]:
    return [chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]


@functools.cache
def py_whitespace() -> str:
    # str.strip() removes exactly these; Java's \s and RE2's know fewer, so they are spelled out.
    return "".join(c for c in _all_chars() if c.isspace())


@functools.cache
def _parseable() -> frozenset[str]:
    # Every character the non-text types can read: digits of any script (Decimal and strptime
    # accept them), signs, separators, agate's currency symbols, the letters of true/false,
    # nan/inf/infinity, exponents and ISO 8601's T/W/Z. A value with any other character is
    # TEXT.
    return frozenset(
        set(py_whitespace())
        | {c for c in _all_chars() if c.isdecimal() or c.isdigit()}
        | set("+-.,%_:")
        | set(NUMBER_T.currency_symbols)
        | set("aefilnrstuwyz")
        | set("AEFILNRSTUWYZ")
    )


@functools.cache
def null_pattern() -> str:
    """'' or 'null' in any case once str.strip() has run, as one anchored-ready pattern."""
    blank = char_class(py_whitespace())
    return f"{blank}*(?:[Nn][Uu][Ll][Ll])?{blank}*"


@functools.cache
def unparseable_class() -> str:
    return char_class(_parseable(), negate=True)


@functools.cache
def _py_unparseable() -> re.Pattern[str]:
    return re.compile("[^" + "".join(re.escape(c) for c in sorted(_parseable())) + "]")


def anchored(pattern: str) -> str:
    # `\z`, not `$`: Java's `$` also matches before a final line break. RE2 knows `\z` too.
    return f"^(?:{pattern})\\z"


def valid_date_parts(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def shape_of(value: str | None) -> Shape:
    """One value's shape: the definition `column_shapes` applies to a whole column."""
    if value is None or value.strip().lower() in NULL_TEXTS:
        return Shape.NULL
    for shape, pattern in SHAPE_PATTERNS.items():
        if re.fullmatch(pattern, value):
            if shape in (Shape.DATE, Shape.DATETIME):
                if not valid_date_parts(int(value[0:4]), int(value[5:7]), int(value[8:10])):
                    continue
                if shape is Shape.DATETIME and not (
                    int(value[11:13]) <= 23 and int(value[14:16]) <= 59 and int(value[17:19]) <= 59
                ):
                    continue
            return shape
    if _py_unparseable().search(value):
        return Shape.TEXT
    return Shape.OTHER


def column_type(
    shapes: Iterable[Shape], other_values: Sequence[str] = ()
) -> agate.data_types.DataType:
    """The type agate would infer for a column holding these shapes (and these OTHER values)."""
    present = set(shapes)
    for candidate in TYPE_ORDER:
        if all(candidate in ACCEPTED_BY[s] for s in present if s is not Shape.OTHER) and all(
            candidate.test(value) for value in other_values
        ):
            return candidate
    return TEXT_T


def null_mask(values: pa.Array) -> pa.Array:
    """Which values of a string column agate reads as NULL (shape_of's Shape.NULL)."""
    import pyarrow.compute as pc

    return pc.match_substring_regex(pc.fill_null(values, ""), anchored(null_pattern()))


def column_shapes(values: pa.Array, max_other: int) -> tuple[set[Shape], list[str] | None]:
    """The shapes present in a string column (shape_of over every value) and its distinct
    OTHER values (None when there are more than max_other), in Arrow's kernels.

    Values are tested shape by shape and the matched ones dropped, so a typical column costs
    a few passes; once a TEXT value is seen the column can only be text, and the rest is only
    searched for NULLs (agate's Text takes any value).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    remaining = pc.fill_null(values, "")  # NULL and '' are both NULL to agate
    present: set[Shape] = set()

    def drop(mask: pa.Array) -> None:
        nonlocal remaining
        remaining = remaining.filter(pc.invert(mask))

    # Any order gives the same answer (the shapes exclude each other); testing first the
    # shapes of the column's first values usually settles it in one pass.
    leading = [shape_of(value) for value in remaining.slice(0, 100).to_pylist()]
    order = sorted(
        (Shape.NULL, Shape.TEXT, *SHAPE_PATTERNS),
        key=lambda shape: (-leading.count(shape), shape),
    )
    for shape in order:
        if len(remaining) == 0:
            return present, []
        if shape is Shape.NULL:
            mask = null_mask(remaining)
        elif shape is Shape.TEXT:
            mask = pc.match_substring_regex(remaining, unparseable_class())
        else:
            mask = pc.match_substring_regex(remaining, anchored(SHAPE_PATTERNS[shape]))
            if shape in (Shape.DATE, Shape.DATETIME) and pc.any(mask).as_py():
                # Few distinct dates even in long columns: the calendar check runs in Python.
                invalid = [
                    text
                    for text in pc.unique(remaining.filter(mask)).to_pylist()
                    if shape_of(text) is not shape
                ]
                if invalid:
                    mask = pc.and_(mask, pc.invert(pc.is_in(remaining, pa.array(invalid))))
        if pc.any(mask).as_py():
            present.add(shape)
            if shape is Shape.TEXT:
                # Still worth knowing: a column without NULLs needs no NULL test when loaded.
                if (
                    Shape.NULL not in order[: order.index(shape)]
                    and pc.any(null_mask(remaining)).as_py()
                ):
                    present.add(Shape.NULL)
                return present, None
            drop(mask)
    if len(remaining) == 0:
        return present, []
    present.add(Shape.OTHER)
    other = pc.unique(remaining)
    return present, (other.to_pylist() if len(other) <= max_other else None)
