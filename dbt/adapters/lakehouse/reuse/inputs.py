"""What a model's query reads and whether its rows can change between two runs of the same
tables, decided from Spark's analyzed plan (analysis only: no Spark job, no data read).

- The leaves of the plan and of every subquery in it: an Iceberg table of a mounted catalog is
  an input whose `main` snapshot is recorded; VALUES, `range()` and a one-row SELECT are
  constants; anything else (files read by path, Hive or JDBC tables, a temporary view over a
  DataFrame, another catalog's table) cannot say whether it moved, so the node is not reused.
  Views are inlined by the analyzer, so a view's tables are the node's inputs; a view this run
  reads through a stand-in (a checkpoint) counts as what its own decision recorded
  (reuse/stand_ins.py).
- Spark's own `deterministic` (rand, uuid, shuffle, a non-deterministic UDF, ...) and the
  expressions Spark calls deterministic that still differ from run to run (the current time,
  date, user or catalog).
- A digest of the analyzed plan with its per-analysis ids renumbered, after Spark's own rules
  that drop what the result does not use (`pruned_plan`): the query's meaning (the SQL of
  every view it reads included), not its text, so a whitespace or comment edit is no change,
  nor a column added upstream that the query does not read, while a view's new definition of
  a column it reads is one. Determinism is judged on the whole analysed plan.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.runtime import scala_items
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse import plan_facts
from dbt.adapters.lakehouse.reuse.memo import watched_objects
from dbt.adapters.lakehouse.reuse.stand_ins import cut_stand_ins, stand_ins_read

logger = AdapterLogger("Lakehouse")

# Leaves whose rows are in the plan itself: constants, and a reference to a CTE (its definition
# is a child of the plan's WithCTE, so its own leaves are collected there).
_CONSTANT_LEAVES = frozenset({"LocalRelation", "OneRowRelation", "Range", "CTERelationRef"})
# Deterministic to Spark (one value per query), different from run to run or session to session.
_PER_RUN = frozenset(
    {"CurrentTimestamp", "CurrentDate", "CurrentTime", "CurrentTimeZone", "CurrentBatchTimestamp",
     "Now", "LocalTimestamp", "LocalTime", "CurrentUser", "SessionUser", "CurrentDatabase",
     "CurrentCatalog"}
)  # fmt: skip
_ICEBERG_TABLE = "org.apache.iceberg.spark.source.SparkTable"
# A leaf that is not an Iceberg table, as the reason names it.
KINDS = {
    "LogicalRelation": "files by path, or a file-based table",
    "HiveTableRelation": "a Hive table",
    "LogicalRDD": "a temporary view over a DataFrame",
    "ExternalRDD": "a temporary view over a DataFrame",
    "StreamingRelation": "a stream",
    "StreamingRelationV2": "a stream",
}


@dataclass(frozen=True)
class PlanInputs:
    tables: tuple[TableName, ...]
    # Why the rows cannot be known to be unchanged, for the log ("reads files by path ...").
    untracked: tuple[str, ...]
    # The expressions that make two runs differ (class names, e.g. Rand, CurrentTimestamp).
    varying: tuple[str, ...]
    digest: str
    # The analysed query, which a data test that runs goes on to run, and a view's stand-in
    # reads (engine/prepared.py); `query`: its text (over this run's stand-ins, or not).
    frame: Any = field(default=None, compare=False, repr=False)
    query: str = field(default="", compare=False, repr=False)
    # Each input table's metadata JSON as the analysis loaded it (plan_facts), by its name.
    metadata: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    # Every catalog object the analysis resolved (its tables and the views it inlined), which
    # a remembered decision watches (reuse/memo.py), through a stand-in what its view's
    # decision watched and the view; None where they cannot all be told: asked through py4j, a
    # temporary or session view read, a function or variable of the session's own (whose
    # definition no catalog object holds), a stand-in whose view's decision told none.
    objects: tuple[TableName, ...] | None = field(default=None, compare=False, repr=False)
    # Under Spark Connect, each input's (snapshot, schema id) as the EXPLAIN's scans print them
    # (reuse/connect_inputs.py), by its name: its state without a read of its metadata.
    scanned: Mapping[str, tuple[int | None, str]] = field(
        default_factory=dict, compare=False, repr=False
    )


def node_inputs(spark: Any, query: str) -> PlanInputs:
    """The inputs of a node's query: over this run's stand-ins where it reads them and each
    recorded what its view reads (reuse/stand_ins.py), else over the views."""
    over, stand_ins = stand_ins_read(query, spark)
    if stand_ins:
        try:
            inputs = plan_inputs(spark, over, stand_ins)
            views = ", ".join(sorted(view for view, _ in stand_ins.values()))
            logger.debug(f"inputs read through this run's stand-ins for {views}")
            return inputs
        except ValueError as exc:  # the plan's parts could not be told apart
            logger.debug(f"inputs analysed over the views, not the stand-ins: {exc}")
    return plan_inputs(spark, query)


def plan_inputs(
    spark: Any, sql: str, stand_ins: Mapping[str, tuple[str, PlanInputs]] | None = None
) -> PlanInputs:
    """The inputs of `sql` (a query) as the analyzer resolves them in this session.
    `stand_ins`: the temporary views standing in for views that `sql` reads (lower case) ->
    (the view, what its query reads): each one's part of the plan counts as that (a Merkle
    digest, reuse/stand_ins.py)."""
    frame = runtime.sql(spark, sql)
    analyzed = frame._jdf.queryExecution().analyzed()
    # Without stand-ins the driver answers for every leaf at once (reuse/plan_facts.py); a
    # stand-in's part of the plan is told from its JSON, plan by plan.
    facts = None if stand_ins else plan_facts.describe(spark, analyzed)
    # The analysed plan's JSON only where something reads it: the digest where the driver did
    # not prune the plan, the stand-ins' cut, the classes where the driver did not name them.
    document = "" if facts is not None and facts.pruned else analyzed.toJSON()
    metadata: dict[str, str] = {}
    if facts is not None:
        per_plan = [[_leaf_of(fact, metadata) for fact in found] for found in facts.leaves]
        deterministic = all(facts.deterministic)
        digested = facts.pruned
    else:
        plans = [analyzed, *scala_items(analyzed.subqueriesAll())]
        per_plan = [_leaves(plan.collectLeaves()) for plan in plans]
        deterministic = all(plan.deterministic() for plan in plans)
        digested = None if stand_ins else pruned_plan(spark, analyzed, len(per_plan[0]))
    # which leaves of each plan are a stand-in's, and what the stand-ins read
    inside: list[list[bool] | None] = [None] * len(per_plan)
    below: list[PlanInputs] = []
    resolved: tuple[list[tuple[str, ...]], int] = ([], 0)
    if stand_ins:
        document, inside, below, resolved = cut_stand_ins(document, plans, stand_ins)
    elif facts is not None:
        resolved = (list(facts.objects), facts.views)
    tables: dict[str, TableName] = {}
    untracked: list[str] = []
    # Each leaf as the plan's JSON does not say it, in plan order: a table's name (its JSON
    # has `"table": null`: `a EXCEPT b` and `b EXCEPT a` would digest alike), VALUES' rows.
    leaves: list[str] = []
    for found_leaves, cut_out in zip(per_plan, inside, strict=True):
        if cut_out is not None and len(cut_out) != len(found_leaves):
            raise ValueError("a plan's leaves and its JSON's differ")
        for i, (kind, data, found) in enumerate(found_leaves):
            if cut_out is not None and cut_out[i]:
                continue
            if data is not None:
                leaves.append(data)
            if kind in _CONSTANT_LEAVES:
                continue
            if isinstance(found, TableName):
                tables[str(found)] = found
                leaves.append(str(found))
            else:
                untracked.append(found or f"reads {KINDS.get(kind, f'a {kind}')}")
    classes = set(facts.classes) if facts is not None else set(_classes_of(document))
    varying = classes & _PER_RUN
    varying_below = {name for inputs in below for name in inputs.varying}
    if not deterministic:
        # Spark's answer covers the stand-ins' parts too, whose recorded inputs name theirs
        named = _nondeterministic_name(classes)
        if named != _UNNAMED or not varying_below:
            varying.add(named)
    varying |= varying_below
    for inputs in below:
        tables.update((str(t), t) for t in inputs.tables)
        untracked.extend(inputs.untracked)
    # what the stand-ins read watched: each one's view and what its decision watched
    watched_below = [inputs.objects for _, inputs in (stand_ins or {}).values()]
    objects = (
        None
        if facts is None and not stand_ins
        else watched_objects(*resolved, classes, tables, watched_below)
    )
    return PlanInputs(
        tuple(tables[k] for k in sorted(tables)),
        tuple(dict.fromkeys(untracked)),
        tuple(sorted(varying)),
        plan_digest(digested[1], digested[0]) if digested else plan_digest(document, leaves),
        frame,
        sql,
        metadata,
        objects,
    )


def _classes_of(document: str) -> list[str]:
    """The simple names of a plan JSON's tree nodes (its `"class"` fields)."""
    return re.findall(r'"class":"[\w.$]*?\.?(\w+)"', document)


# A leaf's text with its expression ids left out: two leaves with the same text read the same
# relation the same way (a view read twice is two leaves, each with its own ids); a table's text
# names its branch or version (`t.branch_b`, `t VERSION AS OF 'b'`), VALUES' text not its rows.
_EXPR_ID = re.compile(r"#\d+L?")
_LEAF_SEPARATOR = "\u0000"


def _leaves(found: Any) -> list[tuple[str, str | None, TableName | str | None]]:
    """Each leaf of a plan as (its class's simple name, a VALUES leaf's rows, its Iceberg table
    or why it is not one), in plan order. A view stacked on views is one leaf per reference
    (2^n over n levels that each read the one below twice): each distinct leaf is asked about
    once, the others take its answer (a dozen py4j round trips a leaf otherwise)."""
    count = found.size()
    if count == 0:
        return []
    texts = str(found.mkString(_LEAF_SEPARATOR)).split(_LEAF_SEPARATOR)
    if len(texts) != count:  # a leaf's text holding the separator: ask each one
        texts = [str(i) for i in range(count)]
    answers: dict[str, tuple[str, str | None, TableName | str | None]] = {}
    out = []
    for i, text in enumerate(texts):
        key = _EXPR_ID.sub("#", text)
        if key.startswith("LocalRelation"):  # its rows are not in its text: asked each time
            out.append(_leaf(found.apply(i)))
            continue
        if key not in answers:
            answers[key] = _leaf(found.apply(i))
        out.append(answers[key])
    return out


def _leaf_of(
    fact: Mapping[str, Any], metadata: dict[str, str]
) -> tuple[str, str | None, TableName | str | None]:
    """A leaf as `_leaf` tells it, from the driver's facts (plan_facts); an Iceberg input's
    metadata JSON into `metadata`."""
    kind = str(fact["kind"])
    if kind != "DataSourceV2Relation":
        return kind, fact.get("data"), None
    if "name" not in fact:
        return kind, None, f"reads {fact['table']}, a table without a catalog identifier"
    name = TableName(fact["catalog"], fact["namespace"], fact["name"])
    found = _main_of(name, fact["table_class"], fact.get("branch"))
    if isinstance(found, TableName) and "metadata" in fact:
        metadata[str(name)] = fact["metadata"]
    return kind, None, found


def _leaf(leaf: Any) -> tuple[str, str | None, TableName | str | None]:
    kind = str(leaf.getClass().getSimpleName())
    data = str(leaf.data().mkString("\n")) if kind == "LocalRelation" else None
    found = _iceberg_table(leaf) if kind == "DataSourceV2Relation" else None
    return kind, data, found


def _iceberg_table(leaf: Any) -> TableName | str:
    """The Iceberg table a DSv2 leaf reads at `main`, or why it is not one."""
    table = leaf.table()
    identifier = leaf.identifier()
    catalog = leaf.catalog()
    if identifier.isEmpty() or catalog.isEmpty():
        return f"reads {table.name()}, a table without a catalog identifier"
    ident = identifier.get()
    name = TableName(catalog.get().name(), ".".join(ident.namespace()), ident.name())
    table_class = table.getClass().getName()
    branch = _call_or_none(table, "branch") if table_class == _ICEBERG_TABLE else None
    return _main_of(name, table_class, branch)


def _main_of(name: TableName, table_class: str, branch: str | None) -> TableName | str:
    """`name` when it is an Iceberg table read at `main`, else why it is not such an input."""
    if table_class != _ICEBERG_TABLE:
        return f"reads {name}, which is not an Iceberg table"
    if branch not in (None, "main"):
        return f"reads branch {branch} of {name}"
    return name


_UNNAMED = "a non-deterministic expression"


def _nondeterministic_name(classes: set[str]) -> str:
    known = sorted(c for c in classes if c in _NONDETERMINISTIC)
    return known[0] if known else _UNNAMED


# Spark's Nondeterministic expressions most models meet, to name the one found.
_NONDETERMINISTIC = frozenset(
    {"Rand", "Randn", "Uuid", "Shuffle", "MonotonicallyIncreasingID", "SparkPartitionID",
     "InputFileName", "InputFileBlockStart", "InputFileBlockLength", "RandStr", "Uniform",
     "ScalaUDF", "PythonUDF"}
)  # fmt: skip


# Spark's own rules, in the order its optimizer runs them, that leave a plan meaning the same
# while dropping what its result does not use: CTEs inlined (InlineCTE, every one: a query
# that is not deterministic is never reused, whatever its digest), views and aliases
# unwrapped, columns no operator above reads pruned (an upstream's new column the node does
# not select), no-op projections.
_INLINE_CTE = "org.apache.spark.sql.catalyst.optimizer.InlineCTE"
_PRUNING = (
    "org.apache.spark.sql.catalyst.analysis.EliminateView$",
    "org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases$",
)
_PRUNING_ROUNDS = (
    "org.apache.spark.sql.catalyst.optimizer.ColumnPruning$",
    "org.apache.spark.sql.catalyst.optimizer.RemoveNoopOperators$",
)


def pruned_plan(spark: Any, analyzed: Any, leaf_count: int) -> tuple[list[str], str] | None:
    """The analysed plan as its digest takes it, after `_INLINE_CTE` and `_PRUNING` once and
    `_PRUNING_ROUNDS` until the plan stops changing: its leaves' texts (each leaf of it and of
    its subqueries in plan order, without expression ids: a table's names it, a VALUES leaf's
    with its rows; inlined CTEs repeat theirs) and its JSON. plan_facts' `prune` answers the
    same on the driver; this asks through py4j where that class did not compile. None (the
    analysed plan is digested) for a plan of many leaves, or where a rule fails. Two plans
    equal after Spark's own rewrites return the same rows from the same tables: the digest is
    only as strict as Spark's execution of the query, which runs the pruned plan."""
    if leaf_count > plan_facts.MAX_PRUNED_LEAVES:
        return None
    gateway = spark.sparkContext._gateway

    def apply(rule: str, plan: Any) -> Any:
        return getattr(runtime.java_class(gateway, rule), "MODULE$").apply(plan)

    try:
        inline = runtime.java_class(gateway, _INLINE_CTE)
        try:  # InlineCTE(alwaysInline, keepDanglingRelations) on Spark 4, (alwaysInline) on 3.5
            plan = inline(True, False).apply(analyzed)
        except Exception:
            plan = inline(True).apply(analyzed)
        for rule in _PRUNING:
            plan = apply(rule, plan)
        for _ in range(plan_facts.MAX_PRUNING_ROUNDS):
            pruned = plan
            for rule in _PRUNING_ROUNDS:
                pruned = apply(rule, pruned)
            if pruned.fastEquals(plan):
                break
            plan = pruned
        texts = [_leaf_text(plan) for plan in [pruned, *scala_items(pruned.subqueriesAll())]]
        return [text for found in texts for text in found], str(pruned.toJSON())
    except Exception as exc:  # another Spark without these rules: the analysed plan's digest
        logger.debug(f"the plan's digest is taken unpruned: {exc}")
        return None


def _leaf_text(plan: Any) -> list[str]:
    """The texts of a plan's leaves as plan_facts' `leafTexts` makes them."""
    found = plan.collectLeaves()
    texts = []
    for i in range(found.size()):
        leaf = found.apply(i)
        text = _EXPR_ID.sub("#", str(leaf.toString()))
        if str(leaf.getClass().getSimpleName()) == "LocalRelation":
            text += "\n" + str(leaf.data().mkString("\n"))
        texts.append(text)
    return texts


def plan_digest(document: str, leaves: list[str] | None = None) -> str:
    """A plan's JSON with the ids one analysis hands out renumbered in order of
    appearance, so two analyses of one query digest alike: expression ids (in `ExprId`
    objects, whose `jvmId` is dropped) and CTE ids (a definition's `id`, a reference's
    `cteId`), each numbered apart; with what its leaves are (`leaves`, in plan order: tables'
    names, VALUES' rows), which the JSON does not hold."""
    numbered: dict[str, dict[int, int]] = {"expr": {}, "cte": {}}

    def renumber(space: str, value: int) -> int:
        ids = numbered[space]
        return ids.setdefault(value, len(ids))

    def canonical(node: Any) -> Any:
        if isinstance(node, list):
            return [canonical(v) for v in node]
        if not isinstance(node, dict):
            return node
        is_expr_id = str(node.get("product-class", "")).endswith("ExprId")
        out = {}
        for key, value in node.items():
            if key == "jvmId":
                continue
            if key in ("id", "cteId") and isinstance(value, int):
                out[key] = renumber("expr" if is_expr_id else "cte", value)
            else:
                out[key] = canonical(value)
        return out

    normalized = json.dumps(canonical(json.loads(document)), sort_keys=True)
    if leaves:
        normalized += "\n" + json.dumps(leaves)
    return hashlib.sha256(normalized.encode()).hexdigest()


def _call_or_none(obj: Any, method: str) -> Any:
    try:
        return getattr(obj, method)()
    except Exception:  # an older Iceberg without the method: no branch read
        return None
