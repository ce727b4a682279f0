"""Reuse's pure decisions (reuse/plan.py, reuse/inputs.py's plan digest): which switch wins, the
statement's shape without its query, the reasons a node was built, and that two analyses of one
query digest alike while another query does not."""

from __future__ import annotations

import json

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.mv.state import RefreshPlan
from dbt.adapters.lakehouse.reuse.inputs import plan_digest
from dbt.adapters.lakehouse.reuse.plan import also_watched, build_reasons, statement_shape, switch


@pytest.mark.parametrize(
    ("config", "profile", "env", "on", "why"),
    [
        (None, False, {}, False, None),  # off by default, and silent
        (None, True, {}, True, None),
        (True, False, {}, True, None),
        (False, True, {}, False, "reuse: false"),
        (True, True, {"LAKEHOUSE_REUSE": "off"}, False, "LAKEHOUSE_REUSE=off"),
        (None, False, {"LAKEHOUSE_REUSE": "ON"}, True, None),
        (False, False, {"LAKEHOUSE_REUSE": "on"}, False, "reuse: false"),
    ],
)
def test_the_switch(config: object, profile: bool, env: dict, on: bool, why: str | None) -> None:
    decided = switch(config, profile, env)
    assert (decided.on, decided.why_off) == (on, why)


@pytest.mark.parametrize(("config", "env"), [("yes", {}), (None, {"LAKEHOUSE_REUSE": "maybe"})])
def test_a_malformed_switch_is_refused_naming_it(config: object, env: dict) -> None:
    with pytest.raises(DbtRuntimeError, match="reuse|LAKEHOUSE_REUSE"):
        switch(config, False, env)


def test_the_statement_shape_keeps_the_ddl_and_drops_the_query() -> None:
    query = "select 1 as id\n"
    shape = statement_shape(f"create or replace table t partitioned by (id) as\n{query}", query)
    assert shape == "create or replace table t partitioned by (id) as <query>"
    # A statement that does not hold the query verbatim (wrapped) is kept whole.
    assert statement_shape("create table t as select 2", query) == "create table t as select 2"


def test_build_reasons_say_what_moved() -> None:
    moved = RefreshPlan("rebuild", ("c.s.events moved from snapshot 1 to 2",))
    assert build_reasons(moved) == "c.s.events moved from snapshot 1 to 2"
    changed = RefreshPlan("rebuild", ("the model's SQL changed",), True)
    assert build_reasons(changed) == "its query or settings changed; its watched settings changed"
    assert build_reasons(RefreshPlan("create")).startswith("no record of an earlier build")


def _plan(first_id: int, jvm: str, literal: int = 1) -> str:
    """A plan's JSON in Spark's shape: expression and CTE ids handed out per analysis."""
    return json.dumps([
        {"class": "org.apache.spark.sql.catalyst.plans.logical.Project", "num-children": 1,
         "projectList": [[{"class": "...AttributeReference", "name": "id",
                           "exprId": {"product-class": "...ExprId", "id": first_id,
                                      "jvmId": jvm}}]]},
        {"class": "...CTERelationDef", "id": first_id + 40},
        {"class": "...CTERelationRef", "cteId": first_id + 40},
        {"class": "...Literal", "value": str(literal)},
    ])  # fmt: skip


def test_the_plan_digest_ignores_per_analysis_ids_only() -> None:
    assert plan_digest(_plan(12, "jvm-a")) == plan_digest(_plan(345, "jvm-b"))
    assert plan_digest(_plan(12, "jvm-a")) != plan_digest(_plan(12, "jvm-a", literal=2))


def test_docs_are_watched_only_where_persist_docs_writes_them() -> None:
    model = {"config": {"grants": {"select": ["bi"]}}, "description": "one",
             "columns": {"id": {"description": "key"}}}  # fmt: skip
    documented = {**model, "config": {**model["config"], "persist_docs": {"relation": True}}}
    assert also_watched(model) == also_watched({**model, "description": "two"})
    assert also_watched(documented) != also_watched({**documented, "description": "two"})
    assert also_watched(model) != also_watched({**model, "config": {"grants": {}}})


def test_a_kinds_own_settings_are_watched_and_only_its_own() -> None:
    from dbt.adapters.lakehouse.reuse.plan import INCREMENTAL_SETTINGS

    model = {"config": {"unique_key": "id", "incremental_strategy": "merge"}}
    other_key = {"config": {"unique_key": "order_id", "incremental_strategy": "merge"}}
    assert also_watched(model, INCREMENTAL_SETTINGS) != also_watched(
        other_key, INCREMENTAL_SETTINGS
    )
    # A table's record is not changed by settings only incremental runs read.
    assert also_watched(model) == also_watched(other_key)


def test_the_first_incremental_run_says_so_and_keeps_what_moved() -> None:
    from dbt.adapters.lakehouse.mv.state import SQL_CHANGED
    from dbt.adapters.lakehouse.reuse.adapter import FIRST_INCREMENTAL_RUN, _first_incremental_run

    moved = "c.s.events moved from snapshot 1 to 2"
    plan = _first_incremental_run(RefreshPlan("rebuild", (SQL_CHANGED, moved)))
    assert plan.reasons == (FIRST_INCREMENTAL_RUN, moved)
    assert build_reasons(plan) == f"{FIRST_INCREMENTAL_RUN}; {moved}"


def test_what_the_leaves_are_is_part_of_the_digest() -> None:
    """A VALUES list's rows are not in Spark's plan JSON; plan_inputs passes them apart."""
    document = json.dumps({"class": "LocalRelation", "output": []})
    assert plan_digest(document, ["[1,a]"]) != plan_digest(document, ["[1,b]"])
    assert plan_digest(document, ["[1,a]"]) == plan_digest(document, ["[1,a]"])
    assert plan_digest(document) == plan_digest(document, [])
    # Tables' names are not in it either (`"table": null`): `a EXCEPT b` is not `b EXCEPT a`.
    assert plan_digest(document, ["c.s.a", "c.s.b"]) != plan_digest(document, ["c.s.b", "c.s.a"])
