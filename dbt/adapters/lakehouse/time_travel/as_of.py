"""Time travel and rollback on Iceberg tables.

- `as_of` (the `lakehouse.as_of` macro, a source's `config: {as_of: ...}`): the point of a
  table's history a query reads, rendered as Spark's clause, and checked against that history
  before the node's SQL runs, so a bad point fails naming the table and what it does have
  instead of Iceberg's bare "Cannot find a snapshot older than ...".
- `lakehouse_rollback`: moves `main` back to an earlier snapshot of its own line. Anything
  else is refused with the reason before the procedure runs, so a refusal changes nothing.

The rules are Iceberg 1.10's: TIMESTAMP AS OF reads the last entry of the table's snapshot log
(`history`) made current at or before the time; VERSION AS OF takes any snapshot id, branch or
tag; rollback_to_snapshot needs an ancestor of main's current snapshot; rollback_to_timestamp
takes the newest such ancestor committed strictly before the time. A table rebuilt with
CREATE OR REPLACE keeps its old snapshots and log (time travel reaches them) but starts a new
line of ancestors (rollback does not).

The checks are pure functions of the rows they need; the readers take a `Query` (the adapter
runs it through the cursor, so engine errors are mapped as for any statement).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.lakehouse.iceberg.table_name import TableName, string_literal

Query = Callable[[str], list[tuple[Any, ...]]]

AS_OF_KEYS = ("timestamp", "snapshot_id", "ref_name")
# Commands that render a node without running it: `as_of` is not checked there, so they need
# no Spark and no table.
UNCHECKED_COMMANDS = frozenset({"compile", "generate", "parse", "list", "ls"})
_SHOWN = 5  # snapshots or refs listed in a message


def checks_now() -> bool:
    """Whether this command runs the nodes it renders, so `as_of` points are checked."""
    from dbt.adapters.lakehouse.connections import invoked_command

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
        snapshot_id = _snapshot_id(value)
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


def _snapshot_id(value: Any) -> int | None:
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


def parse_rollback_target(to: Any) -> AsOf:
    """`to:` of lakehouse_rollback: a snapshot id (a whole number) or a timestamp."""
    snapshot_id = _snapshot_id(to)
    if snapshot_id is not None:
        return AsOf("snapshot_id", snapshot_id)
    if to is None or isinstance(to, bool) or not isinstance(to, (str, dt.date)):
        raise CompilationError(
            "lakehouse_rollback needs `to:`, a snapshot id (a whole number from "
            "`<table>.snapshots`) or a timestamp such as '2026-11-01 00:00:00' (UTC); "
            f"got {to!r}."
        )
    return AsOf("timestamp", normalize_timestamp(to, "lakehouse_rollback `to:`"))


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


# ---- a table's history ------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    committed_ms: int  # epoch milliseconds
    parent_id: int | None

    def describe(self) -> str:
        return f"snapshot {self.snapshot_id} (committed {format_millis(self.committed_ms)})"


@dataclass(frozen=True)
class LogEntry:
    """An entry of the snapshot log: when a snapshot became main's current one."""

    snapshot_id: int
    made_current_ms: int


@dataclass(frozen=True)
class Ref:
    name: str
    kind: str  # "branch" or "tag"
    snapshot_id: int

    def describe(self) -> str:
        return f"{self.name} ({self.kind}, snapshot {self.snapshot_id})"


@dataclass(frozen=True)
class TableHistory:
    table: str  # the table's name as messages show it
    snapshots: Mapping[int, Snapshot]
    log: tuple[LogEntry, ...]  # oldest first
    refs: tuple[Ref, ...]

    @property
    def main(self) -> Snapshot | None:
        for ref in self.refs:
            if ref.name == "main" and ref.kind == "branch":
                return self.snapshots.get(ref.snapshot_id)
        return None

    def line(self, snapshot_id: int) -> list[Snapshot]:
        """The snapshot and its ancestors, newest first (as far as they are kept)."""
        found: list[Snapshot] = []
        current = self.snapshots.get(snapshot_id)
        while current is not None and current not in found:
            found.append(current)
            current = self.snapshots.get(current.parent_id) if current.parent_id else None
        return found


def format_millis(millis: int) -> str:
    moment = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc)  # noqa: UP017 (3.10)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{millis % 1000:03d} UTC"


def _listed(items: Iterable[str], total: int) -> str:
    shown = list(items)
    more = f", and {total - len(shown)} more" if total > len(shown) else ""
    return "; ".join(shown) + more


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
        snapshots = [Snapshot(int(r[0]), int(r[1]), _int_or_none(r[2])) for r in rows]
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
    have = _listed((s.describe() for s in newest[:_SHOWN]), len(newest)) or "none"
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


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


# ---- rollback ---------------------------------------------------------------------------------


def read_history(query: Query, table: str) -> TableHistory:
    snapshots = {
        int(r[0]): Snapshot(int(r[0]), int(r[1]), _int_or_none(r[2]))
        for r in query(
            f"select snapshot_id, unix_millis(committed_at), parent_id from {table}.snapshots"
        )
    }
    log = tuple(
        sorted(
            (
                LogEntry(int(r[0]), int(r[1]))
                for r in query(
                    f"select snapshot_id, unix_millis(made_current_at) from {table}.history"
                )
            ),
            key=lambda e: e.made_current_ms,
        )
    )
    refs = tuple(
        Ref(str(r[0]), str(r[1]).lower(), int(r[2]))
        for r in query(f"select name, type, snapshot_id from {table}.refs")
    )
    return TableHistory(table, snapshots, log, refs)


def timestamp_millis(query: Query, timestamp: str) -> int:
    """A timestamp literal in epoch milliseconds, read by Spark as its procedures read it."""
    return int(query(f"select unix_millis(cast({string_literal(timestamp)} as timestamp))")[0][0])


@dataclass(frozen=True)
class RollbackPlan:
    table: str
    before: Snapshot
    target: Snapshot

    @property
    def changes(self) -> bool:
        return self.before.snapshot_id != self.target.snapshot_id


def plan_rollback(history: TableHistory, to: AsOf, at_ms: int | None = None) -> RollbackPlan:
    """The snapshot main moves back to, or a refusal naming the table and the reason.

    `at_ms`: the timestamp of a `to: <timestamp>` in epoch milliseconds (timestamp_millis).
    """
    table = history.table
    main = history.main
    if main is None:
        raise TimeTravelError(
            f"lakehouse_rollback refused: table {table} has no main branch (no snapshot yet, "
            "or created by an audited run that was never published). Nothing was changed."
        )
    line = history.line(main.snapshot_id)
    recent = _listed((s.describe() for s in line[:_SHOWN]), len(line))
    if to.key == "snapshot_id":
        target = history.snapshots.get(int(to.value))
        if target is None:
            raise TimeTravelError(
                f"lakehouse_rollback refused: table {table} has no snapshot {to.value} "
                f"(expired, or from another table). Nothing was changed. main's line, newest "
                f"first: {recent}."
            )
        if target not in line:
            raise TimeTravelError(
                f"lakehouse_rollback refused: snapshot {target.snapshot_id} of table {table} is "
                f"not an ancestor of main's current {main.describe()}: "
                f"{why_not_ancestor(history, target, line)}. Nothing was changed. Fix: roll back "
                f"to a snapshot of main's line, newest first: {recent}."
            )
        return RollbackPlan(table, main, target)
    assert at_ms is not None, "a timestamp target needs its milliseconds"
    older = [s for s in line if s.committed_ms < at_ms]
    if not older:
        oldest = line[-1]
        raise TimeTravelError(
            f"lakehouse_rollback refused: no snapshot of main's line in table {table} was "
            f"committed before {to.value}; the oldest is {oldest.describe()}. Nothing was "
            "changed. Fix: use a later timestamp."
        )
    return RollbackPlan(table, main, max(older, key=lambda s: s.committed_ms))


def why_not_ancestor(history: TableHistory, target: Snapshot, line: list[Snapshot]) -> str:
    """Why main's current state does not descend from `target`, as far as metadata tells."""
    holders = [
        ref
        for ref in sorted(history.refs, key=lambda r: r.name)
        if ref.name != "main" and target in history.line(ref.snapshot_id)
    ]
    if holders:
        named = ", ".join(f"{r.kind} {r.name!r}" for r in holders)
        return f"it belongs to {named}, not to main"
    entry = next((e for e in history.log if e.snapshot_id == target.snapshot_id), None)
    if entry is None:
        return "it was never main's current snapshot (written to a branch since dropped)"
    root = line[-1] if line else None
    if root is not None and root.parent_id is None and root.committed_ms > target.committed_ms:
        return (
            f"the table was rebuilt (CREATE OR REPLACE: a `table` model or --full-refresh) at "
            f"{format_millis(root.committed_ms)}, which started a new line of snapshots"
        )
    return (
        f"main was rolled back past it (it was main's state from "
        f"{format_millis(entry.made_current_ms)}, then replaced by a later rollback)"
    )


def rollback_sql(catalog: str, namespace: str, table: str, plan: RollbackPlan, to: AsOf) -> str:
    """The Iceberg procedure call that moves main as planned."""
    name = TableName(catalog, namespace, table)
    if to.key == "timestamp":
        return (
            f"call {name.procedures}.rollback_to_timestamp({name.in_catalog}, "
            f"TIMESTAMP {string_literal(str(to.value))})"
        )
    return (
        f"call {name.procedures}.rollback_to_snapshot({name.in_catalog}, {plan.target.snapshot_id})"
    )


def rollback_report(plan: RollbackPlan, after: Snapshot | None) -> list[str]:
    """What lakehouse_rollback prints: main before and after."""
    if not plan.changes:
        return [
            f"lakehouse_rollback: main of {plan.table} is already at {plan.before.describe()}; "
            "nothing to do.",
        ]
    now = after.describe() if after is not None else "(not found)"
    return [
        f"lakehouse_rollback: rolled back main of {plan.table}",
        f"  before: {plan.before.describe()}",
        f"  after:  {now}",
    ]
