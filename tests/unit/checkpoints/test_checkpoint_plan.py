"""View checkpoints' pure rules: a view's inlined size from its compiled SQL, which statements
may read checkpoints, the rewrite, and the per-invocation registry the cursor consults."""

from __future__ import annotations

from collections import Counter

import pytest

from dbt.adapters.lakehouse.checkpoints import registry
from dbt.adapters.lakehouse.checkpoints.plan import (
    CHECKPOINT_REPEATS,
    CHECKPOINT_SCANS,
    SHARED_READERS,
    SHARED_REPEATS,
    SHARED_SCANS,
    leaves,
    reads_checkpoints,
    rewrite,
    run_readers,
    setting_problem,
    should_checkpoint,
    temp_view_name,
)

V1 = "`lakehouse`.`s`.`v1`"
V2 = "`lakehouse`.`s`.`v2`"
SEED = "`lakehouse`.`s`.`seed`"
COMMENT = '/* {"app": "dbt", "node_id": "model.p.t"} */\n'


def test_leaves_count_each_name_as_what_it_stands_for() -> None:
    sql = f"select * from {V1} union all select * from {V1} r join {SEED} s on r.k = s.id"
    assert leaves(sql, {}) == {V1: 2, SEED: 1}
    assert leaves(sql, {V1: Counter({SEED: 4})}) == {SEED: 9}
    # Spelled with other case and blanks around the dots, the same view.
    assert leaves("select * from `LAKEHOUSE` . `s`.`V1`", {V1: Counter({SEED: 8})}) == {SEED: 8}
    assert leaves("select 1", {}) == {}


def test_longer_dotted_names_are_not_relations() -> None:
    # A metadata table and a qualified column name the view's name only as a prefix.
    sql = f"select * from {V1}.`snapshots` union all select {V1}.`a`.`b` from t"
    assert leaves(sql, {V1: Counter({SEED: 8})}) == {}
    assert rewrite(sql, {V1: "cp"}) is sql


def test_auto_checkpoints_a_stack_not_a_plan_naming_many_tables() -> None:
    stacked = Counter({SEED: CHECKPOINT_SCANS})
    assert should_checkpoint(stacked, "auto")
    assert should_checkpoint(stacked, "AUTO")
    assert not should_checkpoint(Counter({SEED: CHECKPOINT_SCANS - 1}), "auto")
    # Many relations, none of them scanned CHECKPOINT_REPEATS times: nothing is copied.
    flat = Counter({f"t{n}": CHECKPOINT_REPEATS - 1 for n in range(CHECKPOINT_SCANS)})
    assert not should_checkpoint(flat, "auto")


def test_auto_checkpoints_a_smaller_plan_several_of_the_runs_nodes_read() -> None:
    # The stacked project's `w_` views: 8 scans, two of one seed, each read by two views.
    shared = Counter({SEED: SHARED_REPEATS, **{f"t{n}": 1 for n in range(SHARED_SCANS - 2)}})
    assert sum(shared.values()) == SHARED_SCANS
    assert should_checkpoint(shared, "auto", readers=SHARED_READERS)
    assert not should_checkpoint(shared, "auto", readers=SHARED_READERS - 1)  # one reader
    assert not should_checkpoint(shared, False, readers=SHARED_READERS)
    # Smaller, or copying nothing: left alone however many read it.
    assert not should_checkpoint(Counter({SEED: SHARED_SCANS - 1}), "auto", readers=9)
    flat = Counter({f"t{n}": 1 for n in range(SHARED_SCANS)})
    assert not should_checkpoint(flat, "auto", readers=9)


def test_run_readers_count_the_runs_nodes_reading_each_node() -> None:
    nodes = {
        "model.p.w": {"depends_on": {"nodes": ["model.p.a", "model.p.b"]}},
        "model.p.d1": {"depends_on": {"nodes": ["model.p.w", "model.p.w"]}},  # counted once
        "model.p.d2": {"depends_on": {"nodes": ["model.p.w"]}},
        "test.p.t": {"depends_on": {"nodes": ["model.p.w"], "macros": []}},
        "model.p.other": {"depends_on": {"nodes": ["model.p.w"]}},
    }
    selected = ["model.p.w", "model.p.d1", "model.p.d2", "test.p.t"]  # not model.p.other
    assert run_readers(nodes, selected) == {"model.p.w": 3, "model.p.a": 1, "model.p.b": 1}
    assert run_readers(nodes, ["model.p.missing"]) == {}


@pytest.mark.parametrize("value", ["yes", "on", 1, "true"])
def test_other_settings_are_refused_naming_the_fix(value: object) -> None:
    problem = setting_problem(value)
    assert problem is not None and "Fix: set `checkpoint: auto`" in problem
    for valid in (None, True, False, "auto", "AUTO"):
        assert setting_problem(valid) is None


def test_true_always_false_never_unset_is_auto() -> None:
    assert should_checkpoint(Counter({SEED: 2}), True)
    assert not should_checkpoint(Counter({SEED: 1024}), False)
    assert should_checkpoint(Counter({SEED: CHECKPOINT_SCANS}), None)
    assert not should_checkpoint(Counter({SEED: CHECKPOINT_SCANS - 1}), None)


def test_temp_view_names_are_per_relation_and_run() -> None:
    name = temp_view_name(V1, "inv-1")
    assert name.startswith("lakehouse_checkpoint__v1__")
    assert temp_view_name(V1, "inv-1", "view").startswith("lakehouse_view__v1__")
    assert name == temp_view_name("`LAKEHOUSE`.`s` . `v1`", "inv-1")
    assert name != temp_view_name(V1, "inv-2")
    assert name != temp_view_name("`lakehouse`.`t`.`v1`", "inv-1")
    odd = temp_view_name("`c`.`s`.`odd-name.x`", "i")
    assert odd.startswith("lakehouse_checkpoint__odd_name_x__")


@pytest.mark.parametrize(
    "statement",
    [
        f"select count(*) from {V1}",
        f"{COMMENT}with a as (select * from {V1}) select * from a",
        f"{COMMENT}create or replace table `lakehouse`.`s`.`t` using iceberg as select * from {V1}",
        f"insert into `lakehouse`.`s`.`t` select * from {V1}",
        f"merge into `lakehouse`.`s`.`t` using (select * from {V1}) src on true",
        f"create or replace temporary view tmp as select * from {V1}",
        f"-- lakehouse:conf spark.sql.ansi.enabled=true\nselect * from {V1}",
    ],
)
def test_statements_that_read_checkpoints(statement: str) -> None:
    assert reads_checkpoints(statement)
    assert "`cp`" in rewrite(statement, {V1: "cp"})


@pytest.mark.parametrize(
    "statement",
    [
        f"{COMMENT}create or replace view {V2} as select * from {V1}",
        f"create view if not exists {V2} as select * from {V1}",
        f"alter view {V1} set tblproperties ('a' = 'b')",
        f"drop view if exists {V1}",
        f"describe table extended {V1}",
        f"{COMMENT}show tblproperties {V1}",
        f"comment on view {V1} is 'x'",
    ],
)
def test_statements_that_keep_naming_the_view(statement: str) -> None:
    assert not reads_checkpoints(statement)


def test_rewrite_swaps_only_checkpointed_views() -> None:
    sql = f"select * from {V1} a join {V2} b on a.id = b.id join `LAKEHOUSE`.`S`.`V1` c"
    assert rewrite(sql, {V1: "cp1"}) == (
        f"select * from `cp1` a join {V2} b on a.id = b.id join `cp1` c"
    )


def test_the_registry_per_invocation() -> None:
    statement = f"select * from {V1} join {V2}"
    registry.record_view("inv-a", V1, Counter({SEED: 4}))
    try:
        assert registry.known_leaves("inv-a") == {V1: {SEED: 4}}
        assert registry.with_checkpoints(statement, "inv-a") is statement
        made: list[tuple[str, str | None, object]] = []
        session = object()
        registry.record_stand_in(
            "inv-a", V2, ("cp2", "shape2"), Counter({V2: 1}),
            lambda node, spark: made.append(("cp2", node, spark)),
            lambda node, spark: made.append(("shape2", node, spark)),
        )  # fmt: skip
        registry.record_note("inv-a", "model.p.v2", {"temporary_view": "cp2", "scans": 32})
        assert registry.known_leaves("inv-a") == {V1: {SEED: 4}, V2: {V2: 1}}
        assert registry.with_checkpoints(statement, "inv-a") == f"select * from {V1} join `cp2`"
        shaped = registry.with_checkpoints(statement, "inv-a", shapes=True)
        assert shaped == f"select * from {V1} join `shape2`"
        # an analysis over the shape makes the shape, once, in the reader's session, not the
        # stand-in; the first statement run over the stand-in makes it, once
        registry.compute_read(shaped, session, "inv-a", "test.p.t")
        registry.compute_read(shaped, session, "inv-a")
        assert made == [("shape2", "test.p.t", session)]
        registry.compute_read(f"select * from {V1} join `cp2`", session, "inv-a", "model.p.m")
        registry.compute_read("select * from `cp2`", session, "inv-a")
        assert made[1:] == [("cp2", "model.p.m", session)]
        # Another invocation in the same process reads the views themselves.
        assert registry.with_checkpoints(statement, "inv-b") is statement
        assert registry.take_note("inv-a", "model.p.v2") == {
            "checkpoint": {"temporary_view": "cp2", "scans": 32}
        }
        assert registry.take_note("inv-a", "model.p.v2") == {}
    finally:
        registry.release("inv-a")  # spark=None: the drop fails and is logged, not raised
    assert registry.known_leaves("inv-a") == {}
    assert registry.with_checkpoints(statement, "inv-a") is statement
