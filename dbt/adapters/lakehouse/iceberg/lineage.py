"""Commit lineage: every Iceberg commit dbt makes names the dbt invocation and node behind it.

Each snapshot's summary carries `dbt.invocation_id` (the run, as in run_results.json) and,
when a node wrote it, `dbt.node` (its unique id), so `select * from <table>.snapshots` tells
which run and model wrote what. Spark SQL has no statement-level snapshot properties; Iceberg's
Spark writes (SparkWrite, SparkPositionDeltaWrite, SparkTable's metadata-only deletes) read
them at commit time from a private static ThreadLocal of `org.apache.iceberg.spark.
CommitMetadata`. The cursor sets it around each statement that can commit, from the Python
thread that runs the statement: PySpark pins each Python thread to one JVM thread, so dbt's
threads never see each other's properties. Afterwards `committed_snapshot` reads back the id
of the snapshot the statement made, for dbt's adapter_response.

Under Spark Connect there is no JVM here: Iceberg's writes also read
`spark.sql.iceberg.snapshot-property.<key>` from the session's SQL conf, so the statement runs
on a clone of the session made for it, with those keys set (engine/connect.py): the session
dbt's threads share never holds one node's entries. No snapshot id is read back there.

Lineage never fails a statement: if the reflection fails (an Iceberg that moved the field),
the statements run without it, and the reason is logged once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import connect, runtime
from dbt.adapters.lakehouse.iceberg import java
from dbt.adapters.lakehouse.report import work

logger = AdapterLogger("Lakehouse")

INVOCATION_KEY = "dbt.invocation_id"
NODE_KEY = "dbt.node"
QUERY_TAGS_KEY = "dbt.query_tags"  # report/tags.py
# Resource types whose connections are named by node unique id (`model.pkg.orders`); other
# connections ("master", a run-operation's macro) carry the invocation id alone.
NODE_TYPES = frozenset({"model", "seed", "snapshot", "test", "unit_test"})
# A session writing under this conf commits to that branch, when the table has it (WAP).
WAP_BRANCH_CONF = "spark.wap.branch"

_COMMIT_METADATA = "org.apache.iceberg.spark.CommitMetadata"
# Iceberg's SparkSQLProperties.SNAPSHOT_PROPERTY_PREFIX: what a session's conf adds to a commit.
SNAPSHOT_PROPERTY_PREFIX = "spark.sql.iceberg.snapshot-property."
_COMMIT_PROPERTIES_FIELD = "COMMIT_PROPERTIES"


def is_node_id(connection_name: str | None) -> bool:
    parts = (connection_name or "").split(".")
    return len(parts) >= 3 and parts[0] in NODE_TYPES and all(parts)


# (invocation id, node) -> entries every later commit of that node carries besides its name:
# what `lakehouse.changes` consumed (changes/plan.py), so the record and the rows it produced
# are one commit.
_NODE_ENTRIES: dict[tuple[str, str], dict[str, str]] = {}
_NODE_ENTRIES_LOCK = threading.Lock()


def commit_properties(invocation_id: str, connection_name: str | None) -> dict[str, str]:
    """The snapshot summary entries a statement run on this connection commits with."""
    properties = {INVOCATION_KEY: invocation_id}
    if is_node_id(connection_name):
        properties[NODE_KEY] = str(connection_name)
        with _NODE_ENTRIES_LOCK:
            properties.update(_NODE_ENTRIES.get((invocation_id, str(connection_name)), {}))
    return properties


def add_node_entries(invocation_id: str, node: str, entries: Mapping[str, str]) -> None:
    """From now on in this invocation, every commit of `node` also carries `entries`."""
    with _NODE_ENTRIES_LOCK:
        _NODE_ENTRIES.setdefault((invocation_id, node), {}).update(entries)


def lineage_off_reason(spark: Any) -> str | None:
    """Why this session's commits cannot carry lineage entries, or None when they can."""
    if runtime.is_connect(spark):
        return connect.commit_sessions(spark).cannot_clone
    return _reflected(spark).failure


# --- which statements can commit --------------------------------------------------------------
# Read from the start only: whitespace, `--` lines (dbt's query comment may be either kind,
# `-- lakehouse:conf` lines) and `/* */` blocks, then the statement's first keywords. A model's
# statement can be megabytes; this costs the same for any size.
_LEADING = re.compile(r"(?:\s|--[^\n]*|/\*.*?\*/)*", re.S)
_NAME = r"(?P<name>(?:`(?:[^`]|``)+`|[\w$]+)(?:\s*\.\s*(?:`(?:[^`]|``)+`|[\w$]+))*)"
# The Spark statements an Iceberg table commits a snapshot for. Not: views (catalog objects,
# unversioned), ALTER (table metadata, no snapshot), CALL (procedures take no properties).
_COMMITS = re.compile(
    r"(?:merge\s+into|insert\s+(?:into|overwrite)(?:\s+table)?|delete\s+from|update"
    r"|truncate\s+table|(?:create\s+or\s+replace|replace|create)\s+table"
    r"(?:\s+if\s+not\s+exists)?)\s+" + _NAME,
    re.IGNORECASE,
)


def commit_kind(statement: str) -> str:
    """What a committing statement does, from its first keywords (report/work.py's kinds)."""
    start = _LEADING.match(statement)
    offset = start.end() if start else 0
    return work.statement_kind(" ".join(statement[offset : offset + 40].split()[:2]))


def commit_target(statement: str) -> str | None:
    """The table a statement may commit a snapshot to, as written (`cat`.`ns`.`t`), or None."""
    start = _LEADING.match(statement)
    match = _COMMITS.match(statement, start.end() if start else 0)
    return re.sub(r"\s+", "", match.group("name")) if match else None


# --- the JVM side -----------------------------------------------------------------------------
@dataclass
class _Reflected:
    """Lineage on one SparkContext: the ThreadLocal it sets, found once, and the Iceberg
    bridge (iceberg/java.py) whose static methods it calls; or why it is off."""

    context: Any  # the SparkContext these belong to; a restarted session has a new one
    thread_local: Any = None
    iceberg: java.Bridge | None = None
    # the entries -> the Java map committed with, built once per node and run
    maps: dict[tuple[tuple[str, str], ...], Any] = field(default_factory=dict)
    failure: str | None = None

    def java_map(self, properties: Mapping[str, str]) -> Any:
        key = tuple(sorted(properties.items()))
        found = self.maps.get(key)
        if found is None:
            if len(self.maps) >= _MAPS_KEPT:
                self.maps.clear()
            assert self.iceberg is not None
            if len(key) <= _MAP_OF_MOST:  # one round trip
                found = self.iceberg.map_of(*[item for pair in key for item in pair])
            else:  # a node's record beside lineage and its changes' entries: one per entry
                found = self.iceberg.jvm.java.util.HashMap()
                for name, value in key:
                    found.put(name, value)
            self.maps[key] = found
        return found


# java.util.Map.of takes at most 10 pairs.
_MAP_OF_MOST = 10


_MAPS_KEPT = 512
_REFLECTED: runtime.PerContext[_Reflected] = runtime.PerContext()


def _reflected(spark: Any) -> _Reflected:
    if runtime.is_connect(spark):
        return _NO_JVM_HERE
    context = spark.sparkContext
    return _REFLECTED.get(context, lambda: _reflect(spark, context))


# A Connect client has no JVM: its lineage is the session conf's (`commit_lineage`), and no
# snapshot is read back.
_NO_JVM_HERE = _Reflected(context=None, failure="the Spark driver is the Connect server's")


def _reflect(spark: Any, context: Any) -> _Reflected:
    reflected = _Reflected(context=context)
    try:
        iceberg = java.bridge(
            spark,
            "Commit lineage (dbt.invocation_id / dbt.node in snapshot summaries)",
            "use a local or cluster spark.master for snapshots that name their dbt run.",
        )
        from py4j.clientserver import ClientServer

        if not isinstance(context._gateway, ClientServer):
            # Without pinned threads a JVM thread serves whichever Python thread calls next,
            # and one node's properties could land on another node's commit.
            raise RuntimeError("PySpark runs without pinned threads (PYSPARK_PIN_THREAD=false)")
        reflected.thread_local = iceberg.private_static(_COMMIT_METADATA, _COMMIT_PROPERTIES_FIELD)
        # Looked up now, so a JVM without them turns lineage off here rather than per commit.
        iceberg.map_of, iceberg.load_table  # noqa: B018
        reflected.iceberg = iceberg
    except Exception as exc:
        text = str(getattr(exc, "msg", "") or exc).strip()
        reflected.failure = text.splitlines()[0] if text else repr(exc)
        _warn_off(reflected.failure)
    return reflected


def _warn_off(reason: str) -> None:
    logger.warning(
        "commit lineage is off for this session (snapshots will not carry "
        f"{INVOCATION_KEY} / {NODE_KEY}): {reason}"
    )


@contextmanager
def commit_lineage(
    spark: Any, connection_name: str | None, tags: str | None = None, group: str = ""
) -> Iterator[tuple[dict[str, str] | None, Any]]:
    """Around one statement run on this thread: its commits carry the invocation and node,
    and the profile's attribution tags (report/tags.py) when it has some.

    Yields (the properties set, or None when lineage is off; the session to run the statement
    on: `spark`, or under Spark Connect a clone of it for the statement, cancelled with the
    connection's Spark job group `group`).
    """
    from dbt_common.invocation import get_invocation_id

    properties = commit_properties(get_invocation_id(), connection_name)
    if tags:
        properties[QUERY_TAGS_KEY] = tags
    if runtime.is_connect(spark):
        conf = {SNAPSHOT_PROPERTY_PREFIX + key: value for key, value in properties.items()}
        with connect.commit_session(spark, group, conf) as clone:
            if clone is None:
                _say_off_once(spark, connect.commit_sessions(spark).cannot_clone or "")
                yield None, spark
            else:
                yield properties, clone
        return
    reflected = _reflected(spark)
    if reflected.failure is not None:
        yield None, spark
        return
    reflected.thread_local.set(reflected.java_map(properties))
    try:
        yield properties, spark
    finally:
        # The JVM thread serves this Python thread's later statements too: a catalog statement
        # run next must not commit under this one's name.
        reflected.thread_local.remove()


def _say_off_once(spark: Any, reason: str) -> None:
    if getattr(spark, "_lakehouse_lineage_off", None) is None:
        spark._lakehouse_lineage_off = reason
        _warn_off(f"this Spark Connect session cannot be cloned for a commit ({reason})")


def committed_snapshot(
    spark: Any, table: str, properties: Mapping[str, str] | None, kind: str | None = None
) -> int | None:
    """The id of the snapshot a statement just committed to `table`, or None.

    The head of the ref it wrote (the `spark.wap.branch` branch when the table has one, else
    main) counts only when its summary carries the statement's properties: otherwise another
    writer committed after it, or it committed nothing (e.g. a CREATE TABLE without rows).
    With the statement's `kind` (commit_kind), a node's commit is recorded for its
    adapter_response (report/work.py), from the summary read here.
    """
    if not properties:
        return None
    reflected = _reflected(spark)
    if reflected.failure is not None:
        return None
    try:
        # No refresh(): without the catalog cache (the default) this load reads the table
        # afresh; with it, the cached table is the one the statement committed through.
        assert reflected.iceberg is not None
        iceberg = reflected.iceberg.load(spark, table)
        branch = spark.conf.get(WAP_BRANCH_CONF, None)
        heads = [iceberg.snapshot(branch)] if branch else []
        # A table without write.wap.enabled ignores the branch conf and writes main.
        heads.append(iceberg.currentSnapshot())
        for head in heads:
            if head is not None and _carries(head.summary(), properties):
                snapshot_id = int(head.snapshotId())
                if kind is not None and NODE_KEY in properties:
                    work.record_snapshot(
                        head, table, kind, properties[INVOCATION_KEY], properties[NODE_KEY]
                    )
                return snapshot_id
    except Exception as exc:  # not an Iceberg table, or gone again: no snapshot to report
        logger.debug(f"no committed snapshot read for {table}: {exc}")
    return None


def _carries(summary: Any, properties: Mapping[str, str]) -> bool:
    return all(summary.get(key) == value for key, value in properties.items())


@contextmanager
def recorded_step(spark: Any, table: str, kind: str, node: str | None) -> Iterator[None]:
    """Around a step of a node that commits outside SQL statements (a maintenance procedure):
    the snapshots it made go to the node's report (report/work.py) as `kind`."""
    from dbt_common.invocation import get_invocation_id

    reflected = _reflected(spark)
    if reflected.failure is not None or not is_node_id(node):
        yield
        return
    assert reflected.iceberg is not None
    try:
        head = reflected.iceberg.load(spark, table).currentSnapshot()
        before = None if head is None else int(head.snapshotId())
    except Exception:  # no such table yet: nothing to compare with
        yield
        return
    yield
    try:
        after = reflected.iceberg.load(spark, table)
        work.record_new_snapshots(after, before, table, kind, get_invocation_id(), str(node))
    except Exception as exc:  # the report loses a line; the step itself is done
        logger.debug(f"{table}: the snapshots of {kind} not recorded: {exc}")
