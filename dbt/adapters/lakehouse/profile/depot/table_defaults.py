"""A depot's table defaults (`spec.tableFormats`, `spec.formatVersion`): their values and how
they are read, beside the depot model because a depot is parsed before any feature runs.

The depot package is the lowest layer: the features that act on these values (the Delta
mirror in delta_mirror/, format upgrades in models/format_version.py) import them from here,
so parsing a depot never climbs up into a feature package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt_common.exceptions import CompilationError

ICEBERG = "iceberg"
DELTA = "delta"
FORMATS = (ICEBERG, DELTA)
FORMAT_VERSIONS = (1, 2, 3)
FORMAT_VERSION_ACCEPTED = (
    "Accepted: 1, 2 or 3 (3: deletion vectors and row lineage; unset: Iceberg's 2)."
)


class DeltaConfigError(CompilationError):
    """A `table_formats` config, or a change to a dual-format table, Delta cannot take."""


class FormatVersionError(CompilationError):
    """A format_version that cannot be written, or a table that cannot be brought to it."""


def parse_table_formats(value: Any, owner: str) -> tuple[str, ...]:
    """`table_formats` checked: iceberg always, delta optional, nothing else."""
    accepted = "Accepted: [iceberg] (the default) or [iceberg, delta]."
    if value is None:
        return (ICEBERG,)
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise DeltaConfigError(f"table_formats of {owner} must be a list of names. {accepted}")
    lowered = [n.strip().lower() for n in names]
    unknown = [n for n in lowered if n not in FORMATS]
    if unknown:
        raise DeltaConfigError(
            f"table_formats of {owner} names {', '.join(map(repr, unknown))}. {accepted}"
        )
    if ICEBERG not in lowered:
        raise DeltaConfigError(
            f"table_formats of {owner} lacks iceberg: every table is an Iceberg table, the "
            f"Delta log is a second description of its files. {accepted}"
        )
    return tuple(f for f in FORMATS if f in lowered)


def parse_format_version(value: Any, where: str) -> int | None:
    """1, 2 or 3 from an int or a digit string; None when unset; anything else refused."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    # bool is an int in Python: `format_version: true` must not read as 1.
    if isinstance(value, int) and not isinstance(value, bool) and value in FORMAT_VERSIONS:
        return value
    if isinstance(value, str) and value.strip() in {str(v) for v in FORMAT_VERSIONS}:
        return int(value.strip())
    raise FormatVersionError(
        f"{where} is {value!r}, not an Iceberg format version. {FORMAT_VERSION_ACCEPTED}"
    )
