"""What a query reads and whether it is deterministic, told under Spark Connect from the text of
one `EXPLAIN EXTENDED` (a Connect client gets no plan object; reuse/inputs.py reads the plan
itself where the driver is in dbt's process).

The query is explained wrapped as a CTE read twice (`probe`): Spark's optimizer inlines such a
CTE when its plan is deterministic (InlineCTE) and otherwise keeps it, each reference read
through a repartition without expressions (ReplaceCTERefWithRepartition), so a kept CTE in the
optimized plan is Spark's own verdict that the query is not deterministic
(bench/connect_determinism.py: 28 of 29 cases agree with the analysed plan's `deterministic`,
none told deterministic wrongly). From the analysed plan's text:

- the leaves: an Iceberg table of a mounted catalog (`RelationV2[...] catalog.ns.table`) is an
  input; VALUES, `range()`, a one-row SELECT and a CTE's reference are constants; any other
  leaf, a temporary view (its rows may be a DataFrame's, which the text does not print), a
  view's own VALUES (neither in the query's SQL nor printed), a branch or tag read, is not
  tracked, and the node is built;
- the expressions Spark calls deterministic that still differ from run to run (the current
  time, date, user or catalog), by their names in the text;
- the digest: the compiled SQL, without its comments and with its whitespace runs as one
  space (`sql_text`: a comment or layout edit is no change, as in process), and the analysed
  text with its per-analysis ids renumbered, so a view's new definition is a change. Every
  field is printed (the session's
  `spark.sql.debug.maxToStringFields` is raised when it starts, engine/connect.py); a text cut
  all the same is not trusted.

From the physical plan's Iceberg scans, each input's state: the snapshot read and the table's
current schema id (`_scanned`), which the metadata tables cannot give.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlparse import tokens as T

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.written import lexed_without_comments
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.metadata import SqlReader
from dbt.adapters.lakehouse.reuse.inputs import KINDS, PlanInputs

_ANALYSED = "== Analyzed Logical Plan =="
_OPTIMIZED = "== Optimized Logical Plan =="
_PHYSICAL = "== Physical Plan =="
# A CTE kept (not inlined): its references each read through a repartition without expressions
# (a user's DISTRIBUTE BY or hint names its expressions or count), or the CTE's nodes where
# that rule did not run.
KEPT_CTE = re.compile(r"^[\s:|+-]*RepartitionByExpression\s*$|CTERelationRef|WithCTE", re.M)
_TREE_PREFIX = " :|+-"
_CONSTANTS = ("LocalRelation", "OneRowRelation", "Range", "CTERelationRef", "EmptyRelation")
_TABLE = re.compile(r"^RelationV2\[.*\] (?P<name>\S+)(?P<rest>.*)$")
_TEMP_VIEW = re.compile(r"^View \(`(?P<name>[^`.]+|global_temp`\.`[^`]+)`, ")
_VALUES = "LocalRelation"
_QUALIFIED_ALIAS = re.compile(r"^SubqueryAlias [^.\s]+\.[^\s]+\.[^\s]+$")
# Deterministic to Spark, different from run to run, as the analysed text prints them.
_PER_RUN = re.compile(
    r"\b(current_timestamp|current_date|current_time|current_timezone|now|localtimestamp"
    r"|current_user|session_user|user|current_database|current_schema|current_catalog)\(\)",
    re.I,
)
_IDS = re.compile(r"#\d+L?")
_CTE_IDS = re.compile(r"\b(CTERelation(?:Def|Ref)) \d+")
_CUT = re.compile(r"\.\.\. \d+ more fields")
# Iceberg's scan in the physical plan (SparkScan.description): the table, the schema id, the
# snapshot it reads (null: none yet) and the branch.
_ICEBERG_SCAN = re.compile(
    r"IcebergScan\(table=(?P<table>[^,\s]+), schemaId=(?P<schema>\d+), "
    r"snapshotId=(?P<snapshot>-?\d+|null), branch=(?P<branch>[^,\s]+)"
)
# A leaf's class as the text names it, where the name differs from the class's (inputs.KINDS).
_CLASS_OF = {"Relation": "LogicalRelation"}


def probe(query: str) -> str:
    """The query as a CTE read twice, with a column of its own on top (a user's DISTRIBUTE BY
    cannot then be the CTE's top node). The second read is `where false`: the optimizer decides
    whether to inline the CTE (its first batches, counting both reads) before it prunes that
    read, so the query is optimized and planned once, not twice (0.69-0.83x the server's CPU
    of a probe planning both, bench/connect_decision_cost.py)."""
    return (
        f"with lakehouse_probe as (select *, 1 as lakehouse_marker from ({query}) q) "
        "select * from lakehouse_probe union all select * from lakehouse_probe where false"
    )


def connect_inputs(spark: Any, query: str, catalogs: Collection[str]) -> PlanInputs:
    """The inputs of `query` as the Connect server analyses it; `catalogs`: the mounted
    Iceberg catalogs' names."""
    try:
        text = runtime.explain_extended(spark, probe(query))
    except Exception as exc:  # the query fails its analysis: its build says why
        text = str(exc)
    return inputs_of(text, query, catalogs)


def inputs_and_metadata(
    spark: Any,
    query: str,
    catalogs: Collection[str],
    read: SqlReader,
    own: Sequence[TableName],
) -> PlanInputs:
    """`connect_inputs`, with the metadata a decision reads next: that of the node's own table
    (`own`, its snapshots too) beside the `EXPLAIN`, on a thread of its own (a Connect session
    takes concurrent requests), then, in one statement, that of any input the `EXPLAIN`'s scans
    do not tell (`PlanInputs.scanned`). Both reads end before the node's statement runs, as its
    record requires. The side thread's statement carries no node tag: a cancelled node's short
    metadata read ends on its own.

    The own table's schema is the log's, its latest snapshot's: a column of it dropped and
    added again outside dbt (no snapshot) goes unseen here, where the driver's metadata sees
    it in process. Its current schema id (a scan's) would see it, and would see as well the
    column comments `persist_docs` sets after each build, so that such a node were never
    reused."""
    rows = functools.partial(runtime.rows, spark)
    with ThreadPoolExecutor(1, thread_name_prefix="lakehouse-metadata") as pool:
        ahead = pool.submit(read.prefetch, own, own, rows) if own else None
        inputs = connect_inputs(spark, query, catalogs)
    if ahead is not None:
        ahead.result()
    unscanned = [t for t in inputs.tables if str(t) not in inputs.scanned]
    if unscanned:
        read.prefetch(unscanned, ())
    return inputs


def inputs_of(text: str, query: str, catalogs: Collection[str]) -> PlanInputs:
    """The inputs an `EXPLAIN EXTENDED` text of `probe(query)` tells."""
    if _ANALYSED not in text or _OPTIMIZED not in text:
        first = text.strip().splitlines()[0] if text.strip() else "nothing"
        return PlanInputs((), (f"its plan could not be read ({first})",), (), "")
    analysed = text.split(_ANALYSED, 1)[1].split(_OPTIMIZED, 1)[0]
    optimized, _, physical = text.split(_OPTIMIZED, 1)[1].partition(_PHYSICAL)
    mounted = {c.lower() for c in catalogs}
    tables: dict[str, TableName] = {}
    untracked: list[str] = []
    if _CUT.search(analysed):
        untracked.append("its plan's text is cut (spark.sql.debug.maxToStringFields)")
    for leaf, above in _leaves(analysed):
        # Every view has a leaf below it: its node is among that leaf's ancestors.
        for view in filter(None, map(_TEMP_VIEW.match, above)):
            name = view.group("name").replace("`.`", ".")
            untracked.append(f"reads the temporary view {name}")
        if leaf.startswith(_VALUES) and _in_a_view(above):
            # A view's VALUES: its rows are not printed, nor in the query's SQL.
            untracked.append("reads rows a view holds in its text (VALUES)")
            continue
        if leaf.startswith(_CONSTANTS):
            continue
        found = _table(leaf, mounted)
        if isinstance(found, TableName):
            tables[str(found)] = found
        else:
            untracked.append(found)
    varying = sorted({m.group(1).lower() for m in _PER_RUN.finditer(analysed)})
    if KEPT_CTE.search(optimized):
        varying.append("a non-deterministic expression")
    normalized = _CTE_IDS.sub(r"\1 n", _IDS.sub("#", analysed))
    digest = hashlib.sha256(f"{sql_text(query)}\n{normalized}".encode()).hexdigest()
    return PlanInputs(
        tuple(tables[k] for k in sorted(tables)),
        tuple(dict.fromkeys(untracked)),
        tuple(varying),
        digest,
        query=query,
        scanned=_scanned(physical, tables),
    )


def _scanned(physical: str, tables: Mapping[str, TableName]) -> dict[str, tuple[int | None, str]]:
    """(snapshot, schema id) of each input the physical plan scans, as Iceberg's scan prints
    them: the snapshot the query reads and the table's current schema, the state an input's
    metadata would give, with no read of it. The metadata tables cannot give the current
    schema (`metadata_log_entries` has the latest snapshot's; a column dropped and added again
    makes a new schema and no snapshot). A table scanned at two states, or on a branch, is
    left to its metadata; one not scanned (its rows pruned by the optimizer) reads none."""
    found: dict[str, set[tuple[int | None, str]]] = {}
    for scan in _ICEBERG_SCAN.finditer(physical):
        snapshot = scan.group("snapshot")
        state = (None if snapshot == "null" else int(snapshot), scan.group("schema"))
        if scan.group("branch") != "null":
            state = (None, "")  # a branch's: never taken for the table's main
        found.setdefault(scan.group("table"), set()).add(state)
    return {
        name: state
        for name, states in found.items()
        for state in states
        if name in tables and len(states) == 1 and state[1]
    }


def sql_text(query: str) -> str:
    """The query's SQL as the digest takes it: without its comments (an optimizer hint, which
    can change the plan, kept; engine/written.py), each run of whitespace outside literals and
    quoted names one space."""
    parts: list[str] = []
    for kind, value in lexed_without_comments(query):
        if kind in T.Whitespace:
            if parts and parts[-1] != " ":
                parts.append(" ")
            continue
        parts.append(value)
    return "".join(parts).strip()


def _leaves(tree: str) -> list[tuple[str, list[str]]]:
    """The tree's leaves (nodes whose next line is no deeper than they are), each with the
    texts of the nodes above it, without their tree prefixes (the text's first line, the
    output's columns, is not a node)."""
    lines = [line for line in tree.strip().splitlines()[1:] if line.strip()]
    depths = [len(line) - len(line.lstrip(_TREE_PREFIX)) for line in lines]
    found: list[tuple[str, list[str]]] = []
    above: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        while above and above[-1][0] >= depths[i]:
            above.pop()
        text = line.lstrip(_TREE_PREFIX)
        if i + 1 == len(lines) or depths[i + 1] <= depths[i]:
            found.append((text, [t for _, t in above]))
        above.append((depths[i], text))
    return found


def _in_a_view(above: list[str]) -> bool:
    """Whether a node is part of a view's plan: below a View node (a temporary or session
    catalog's view) or a catalog view's alias (`SubqueryAlias catalog.ns.view`)."""
    return any(t.startswith("View (") or _QUALIFIED_ALIAS.match(t) for t in above)


def _table(leaf: str, mounted: set[str]) -> TableName | str:
    """The Iceberg table a leaf reads, or why it is not such an input."""
    found = _TABLE.match(leaf)
    if found is None:
        kind = leaf.split(" ", 1)[0].split("[", 1)[0]
        return f"reads {KINDS.get(_CLASS_OF.get(kind, kind), f'a {kind}')}"
    name = found.group("name")
    parts = name.split(".")
    if len(parts) < 3 or parts[0].lower() not in mounted:
        return f"reads {name}, which is not an Iceberg table of a mounted catalog"
    if parts[-1].startswith(("branch_", "tag_")):
        return f"reads {name}, a branch or tag"
    return TableName(parts[0], ".".join(parts[1:-1]), parts[-1])
