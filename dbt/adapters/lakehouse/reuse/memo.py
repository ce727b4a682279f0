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
  temporary or session view, no function or variable the session defined; a view's stand-in
  (checkpoints/) stands for the view and what the view's own decision watched;
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
from dbt.adapters.lakehouse.engine.jars.lines import pyspark_version
from dbt.adapters.lakehouse.iceberg.listing import embedded_catalog_in
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.plan import env_switch
from dbt.adapters.lakehouse.reuse.session_state import session_as_new

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")

FILE_NAME = "lakehouse_reuse_memo.json"
# Bumped when what a decision compares or keeps changes: entries of another format are not
# read (3: a view's inputs carry what its decision watched, for its stand-in's readers).
FORMAT = 3
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
    checksum: str | None = None  # the node's file as dbt hashed it (a prediction's, below)


class _Store:
    """One memo file: read once per process, written at each invocation's end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, Remembered] | None = None
        self._learnt: dict[str, Remembered] = {}

    def _loaded(self) -> dict[str, Remembered]:
        """The entries, read on first use; under the lock."""
        if self._entries is None:
            self._entries = _read(self.path)
        return self._entries

    def get(self, slot: str) -> Remembered | None:
        with self._lock:
            return self._loaded().get(slot)

    def put(self, slot: str, entry: Remembered) -> None:
        with self._lock:
            self._loaded()[slot] = self._learnt[slot] = entry

    def by_node(self) -> dict[str, Remembered]:
        """Each node's entry (of any relation: the newest read), by its unique id."""
        with self._lock:
            return {slot.split(" ", 1)[0]: e for slot, e in self._loaded().items()}

    def save(self) -> None:
        with self._lock:
            learnt, self._learnt = self._learnt, {}
        if not learnt:  # this run's end, for the next run's edit check (reuse/edited.py)
            with contextlib.suppress(OSError):
                os.utime(self.path)
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
                    "checksum": e.checksum,
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
                e.get("checksum"),
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


# --- what a decision watched --------------------------------------------------------------------
# Expressions whose meaning is the session's, not a catalog object's: functions registered or
# created in it, and its variables.
_SESSION_DEFINED = re.compile(r"UDF|UDAF|UDTF|UserDefined|SQLFunction|Variable")


def watched_objects(
    resolved: Iterable[Sequence[str]],
    views: int,
    classes: set[str],
    tables: Mapping[str, TableName],
    below: Iterable[tuple[TableName, ...] | None] = (),
) -> tuple[TableName, ...] | None:
    """The catalog objects an analysed plan resolved (`resolved`: the qualified names of its
    aliases; `views`: its View nodes; `tables`: its input tables; `below`: what the stand-ins
    it read watched, reuse/stand_ins.py), or None where something it read is no catalog object
    (reuse/inputs.py)."""
    if views or any(_SESSION_DEFINED.search(name) for name in classes):
        return None
    found = dict(tables)
    for parts in resolved:
        if len(parts) < 3:  # a global temporary view (`global_temp.v`), not a catalog's
            return None
        name = TableName(parts[0], ".".join(parts[1:-1]), parts[-1])
        found[str(name)] = name
    for objects in below:
        if objects is None:
            return None
        found.update((str(name), name) for name in objects)
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
    checksum: str | None = None

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
        entry = Remembered(self.key, tuple(states), reason, result, inputs, self.checksum)
        self.store.put(self.slot, entry)


def recall(
    adapter: LakehouseAdapter,
    catalog: str,
    model: Mapping[str, Any],
    relation: str,
    parts: Sequence[Any],
    texts: Sequence[str] = (),
) -> Remembered | Attempt | None:
    """The remembered decision for `model` (dbt's node) writing `relation` when its key (its
    whole config and `parts`: what its decision reads besides the catalog) and every object's
    location are those remembered; else an Attempt to remember the decision about to be made;
    None where the memo does not apply. `texts`: the SQL it runs, checked for this process's
    temporary views."""
    found = _embedded(adapter, catalog)
    if found is None or not session_as_new(texts):
        return None
    database, catalog, spec_fingerprint, target = found
    slot, checksum = f"{model['unique_id']} {relation}", _checksum_of(model)
    key = _key(spec_fingerprint, slot, (*parts, _config_text(model["config"])))
    store = _store(target / FILE_NAME)
    entry = store.get(slot)
    if entry is not None and entry.key == key:
        now = metadata_locations(database, catalog, {ns for ns, _, _ in entry.objects})
        if all(now.get((ns, name)) == location for ns, name, location in entry.objects):
            return entry
    before = metadata_locations(database, catalog)
    return Attempt(store, database, catalog, slot, key, before, checksum)


def _embedded(adapter: LakehouseAdapter, catalog: str) -> tuple[Path, str, str, Path] | None:
    """(the embedded catalog's SQLite file, its name as its rows hold it, the engine's
    fingerprint, dbt's target folder) when `catalog` (dbt may pass it quoted) is the embedded
    lakehouse's and the memo is on; else None."""
    from dbt.adapters.lakehouse.audit.run import current_run

    if env_switch(os.environ, ENV) is False or current_run() is not None:
        return None
    spec = adapter._resolved().spec
    embedded = embedded_catalog_in(spec, catalog)
    if embedded is None:
        return None
    target = Path(adapter.config.project_target_path)
    return embedded.database_file, embedded.name, spec.fingerprint, target


def _key(spec_fingerprint: str, slot: str, parts: Sequence[Any]) -> str:
    document = [FORMAT, adapter_version, pyspark_version(), spec_fingerprint, slot, *parts]
    return hashlib.sha256(json.dumps(document, default=str).encode()).hexdigest()


def _checksum_of(model: Mapping[str, Any]) -> str | None:
    """The node's file as dbt hashed it (its `checksum`), if it has one."""
    checksum = model.get("checksum")
    return str(checksum.get("checksum")) if isinstance(checksum, Mapping) else None


def _config_text(config: Any) -> str:
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


# --- whether the run will need the engine ------------------------------------------------------
# Node kinds a remembered decision stands for; any other selected node (a unit test, an
# analysis) runs SQL.
_DECIDED = ("model.", "seed.", "snapshot.", "test.")


def start_engine_unless_covered(adapter: LakehouseAdapter, catalog: str) -> None:
    """At the run's start (its schemas listed, the nodes selected): an engine start held back
    (command_setup.py) begins now, in the background, unless every selected node has a
    remembered decision of the same file whose objects are all where they were, and no project
    hook runs SQL. A wrong guess costs time, never a result: a node that needs the engine gets
    it at its first statement."""
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

    if not ENGINE.has_deferred():
        return
    try:
        needing = _needing_engine(adapter, catalog)
    except Exception as exc:  # nothing to guess from: start it
        needing = f"the run's nodes could not be matched to the memo: {exc}"
    if needing is not None and ENGINE.start_deferred():
        logger.debug(f"engine started: {needing}")


def _needing_engine(adapter: LakehouseAdapter, catalog: str) -> str | None:
    """Why some selected node needs the engine; None when none does."""
    from dbt import selected_resources

    found = _embedded(adapter, catalog)
    if found is None:
        return "not the embedded lakehouse's catalog"
    if any(getattr(adapter.config, name, None) for name in ("on_run_start", "on_run_end")):
        return "the project's on-run hooks run SQL"
    database, catalog, _, target = found
    entries = _store(target / FILE_NAME).by_node()
    manifest = adapter.get_macro_resolver()
    nodes = getattr(manifest, "nodes", None) or {}
    now = metadata_locations(database, catalog)
    for unique_id in selected_resources.SELECTED_RESOURCES:
        if not str(unique_id).startswith(_DECIDED):
            if str(unique_id).startswith("unit_test."):
                return f"{unique_id} runs"
            continue
        entry, node = entries.get(str(unique_id)), nodes.get(unique_id)
        if entry is None or node is None:
            return f"{unique_id} has no remembered decision"
        file_hash = getattr(node.checksum, "checksum", None)
        if entry.checksum is not None and entry.checksum != file_hash:
            return f"{unique_id}'s file changed since its decision"
        moved = next(((ns, n) for ns, n, at in entry.objects if now.get((ns, n)) != at), None)
        if moved is not None:
            return f"{unique_id} reads {'.'.join(moved)}, which moved since its decision"
    return None
