"""What a materialized view records and what a refresh does: pure decisions over snapshot ids.

Everything a view was built from is recorded in the snapshot summary of the Iceberg commit
that holds its rows (commit lineage carries the entries; `CREATE OR REPLACE TABLE`, `INSERT` or
`MERGE` alike), so the record and the rows are one atomic commit, and it is mirrored in the
table's properties for readers without dbt (Trino, pyiceberg, DuckDB):

- `lakehouse.mv.upstream.<catalog>.<schema>.<table>` = the snapshot id of the upstream's `main`
  the build read (`none`: the upstream had no snapshot yet);
- `lakehouse.mv.upstream_schema.<catalog>.<schema>.<table>` = a hash of the upstream's columns
  then, names and types (a column added, dropped or renamed commits no snapshot, but may change
  the query's rows; the snapshot's own schema id does not move with it);
- `lakehouse.mv.sql_hash` = sha256 of the model's compiled SQL;
- `lakehouse.mv.config_hash` = sha256 of the settings `on_configuration_change` watches;
- `lakehouse.mv.refreshed_at` = when the build started (UTC, ISO 8601).

The record a refresh trusts is the summary of the build `main` holds: the newest snapshot of
`main` carrying the entries, with nothing but compactions (`replace` snapshots: same rows) after
it (built_entries). Table properties are not versioned with the rows and are written right
after the rows' commit: they lag behind it when that write failed, and run ahead of it when the
table is rolled back; a refresh reads them only for views built before the summary held the
whole record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse.iceberg.history import ancestors, line_of

PREFIX = "lakehouse.mv."
# The same record under another prefix, written by a reused node's build (reuse/): a table it
# builds is not a materialized view, and `mv status` must not read it as one.
BUILD_PREFIX = "lakehouse.build."
RECORD_PREFIXES = (PREFIX, BUILD_PREFIX)
UPSTREAM = "upstream."
SCHEMA = "upstream_schema."
UPSTREAM_PREFIX = PREFIX + UPSTREAM
SCHEMA_PREFIX = PREFIX + SCHEMA
SQL_HASH = PREFIX + "sql_hash"
CONFIG_HASH = PREFIX + "config_hash"
REFRESHED_AT = PREFIX + "refreshed_at"
NO_SNAPSHOT = "none"
SQL_CHANGED = "the model's SQL changed"

# The model settings a change of which `on_configuration_change` governs.
WATCHED_CONFIGS = ("partition_by", "table_properties", "write_order_by", "format_version")
CONFIGURATION_CHANGE_MODES = ("apply", "continue", "fail")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def sql_hash(sql: str) -> str:
    """The compiled SQL's hash; surrounding whitespace is no change."""
    return digest(sql.strip())


def schema_hash(columns: Sequence[tuple[str, str]]) -> str:
    """A table's columns (name, type), in order, as a short hash."""
    return digest(json.dumps([list(c) for c in columns]))[:16]


def config_hash(config: Mapping[str, Any]) -> str:
    """The hash of the watched settings (absent and null are the same: not set)."""
    watched = {key: config.get(key) for key in WATCHED_CONFIGS if config.get(key) is not None}
    return digest(json.dumps(watched, sort_keys=True, default=str))


@dataclass(frozen=True)
class UpstreamState:
    """An upstream table's `main` as a build reads it (snapshot None: no snapshot yet)."""

    name: str  # catalog.schema.table
    snapshot_id: int | None
    schema: str | None  # schema_hash() of its columns


@dataclass(frozen=True)
class Recorded:
    """What a view's table properties say it was built from (empty: not a view of ours)."""

    upstreams: Mapping[str, int | None] = field(default_factory=dict)
    schemas: Mapping[str, str | None] = field(default_factory=dict)
    sql_hash: str | None = None
    config_hash: str | None = None
    refreshed_at: str | None = None

    @property
    def is_view(self) -> bool:
        return self.sql_hash is not None


def _int_or_none(value: str | None) -> int | None:
    try:
        return None if value in (None, "", NO_SNAPSHOT) else int(str(value))
    except ValueError:
        return None


def recorded_of(properties: Mapping[str, str], prefix: str = PREFIX) -> Recorded:
    """Read the record back from a table's properties (keys are case-sensitive in Iceberg)."""
    upstream, schema = prefix + UPSTREAM, prefix + SCHEMA
    return Recorded(
        upstreams={
            key[len(upstream) :]: _int_or_none(value)
            for key, value in properties.items()
            if key.startswith(upstream)
        },
        schemas={
            key[len(schema) :]: value for key, value in properties.items() if key.startswith(schema)
        },
        sql_hash=properties.get(prefix + "sql_hash"),
        config_hash=properties.get(prefix + "config_hash"),
        refreshed_at=properties.get(prefix + "refreshed_at"),
    )


def record_properties(
    upstreams: Sequence[UpstreamState],
    sql: str,
    config: Mapping[str, Any],
    refreshed_at: str,
    prefix: str = PREFIX,
) -> dict[str, str]:
    """The record a build writes with its rows."""
    return properties_of(
        Recorded(
            upstreams={u.name: u.snapshot_id for u in upstreams},
            schemas={u.name: u.schema for u in upstreams},
            sql_hash=sql_hash(sql),
            config_hash=config_hash(config),
            refreshed_at=refreshed_at,
        ),
        prefix,
    )


def properties_of(record: Recorded, prefix: str = PREFIX) -> dict[str, str]:
    """A record as the properties (or summary entries) that hold it."""
    properties = {
        prefix + key: value
        for key, value in (
            ("sql_hash", record.sql_hash),
            ("config_hash", record.config_hash),
            ("refreshed_at", record.refreshed_at),
        )
        if value is not None
    }
    for name, snapshot in record.upstreams.items():
        properties[prefix + UPSTREAM + name] = NO_SNAPSHOT if snapshot is None else str(snapshot)
    for name, schema in record.schemas.items():
        properties[prefix + SCHEMA + name] = schema or NO_SNAPSHOT
    return properties


def stale_properties(recorded: Recorded, upstreams: Sequence[UpstreamState]) -> list[str]:
    """Recorded upstream keys the view no longer reads: a rebuild unsets them."""
    current = {u.name for u in upstreams}
    return [
        prefix + name
        for prefix, names in (
            (UPSTREAM_PREFIX, recorded.upstreams),
            (SCHEMA_PREFIX, recorded.schemas),
        )
        for name in names
        if name not in current
    ]


@dataclass(frozen=True)
class RefreshPlan:
    """`create`: no table yet (or not ours); `rebuild`: the whole query again, in one commit;
    `noop`: everything it was built from is unchanged. `reasons` say why, for the log."""

    action: str
    reasons: tuple[str, ...] = ()
    config_changed: bool = False
    # The one upstream that moved, when moving is all it did and no other upstream changed (no
    # SQL, schema or build change): the refresh may then be incremental (mv/incremental.py
    # decides).
    appendable: str | None = None


def built_entries(
    snapshots: Mapping[int, tuple[int | None, str, Mapping[str, str]]],
    main_head: int | None,
    prefix: str = PREFIX,
) -> Mapping[str, str] | None:
    """The record (`lakehouse.mv.*` summary entries) of the build `main` of a view stands on:
    snapshot id -> (parent, operation, its `lakehouse.mv.*` summary entries). Compactions after
    it keep its rows; any other commit without a record (another writer) or none found: None,
    the rows are not known to be a build's."""
    found = rows_commit(snapshots, main_head, prefix)
    entries = snapshots[found][2] if found is not None else {}
    return entries if entries.get(prefix + "refreshed_at") else None


def rows_commit(
    snapshots: Mapping[int, tuple[int | None, str, Mapping[str, str]]],
    main_head: int | None,
    prefix: str = PREFIX,
) -> int | None:
    """The snapshot whose commit wrote the rows `main` holds (same shape as built_entries's):
    main's head, or below compactions (`replace`, which keep the rows they rewrite) the first
    that is not one, or a build's. None: no such snapshot in the history."""
    parents = {snapshot: parent for snapshot, (parent, _, _) in snapshots.items()}
    for snapshot in line_of(parents, main_head):
        _, operation, entries = snapshots[snapshot]
        if entries.get(prefix + "refreshed_at") or operation != "replace":
            return snapshot
    return None


def plan_refresh(
    recorded: Recorded | None,
    upstreams: Sequence[UpstreamState],
    untracked: Sequence[str],
    sql: str,
    config: Mapping[str, Any],
    full_refresh: bool,
    built: str | None = None,
    check_built: bool = True,
) -> RefreshPlan:
    """What a `dbt run` does to a view, from its record and its upstreams' `main` now.

    `untracked` are upstreams that are no Iceberg tables (views, ephemeral models): nothing
    says whether they moved, so the view is rebuilt on every run while it reads one. `built`:
    the `refreshed_at` of the build its rows come from (built_entries), checked unless
    `check_built` is False (a session whose commits carry no lineage)."""
    if recorded is None or not recorded.is_view:
        return RefreshPlan("create", ("no materialized view there yet",))
    config_changed = recorded.config_hash != config_hash(config)
    if full_refresh:
        return RefreshPlan("rebuild", ("--full-refresh",), config_changed)
    reasons: list[str] = []
    if check_built and built != recorded.refreshed_at:
        reasons.append(
            "its rows are not those of its last refresh (its table was rolled back, or "
            "written by another writer)"
        )
    if recorded.sql_hash != sql_hash(sql):
        reasons.append(SQL_CHANGED)
    moved: list[str] = []  # upstreams whose snapshot moved from a recorded one, nothing else
    for upstream in upstreams:
        if upstream.name not in recorded.upstreams:
            reasons.append(f"{upstream.name} is a new upstream")
            continue
        before = recorded.upstreams[upstream.name]
        if before != upstream.snapshot_id:
            reasons.append(
                f"{upstream.name} moved from snapshot {before} to {upstream.snapshot_id}"
            )
            if before is not None and upstream.snapshot_id is not None:
                moved.append(upstream.name)
        if recorded.schemas.get(upstream.name) != (upstream.schema or NO_SNAPSHOT):
            reasons.append(f"the schema of {upstream.name} changed")
    reasons.extend(
        f"{name} is not an Iceberg table (its changes cannot be seen)" for name in untracked
    )
    if reasons:
        # Incremental only when one upstream's snapshot moving is the whole story: every other
        # upstream is where it was (an inner join's unchanged side; incremental.py checks the
        # query's shape).
        same_upstreams = set(recorded.upstreams) == {u.name for u in upstreams}
        single = len(reasons) == 1 and len(moved) == 1 and same_upstreams
        return RefreshPlan("rebuild", tuple(reasons), config_changed, moved[0] if single else None)
    return RefreshPlan("noop", (), config_changed)


@dataclass(frozen=True)
class UpstreamStatus:
    """One upstream of a view: `behind` snapshots of `main` since the recorded one (None: not
    countable, the recorded one expired or is no ancestor), `since` the first of them's commit."""

    name: str
    recorded: int | None
    current: int | None
    behind: int | None
    since: str | None
    note: str = ""
    since_ms: int | None = None  # `since` in epoch milliseconds, for freshness thresholds

    @property
    def fresh(self) -> bool:
        return self.recorded == self.current and not self.note


def upstream_status(
    name: str,
    recorded: int | None,
    current: int | None,
    parents: Mapping[int, int | None],
    committed: Mapping[int, str],
    committed_ms: Mapping[int, int] | None = None,
) -> UpstreamStatus:
    """How far `main` of an upstream moved past the snapshot a view recorded (`committed`:
    when each snapshot was committed, as shown; `committed_ms`: the same in milliseconds)."""
    if recorded == current:
        return UpstreamStatus(name, recorded, current, 0, None)
    if recorded is not None and recorded not in parents:
        note = f"recorded snapshot {recorded} is no longer in its history (expired, or recreated)"
        return UpstreamStatus(name, recorded, current, None, None, note)
    if recorded is not None and recorded not in ancestors(parents, current):
        note = f"recorded snapshot {recorded} is no ancestor of main (rolled back, or replaced)"
        return UpstreamStatus(name, recorded, current, None, None, note)
    newer: list[int] = []
    for snapshot in line_of(parents, current):
        if snapshot == recorded:
            break
        newer.append(snapshot)
    first = newer[-1] if newer else None
    return UpstreamStatus(
        name,
        recorded,
        current,
        len(newer),
        None if first is None else committed.get(first),
        since_ms=None if first is None else (committed_ms or {}).get(first),
    )
