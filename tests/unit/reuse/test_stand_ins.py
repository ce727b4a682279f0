"""A reader's plan with its stand-ins' parts cut out and what it watched (reuse/stand_ins.py),
and a view's stored definition (reuse/plan.py view_definition)."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.memo import watched_objects
from dbt.adapters.lakehouse.reuse.plan import view_definition
from dbt.adapters.lakehouse.reuse.stand_ins import (
    STAND_IN_CLASS,
    cut,
    resolved_objects,
    subtree_end,
    token,
)

LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."


def node(kind: str, children: int, **fields) -> dict:
    return {"class": LOGICAL + kind, "num-children": children, **fields}


def alias(name: str) -> dict:
    return node("SubqueryAlias", 1, identifier={"name": name, "qualifier": []})


def stand_in_part(name: str) -> list[dict]:
    # SubqueryAlias(temp) -> View(temp, createTime: differs per run) -> Project -> leaf
    return [
        alias(name),
        node("View", 1, desc={"createTime": 17}),
        node("Project", 1),
        {"class": "org.apache.spark.sql.execution.LogicalRDD", "num-children": 0},
    ]


def test_a_stand_in_part_becomes_its_token_and_its_leaves_are_marked():
    tree = [
        node("Join", 2),
        *stand_in_part("lakehouse_checkpoint__a__123"),
        alias("b"),
        node("DataSourceV2Relation", 0),
    ]
    tokens = {"lakehouse_checkpoint__a__123": token("`c`.`s`.`a`", "d1")}
    out, inside, found = cut(tree, tokens)
    assert [n["class"] for n in out] == [
        LOGICAL + "Join",
        STAND_IN_CLASS,
        LOGICAL + "SubqueryAlias",
        LOGICAL + "DataSourceV2Relation",
    ]
    assert out[1]["view"] == "`c`.`s`.`a`" and out[1]["digest"] == "d1"
    assert inside == [True, False]  # the checkpoint's leaf, then the table
    assert found == {"lakehouse_checkpoint__a__123"}


def test_names_match_in_any_case_and_other_aliases_stay():
    tree = [alias("LAKEHOUSE_VIEW__A__9"), node("OneRowRelation", 0)]
    out, inside, found = cut(tree, {"lakehouse_view__a__9": token("v", "d")})
    assert out == [token("v", "d")] and inside == [True] and found == {"lakehouse_view__a__9"}
    same, inside, found = cut(tree, {"other": token("v", "d")})
    assert same == tree and inside == [False] and not found


def test_a_subquery_plan_nested_in_an_expression_is_cut_but_its_leaves_are_not_the_plans():
    subquery = [node("Aggregate", 1), *stand_in_part("t1")]
    expression = [
        {"class": "org.apache.spark.sql.catalyst.expressions.ScalarSubquery", "num-children": 0,
         "plan": subquery}
    ]  # fmt: skip
    tree = [node("Filter", 1, condition=expression), node("LocalRelation", 0)]
    out, inside, found = cut(tree, {"t1": token("v1", "d1")})
    nested = out[0]["condition"][0]["plan"]
    assert nested == [node("Aggregate", 1), token("v1", "d1")]
    assert inside == [False] and found == {"t1"}


def test_the_digest_of_two_runs_differs_only_by_the_stand_ins_recorded_digest():
    first = cut(stand_in_part("t_run1"), {"t_run1": token("v", "same")})[0]
    second = cut(stand_in_part("t_run2"), {"t_run2": token("v", "same")})[0]
    changed = cut(stand_in_part("t_run2"), {"t_run2": token("v", "other")})[0]
    assert first == second != changed


def qualified(name: str, qualifier: str) -> dict:
    # Spark writes a non-empty qualifier as text, an empty one as a list
    return node("SubqueryAlias", 1, identifier={"name": name, "qualifier": qualifier})


def test_what_a_cut_plan_resolved_and_what_its_stand_ins_watched():
    subquery = [qualified("src", "[lakehouse, raw]"), node("DataSourceV2Relation", 0)]
    tree = [
        node("Join", 2),
        token("`lakehouse`.`s`.`a`", "d1"),
        qualified("b", "[lakehouse, s]"),
        node("Filter", 1, condition=[{"class": "InSubquery", "plan": subquery}]),
        alias("x"),  # an alias of the query's own: no catalog object
        node("DataSourceV2Relation", 0),
    ]
    resolved, views = resolved_objects([tree])
    assert sorted(resolved) == [("lakehouse", "raw", "src"), ("lakehouse", "s", "b")]
    assert views == 0
    a, t = TableName("lakehouse", "s", "a"), TableName("lakehouse", "raw", "t")
    watched = watched_objects(resolved, views, {"Join"}, {str(t): t}, [(a, t)])
    assert watched is not None
    assert [str(n) for n in watched] == sorted(
        str(n)
        for n in (a, t, TableName("lakehouse", "raw", "src"), TableName("lakehouse", "s", "b"))
    )
    # a stand-in whose view's decision could not tell its objects, a temporary view of the
    # session's own, a function it defined: nothing to watch
    assert watched_objects(resolved, views, set(), {}, [None]) is None
    _, temp_views = resolved_objects([[alias("mine"), node("View", 1), node("OneRowRelation", 0)]])
    assert temp_views == 1 and watched_objects([], temp_views, set(), {}) is None
    assert watched_objects(resolved, 0, {"PythonUDF"}, {}) is None


def test_subtree_end():
    tree = [node("Join", 2), node("Project", 1), node("A", 0), node("B", 0), node("C", 0)]
    assert subtree_end(tree, 0) == 4 and subtree_end(tree, 1) == 3 and subtree_end(tree, 4) == 5
    with pytest.raises(ValueError):
        subtree_end(tree[:3], 0)


MODEL = {"config": {}, "columns": {}}
SCHEMA = '{"fields":[{"name":"id","type":"long"}]}'


def test_a_views_definition_is_what_its_statement_stores():
    base = view_definition("select id from t", SCHEMA, ("c", "s"), MODEL)
    # comments and blank lines around the query are not stored
    assert view_definition("-- why\n\nselect id from t\n\n", SCHEMA, ("c", "s"), MODEL) == base
    assert view_definition("/* a */ select id from t ", SCHEMA, ("c", "s"), MODEL) == base
    # the text inside it is, and so are the columns, the namespace and the watched settings
    assert view_definition("select id  from t", SCHEMA, ("c", "s"), MODEL) != base
    assert (
        view_definition("select id from t", SCHEMA.replace("long", "int"), ("c", "s"), MODEL)
        != base
    )
    assert view_definition("select id from t", SCHEMA, ("c", "other"), MODEL) != base
    granted = {"config": {"grants": {"select": ["x"]}}, "columns": {}}
    assert view_definition("select id from t", SCHEMA, ("c", "s"), granted) != base


def test_a_remembered_views_inputs_keep_what_its_decision_watched():
    from dbt.adapters.lakehouse.reuse.inputs import PlanInputs
    from dbt.adapters.lakehouse.reuse.views import kept, restored

    t, v = TableName("lakehouse", "raw", "t"), TableName("lakehouse", "s", "v")
    inputs = PlanInputs((t,), (), ("Rand",), "d1", objects=(t, v))
    back = restored(json.loads(json.dumps(kept(inputs))))
    assert back == inputs and back.objects == (t, v)
    # an entry without them (or a decision that could not tell them): its readers watch nothing
    assert restored(kept(PlanInputs((t,), (), (), "d1"))).objects is None
    earlier = {k: w for k, w in kept(inputs).items() if k != "objects"}
    assert restored(earlier).objects is None
