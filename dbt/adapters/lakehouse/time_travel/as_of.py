"""`as_of` (the `lakehouse.as_of` macro, a source's `config: {as_of: ...}`): the point of a
table's history a query reads, parsed from what the user wrote, rendered as Spark's clause, and
checked against that history before the node's SQL runs, so a bad point fails naming the table
and what it does have instead of Iceberg's bare "Cannot find a snapshot older than ...".

The rules are Iceberg 1.10's: TIMESTAMP AS OF reads the last entry of the table's snapshot log
(`history`) made current at or before the time; VERSION AS OF takes any snapshot id, branch or
tag. A table rebuilt with CREATE OR REPLACE keeps its old snapshots and log, so time travel
reaches them. Also the table names `lakehouse_rollback` and `lakehouse.as_of` accept, and the
package's error. The checks are pure functions of the rows they need (history.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.lakehouse.iceberg.metadata import Ref, Snapshot, format_millis
from dbt.adapters.lakehouse.iceberg.table_name import string_literal
from dbt.adapters.lakehouse.invocation import invoked_command
from dbt.adapters.lakehouse.time_travel.history import (
    SHOWN,
    LogEntry,
    Query,
    int_or_none,
    listed,
)

AS_OF_KEYS = ("timestamp", "snapshot_id", "ref_name")
# Commands that render a node without running it: `as_of` is not checked there, so they need
# no Spark and no table.
UNCHECKED_COMMANDS = frozenset({"compile", "generate", "parse", "list", "ls"})


def checks_now() -> bool:
    """Whether this command runs the nodes it renders, so `as_of` points are checked."""
    return invoked_command() not in UNCHECKED_COMMANDS


class TimeTravelError(DbtRuntimeError):
    """A time travel point or a rollback target the table's history does not allow."""

    CODE = 10106
    MESSAGE = "Lakehouse time travel error"


@dataclass(frozen=True)
class AsOf:
    """One point of a table's history: a time, a snapshot id, or a branch or tag name."""

    key: str  # one of AS_OF_KEYS
    value: str | int  # timestamp text as rendered, snapshot id, or ref name

    @property
    def clause(self) -> str:
        if self.key == "timestamp":
            return f"TIMESTAMP AS OF {string_literal(str(self.value))}"
        if self.key == "snapshot_id":
            return f"VERSION AS OF {int(self.value)}"
        return f"VERSION AS OF {string_literal(str(self.value))}"

    def describe(self) -> str:
        if self.key == "snapshot_id":
            return f"snapshot_id {self.value}"
        return f"{self.key} {str(self.value)!r}"

    def as_config(self) -> dict[str, str | int]:
        return {self.key: self.value}


# ---- parsing what the user wrote ---------------------------------------------------------------


def parse_as_of(spec: Any, where: str) -> AsOf:
    """`{timestamp|snapshot_id|ref_name: value}` (exactly one of them set) as an AsOf.

    `where` names the caller in messages, e.g. "lakehouse.as_of(...)" or "source raw.orders".
    """
    accepted = ", ".join(AS_OF_KEYS)
    if not isinstance(spec, Mapping):
        raise CompilationError(
            f"`as_of` of {where} must be a mapping with exactly one of {accepted}; got {spec!r}."
        )
    unknown = sorted(str(k) for k in spec if k not in AS_OF_KEYS)
    if unknown:
        raise CompilationError(
            f"`as_of` of {where} has unknown key(s) {', '.join(map(repr, unknown))}. "
            f"Accepted: exactly one of {accepted}."
        )
    given = [key for key in AS_OF_KEYS if spec.get(key) is not None]
    if len(given) != 1:
        got = "none of them" if not given else " and ".join(given)
        raise CompilationError(f"`as_of` of {where} needs exactly one of {accepted}; got {got}.")
    key = given[0]
    value = spec[key]
    if key == "timestamp":
        return AsOf(key, normalize_timestamp(value, where))
    if key == "snapshot_id":
        snapshot_id = parse_snapshot_id(value)
        if snapshot_id is None:
            raise CompilationError(
                f"`as_of` of {where}: snapshot_id must be a whole number (a snapshot's id "
                f"from `<table>.snapshots`); got {value!r}."
            )
        return AsOf(key, snapshot_id)
    if not isinstance(value, str) or not value.strip():
        raise CompilationError(
            f"`as_of` of {where}: ref_name must be a branch or tag name; got {value!r}."
        )
    return AsOf(key, value.strip())


def parse_snapshot_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def normalize_timestamp(value: Any, where: str) -> str:
    """A timestamp as the literal Spark reads: `YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]`.

    Without an offset it is in the session time zone, which the adapter sets to UTC.
    """
    parsed: dt.datetime | None = None
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, dt.date):
        parsed = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise CompilationError(
                f"`as_of` of {where}: timestamp {value!r} is not a timestamp. Expected "
                "'YYYY-MM-DD HH:MM:SS' (UTC unless it carries an offset such as +02:00), or "
                "'YYYY-MM-DD'."
            ) from None
    if parsed is None:
        raise CompilationError(
            f"`as_of` of {where}: timestamp must be text such as '2026-11-01 00:00:00'; "
            f"got {value!r}."
        )
    return parsed.isoformat(sep=" ")


_PART = r"(?:`(?:[^`]|``)+`|[^.`\s]+)"
_TABLE_NAME = re.compile(rf"\s*({_PART})\.({_PART})(?:\.({_PART}))?\s*")


def parse_table_name(name: Any, default_catalog: str) -> tuple[str, str, str]:
    """`schema.table` (in the target's catalog) or `catalog.schema.table`; backticks allowed."""
    match = _TABLE_NAME.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise CompilationError(
            "Table name must be <schema>.<table> (in the target's catalog) or "
            f"<catalog>.<schema>.<table>; got {name!r}."
        )
    parts = [
        part[1:-1].replace("``", "`") if part.startswith("`") else part
        for part in match.groups()
        if part is not None
    ]
    if len(parts) == 2:
        return default_catalog, parts[0], parts[1]
    return parts[0], parts[1], parts[2]


# ---- checking an as_of point ------------------------------------------------------------------


def check_as_of(query: Query, table: str, as_of: AsOf) -> None:
    """Fail, naming the table, unless the table has the point `as_of` reads."""
    if as_of.key == "timestamp":
        rows = query(
            f"select unix_millis(cast({string_literal(str(as_of.value))} as timestamp)), "
            f"snapshot_id, unix_millis(made_current_at) from {table}.history"
        )
        log = [LogEntry(int(r[1]), int(r[2])) for r in rows]
        at_ms = int(rows[0][0]) if rows and rows[0][0] is not None else None
        timestamp_problem(table, as_of, at_ms, log)
    elif as_of.key == "snapshot_id":
        rows = query(
            f"select snapshot_id, unix_millis(committed_at), parent_id from {table}.snapshots"
        )
        snapshots = [
            Snapshot(snapshot_id=int(r[0]), committed_ms=int(r[1]), parent_id=int_or_none(r[2]))
            for r in rows
        ]
        snapshot_problem(table, int(as_of.value), snapshots)
    else:
        rows = query(f"select name, type, snapshot_id from {table}.refs")
        ref_problem(
            table, str(as_of.value), [Ref(str(r[0]), str(r[1]).lower(), int(r[2])) for r in rows]
        )


def timestamp_problem(table: str, as_of: AsOf, at_ms: int | None, log: list[LogEntry]) -> None:
    if not log:
        raise TimeTravelError(
            f"Table {table} has no snapshot yet, so there is nothing to read as of "
            f"{as_of.value}. Fix: build the table first, or drop `as_of`."
        )
    oldest = min(log, key=lambda e: e.made_current_ms)
    if at_ms is not None and at_ms < oldest.made_current_ms:
        raise TimeTravelError(
            f"Table {table} has no snapshot as of {as_of.value}: its oldest snapshot "
            f"({oldest.snapshot_id}) dates from {format_millis(oldest.made_current_ms)}. "
            "Fix: use a timestamp at or after that (UTC unless it carries an offset)."
        )


def snapshot_problem(table: str, snapshot_id: int, snapshots: list[Snapshot]) -> None:
    if any(s.snapshot_id == snapshot_id for s in snapshots):
        return
    newest = sorted(snapshots, key=lambda s: s.committed_ms, reverse=True)
    have = listed((s.describe() for s in newest[:SHOWN]), len(newest)) or "none"
    raise TimeTravelError(
        f"Table {table} has no snapshot {snapshot_id} (expired, or from another table). "
        f"Its newest snapshots: {have}."
    )


def ref_problem(table: str, ref_name: str, refs: list[Ref]) -> None:
    if any(r.name == ref_name for r in refs):
        return
    have = ", ".join(r.describe() for r in sorted(refs, key=lambda r: r.name)) or "none"
    raise TimeTravelError(
        f"Table {table} has no branch or tag {ref_name!r}. Its branches and tags: {have}."
    )
