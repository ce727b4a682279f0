"""A node's inputs read through this run's stand-ins (view checkpoints, checkpoints/): a Merkle
digest, so that deciding whether a node over a deep stack of views is reused does not analyse
the stack again.

Spark inlines views, so the plan of a query over a stack of views that each read the level below
twice holds 2^depth copies of it, and analysing it takes seconds (bench/RESULTS.md: stacked
views). Each view of the run that has a stand-in was decided earlier in the run, when its own
query was analysed over the stand-ins beneath it: what it reads (its tables, what makes it
untracked or non-deterministic, its digest) is recorded for it then (`remember`). A reader's
query is then analysed over the stand-ins, each stand-in's part of the plan is cut out and
replaced by its view's name and recorded digest, and its recorded inputs are added to the
reader's own: the same facts as the analysis over the views, from a plan as small as the
reader's own query.

Anything else is analysed over the views, as before: a query reading no stand-in, a stand-in
whose view recorded nothing (reuse off for it, or Spark Connect), a plan whose parts cannot be
told apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from dbt.adapters.lakehouse.checkpoints import registry

# A plan's JSON: its nodes in pre-order, each with how many children follow it.
Tree = list[dict[str, Any]]
_ALIAS = "org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias"
_VIEW = "org.apache.spark.sql.catalyst.plans.logical.View"
STAND_IN_CLASS = "lakehouse.StandIn"


def remember(view: str, inputs: Any) -> None:
    """What `view`'s query reads (reuse/inputs.py PlanInputs, its frame and text left out), for
    the readers of its stand-in later in this run."""
    invocation = registry.current_invocation()
    registry.record_inputs(invocation, view, replace(inputs, frame=None, query=""))


def stand_ins_read(query: str, spark: Any) -> tuple[str, dict[str, tuple[str, Any]]]:
    """The query as this run's analyses read it (over the stand-ins' shapes, made in `spark`
    where not yet), with each shape it names -> (its view, what the view recorded); the query
    itself and nothing when it reads no stand-in or one of them recorded nothing."""
    invocation = registry.current_invocation()
    rewritten = registry.with_checkpoints(query, invocation, shapes=True)
    if rewritten is query:
        return query, {}
    named = {}
    for temp, (view, inputs) in registry.stand_in_inputs(invocation).items():
        if f"`{temp}`" in rewritten:
            if inputs is None:
                return query, {}
            named[temp.lower()] = (view, inputs)
    if not named:
        return query, {}
    registry.compute_read(rewritten, spark, invocation)
    return rewritten, named


def cut_stand_ins(
    document: str, plans: list[Any], stand_ins: Mapping[str, tuple[str, Any]]
) -> tuple[str, list[list[bool] | None], list[Any], tuple[list[tuple[str, ...]], int]]:
    """The plan's JSON with each stand-in's part replaced by its view's name and digest; for
    each plan (the query's, then its subqueries'), which of its leaves were a stand-in's; what
    the stand-ins found read; the catalog objects the rest resolved and its View nodes."""
    tokens = {t: token(view, inputs.digest) for t, (view, inputs) in stand_ins.items()}
    tree, own_inside, found = cut(json.loads(document), tokens)
    inside: list[list[bool] | None] = [own_inside]
    trees = [tree]
    for plan in plans[1:]:
        subquery, subquery_inside, _ = cut(json.loads(plan.toJSON()), tokens)
        inside.append(subquery_inside)
        trees.append(subquery)
    # as compact as Spark's JSON (the classes are found in it); the plan's columns are
    # qualified by the stand-ins' names, which are the run's own: the views' instead
    cut_document = json.dumps(tree, separators=(",", ":"))
    for temp, (view, _) in stand_ins.items():
        cut_document = cut_document.replace(temp, view)
    below = [stand_ins[t][1] for t in sorted(found)]
    return cut_document, inside, below, resolved_objects(trees)


def cut(tree: Tree, tokens: Mapping[str, dict[str, Any]]) -> tuple[Tree, list[bool], set[str]]:
    """`tree` (a plan's JSON) with the part under each stand-in (a SubqueryAlias named in
    `tokens`, lower case) replaced by its token (a leaf); whether each leaf of the plan, in
    pre-order, was inside such a part; the stand-ins found. Plans nested in expressions
    (subqueries) are cut too; their leaves are not the plan's own (Spark's collectLeaves)."""
    out: Tree = []
    inside: list[bool] = []
    found: set[str] = set()
    i = 0
    while i < len(tree):
        node = tree[i]
        name = _alias_name(node)
        if name is not None and name in tokens:
            end = subtree_end(tree, i)
            inside.extend(True for n in tree[i:end] if n.get("num-children") == 0)
            out.append(tokens[name])
            found.add(name)
            i = end
            continue
        if node.get("num-children") == 0:
            inside.append(False)
        out.append({key: _cut_nested(value, tokens, found) for key, value in node.items()})
        i += 1
    return out, inside, found


def resolved_objects(trees: list[Tree]) -> tuple[list[tuple[str, ...]], int]:
    """What plan_facts.py's driver tells of an analysed plan, from plans' JSON (each cut of its
    stand-ins): the qualified names (catalog, namespace..., name) of its aliases, which name the
    catalog objects the analyzer resolved, and how many View nodes it holds (a temporary
    view, a session catalog's view), which name none. Spark writes a non-empty qualifier as
    the text `[a, b]`: a name holding `, ` is split wrongly, then found in no catalog, and the
    decision is not remembered."""
    resolved: dict[tuple[str, ...], None] = {}
    views = 0
    pending: list[Any] = list(trees)
    while pending:
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(value)
            continue
        if not isinstance(value, dict):
            continue
        if value.get("class") == _VIEW:
            views += 1
        qualifier = (value.get("identifier") or {}) if value.get("class") == _ALIAS else {}
        qualifier = qualifier.get("qualifier") if isinstance(qualifier, dict) else None
        if isinstance(qualifier, str) and qualifier.strip("[]"):
            parts = qualifier.strip("[]").split(", ")
            resolved[tuple([*parts, str(value["identifier"].get("name"))])] = None
        pending.extend(v for v in value.values() if isinstance(v, (list, dict)))
    return list(resolved), views


def subtree_end(tree: Tree, start: int) -> int:
    """The index just past the subtree rooted at `start`."""
    pending, i = 1, start
    while pending:
        if i >= len(tree):
            raise ValueError("a plan's JSON ended inside a subtree")
        pending += int(tree[i].get("num-children", 0)) - 1
        i += 1
    return i


def token(view: str, digest: str) -> dict[str, Any]:
    """What stands in a reader's plan for a stand-in's part: its view and that view's digest."""
    return {"class": STAND_IN_CLASS, "num-children": 0, "view": view, "digest": digest}


def _alias_name(node: dict[str, Any]) -> str | None:
    if node.get("class") != _ALIAS:
        return None
    identifier = node.get("identifier")
    if not isinstance(identifier, dict) or not isinstance(identifier.get("name"), str):
        return None
    return str(identifier["name"]).lower()


def _is_tree(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(n, dict) and "num-children" in n for n in value)
    )


def _cut_nested(value: Any, tokens: Mapping[str, dict[str, Any]], found: set[str]) -> Any:
    if _is_tree(value):
        nested, _, seen = cut(value, tokens)
        found |= seen
        return nested
    if isinstance(value, list):
        return [_cut_nested(v, tokens, found) for v in value]
    if isinstance(value, dict):
        return {k: _cut_nested(v, tokens, found) for k, v in value.items()}
    return value
