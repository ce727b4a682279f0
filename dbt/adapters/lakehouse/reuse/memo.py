"""Reuse decisions remembered between runs: a node whose catalog objects are where they were
when it was last reused is decided from the catalog's own rows, with no analysis, no metadata
read and no call into Spark.

A decision that reused a node proved that, with these catalog objects in these states (its own
table or view, every table its query reads, every view the analyzer inlined into it) and this
query, statement and configuration, the node is up to date (a data test's result is the one
recorded). On the embedded lakehouse an object's state is its row in the SQLite catalog: each
commit writes a new metadata file under a new name, so an unchanged metadata location is an
unchanged table or view. What else the decision rested on (the node's compiled query, its
statement, its config, the engine's settings and versions) is hashed into a key. A later
decision with the same key that reads the same locations is that same decision, and says so
without the engine.

Remembered only where that holds exactly:
- the node's catalog is the embedded lakehouse's (other catalogs decide through the engine);
- the analysis named every object it read (reuse/inputs.py `PlanInputs.objects`): no
  temporary or session view, no function or variable the session defined;
- no commit to any of them between the decision's first read and its last: their locations
  before the decision began equal those after it ended;
- the session resolves names as a new session does: no statement of this process changed its
  current namespace, its settings, its functions or variables (`statement_ran`), no Python
  model ran in it, and the query names no temporary view this process made;
- no audited run (its reads are on its branch).

The memo is a cache of proven decisions, kept in dbt's target folder: deleting it costs the
next run its full decisions, never a wrong one. Entries are keyed by node and relation; a run
writes the ones it learnt at its end, merged into the file as it is then (atomically
replaced), so concurrent runs lose at most each other's new entries.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.__version__ import version as adapter_version
from dbt.adapters.lakehouse.embedded.sqlite_catalog import metadata_locations
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.plan import env_switch

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter
    from dbt.adapters.lakehouse.reuse.plan_facts import PlanFacts

logger = AdapterLogger("Lakehouse")

FILE_NAME = "lakehouse_reuse_memo.json"
# Bumped when what a decision compares changes: entries of another format are not read.
FORMAT = 1
# `off`: every decision through the engine (for a comparison, or to rule the memo out).
ENV = "LAKEHOUSE_REUSE_MEMO"
Locations = Mapping[tuple[str, str], str]  # (namespace, name) -> metadata location


@dataclass(frozen=True)
class Remembered:
    """A reuse decision: its key, each object's location then, its reason, a test's result
    (failures, should_warn, should_error), a view's inputs (what its query reads, for the
    readers of its stand-in: reuse/views.py)."""

    key: str
    objects: tuple[tuple[str, str, str], ...]  # (namespace, name, metadata location)
    reason: str
    result: tuple[int, bool, bool] | None = None
    inputs: Mapping[str, Any] | None = None


class _Store:
    """One memo file: read once per process, written at each invocation's end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, Remembered] | None = None
        self._learnt: dict[str, Remembered] = {}

    def get(self, slot: str) -> Remembered | None:
        with self._lock:
            if self._entries is None:
                self._entries = _read(self.path)
            return self._entries.get(slot)

    def put(self, slot: str, entry: Remembered) -> None:
        with self._lock:
            if self._entries is None:
                self._entries = _read(self.path)
            self._entries[slot] = self._learnt[slot] = entry

    def save(self) -> None:
        with self._lock:
            learnt, self._learnt = self._learnt, {}
        if not learnt:
            return
        entries = {**_read(self.path), **learnt}
        document = {
            "format": FORMAT,
            "entries": {
                slot: {
                    "key": e.key,
                    "objects": e.objects,
                    "reason": e.reason,
                    "result": e.result,
                    "inputs": e.inputs,
                }
                for slot, e in entries.items()
            },
        }
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(document, separators=(",", ":")))
            os.replace(partial, self.path)
        except OSError as exc:  # a read-only target folder: the next run decides in full
            logger.debug(f"reuse decisions not remembered in {self.path}: {exc}")
            with contextlib.suppress(OSError):
                partial.unlink()


def _read(path: Path) -> dict[str, Remembered]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):  # none yet, or unreadable: nothing remembered
        return {}
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return {}
    entries: dict[str, Remembered] = {}
    for slot, e in (document.get("entries") or {}).items():
        try:
            result = tuple(e["result"]) if e.get("result") is not None else None
            objects = tuple((str(ns), str(n), str(loc)) for ns, n, loc in e["objects"])
            inputs = e.get("inputs")
            entries[slot] = Remembered(
                str(e["key"]),
                objects,
                str(e["reason"]),
                result,  # type: ignore[arg-type]
                inputs if isinstance(inputs, dict) else None,
            )
        except (KeyError, TypeError, ValueError):
            continue
    return entries


_STORES: dict[Path, _Store] = {}
_STORES_LOCK = threading.Lock()


def _store(path: Path) -> _Store:
    with _STORES_LOCK:
        return _STORES.setdefault(path, _Store(path))


def save_all() -> None:
    """The invocation's end: what it learnt written to each memo file, and the files read again
    by the next invocation in this process (another process may have written them since)."""
    with _STORES_LOCK:
        stores = list(_STORES.values())
        _STORES.clear()
    for store in stores:
        store.save()


# --- the session: as a new one, or not ----------------------------------------------------------
# A statement's first keywords, after blanks and comments (dbt's query comment).
_FIRST_WORDS = re.compile(r"(?:\s|--[^\n]*|/\*.*?\*/)*((?:[A-Za-z_]+\s*){1,5})", re.S)
_CHANGES_SESSION = re.compile(
    r"^(?:use|set|reset|declare|add|(?:create|drop)(?: or replace)?(?: temporary| temp)?"
    r" function|drop temporary variable)\b"
)
_TEMP_VIEW = re.compile(
    r"create\s+(?:or\s+replace\s+)?(?:global\s+)?(?:temporary|temp)\s+view\s+"
    r"(?:if\s+not\s+exists\s+)?`?([\w$]+)`?",
    re.I,
)
# Kept on the session object itself, which a restarted engine replaces.
_CHANGED = "_lakehouse_memo_changed"  # what changed it
_TEMP_VIEWS = "_lakehouse_memo_temp_views"  # the temporary views statements made in it
_SESSION_LOCK = threading.Lock()


def statement_ran(spark: Any, statement: str) -> None:
    """Note a statement that leaves the session resolving names or expressions otherwise than a
    new session would (USE, SET, RESET, DECLARE, ADD JAR, a function made or dropped), and the
    temporary views statements make, which shadow a one-part name."""
    words = _FIRST_WORDS.match(statement)
    first = " ".join(words.group(1).lower().split()) if words else ""
    if _CHANGES_SESSION.match(first):
        session_changed(spark, first.split(" ")[0].upper())
        return
    temp = _TEMP_VIEW.match(statement, words.start(1)) if words else None
    if temp is not None:
        with _SESSION_LOCK:
            if getattr(spark, _TEMP_VIEWS, None) is None:
                setattr(spark, _TEMP_VIEWS, set())
            getattr(spark, _TEMP_VIEWS).add(temp.group(1).lower())


def session_changed(spark: Any, why: str) -> None:
    """No decision is remembered or recalled on this session from now on."""
    with _SESSION_LOCK:
        if getattr(spark, _CHANGED, None) is None:
            logger.debug(f"reuse decisions are not recalled in this session any more: {why}")
            setattr(spark, _CHANGED, why)


def _session_as_new(texts: Sequence[str]) -> bool:
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

    session = ENGINE.active
    if session is None:  # nothing ran in it yet
        return True
    with _SESSION_LOCK:
        if getattr(session, _CHANGED, None) is not None:
            return False
        temp_views = set(getattr(session, _TEMP_VIEWS, None) or ())
    if not temp_views:
        return True
    words = {w.lower() for text in texts for w in re.findall(r"[\w$]+", text)}
    return not (words & temp_views)


# --- what a decision watched --------------------------------------------------------------------
# Expressions whose meaning is the session's, not a catalog object's: functions registered or
# created in it, and its variables.
_SESSION_DEFINED = re.compile(r"UDF|UDAF|UDTF|UserDefined|SQLFunction|Variable")


def watched_objects(
    facts: PlanFacts, classes: set[str], tables: Mapping[str, TableName]
) -> tuple[TableName, ...] | None:
    """The catalog objects an analysed plan resolved (`tables`: its input tables), or None
    where something it read is no catalog object (reuse/inputs.py)."""
    if facts.views or any(_SESSION_DEFINED.search(name) for name in classes):
        return None
    found = dict(tables)
    for parts in facts.objects:
        if len(parts) < 3:  # a global temporary view (`global_temp.v`), not a catalog's
            return None
        name = TableName(parts[0], ".".join(parts[1:-1]), parts[-1])
        found[str(name)] = name
    return tuple(found[k] for k in sorted(found))


# --- recall and remember ------------------------------------------------------------------------
@dataclass
class Attempt:
    """A decision the memo could not answer, and what it remembers when that decision reuses
    the node: the catalog as the decision began."""

    store: _Store
    database: Path
    catalog: str
    slot: str
    key: str
    before: Locations

    def remember(
        self,
        objects: Iterable[TableName] | None,
        reason: str,
        result: tuple[int, bool, bool] | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> None:
        """Remember the reuse, when every object is the catalog's and none moved meanwhile."""
        if objects is None:
            return
        names = list(objects)
        if any(name.catalog != self.catalog for name in names):
            return
        now = metadata_locations(self.database, self.catalog, {n.namespace for n in names})
        states = []
        for name in names:
            location = now.get((name.namespace, name.name))
            if location is None or self.before.get((name.namespace, name.name)) != location:
                return  # written while the decision read it, or gone
            states.append((name.namespace, name.name, location))
        self.store.put(self.slot, Remembered(self.key, tuple(states), reason, result, inputs))


def recall(
    adapter: LakehouseAdapter,
    catalog: str,
    slot: str,
    parts: Sequence[Any],
    texts: Sequence[str] = (),
) -> Remembered | Attempt | None:
    """The remembered decision for the node in `slot` (its unique id and relation) when its key
    (`parts`: what its decision reads besides the catalog) and every object's location are
    those remembered; else an Attempt to remember the decision about to be made; None where
    the memo does not apply. `texts`: the SQL it runs, checked for this process's temporary
    views."""
    found = _embedded(adapter, catalog)
    if found is None or not _session_as_new(texts):
        return None
    database, spec_fingerprint, target = found
    key = _key(spec_fingerprint, slot, parts)
    store = _store(target / FILE_NAME)
    entry = store.get(slot)
    if entry is not None and entry.key == key:
        now = metadata_locations(database, catalog, {ns for ns, _, _ in entry.objects})
        if all(now.get((ns, name)) == location for ns, name, location in entry.objects):
            return entry
    return Attempt(store, database, catalog, slot, key, metadata_locations(database, catalog))


def _embedded(adapter: LakehouseAdapter, catalog: str) -> tuple[Path, str, Path] | None:
    """(the embedded catalog's SQLite file, the engine's fingerprint, dbt's target folder) when
    `catalog` is the embedded lakehouse's and the memo is on; else None."""
    from dbt.adapters.lakehouse.audit.run import current_run

    if env_switch(os.environ, ENV) is False or current_run() is not None:
        return None
    spec = adapter._resolved().spec
    embedded = spec.embedded_catalog
    if embedded is None or spec.is_connect or embedded.name != catalog:
        return None
    if not embedded.database_file.exists():
        return None
    return embedded.database_file, spec.fingerprint, Path(adapter.config.project_target_path)


def _key(spec_fingerprint: str, slot: str, parts: Sequence[Any]) -> str:
    document = [FORMAT, adapter_version, _pyspark_version(), spec_fingerprint, slot, *parts]
    return hashlib.sha256(json.dumps(document, default=str).encode()).hexdigest()


@functools.cache
def _pyspark_version() -> str:
    from importlib.metadata import version

    return version("pyspark")


def config_text(config: Any) -> str:
    """A node's whole config as text (any change to it is a decision made again)."""
    plain = dict(config) if isinstance(config, Mapping) else config
    return json.dumps(plain, sort_keys=True, default=str)


def objects_of(*groups: Collection[TableName] | None) -> tuple[TableName, ...] | None:
    """Objects of several groups together; None when any group could not be told."""
    found: list[TableName] = []
    for group in groups:
        if group is None:
            return None
        found.extend(group)
    return tuple(found)
