"""The pure parts of the reuse property test
(tests/functional/lakehouse/reuse/test_reuse_history.py): which nodes its DAG model says could
have been reused after each kind of change, the tally of missed reuse, and the seeded step
generator."""

from __future__ import annotations

import pytest
from functional.lakehouse.reuse.reuse_history_model import (
    COUNTED_KINDS,
    History,
    Node,
    Tally,
    counted_kinds,
    wrongly_reused,
)
from functional.lakehouse.reuse.reuse_history_project import CATALOGUE, SEED_ROWS
from functional.lakehouse.reuse.reuse_history_steps import WEIGHTS, generate, initial_state

# source -> view -> table -> table2; the seed joins the table; a test reads the view; a
# non-deterministic table reads the view; a second view reads the table.
NODES = [
    Node("src", "events", "source"),
    Node("seed", "labels", "seed"),
    Node("v", "stg", "view", ("src",)),
    Node("t", "enriched", "table", ("seed", "v")),
    Node("t2", "by_kind", "table", ("t",)),
    Node("v2", "big", "view", ("t",)),
    Node("i", "inc", "incremental", ("v",)),
    Node("r", "noisy", "table", ("v",), deterministic=False),
    Node("test", "not_null", "test", ("v",)),
]
DATA = {"src": (1, 0), "seed": (10, 0), "t": (20, 0), "t2": (30, 0), "i": (40, 0), "r": (50, 0)}


def built(history: History, own=None, data=None, full_refresh: bool = False) -> dict[str, bool]:
    """One step: what could have been reused, then every node holds what it was built from."""
    sigs = history.signatures(own or {}, data or DATA)
    could = history.could_reuse(sigs, full_refresh)
    history.commit(sigs)
    return could


def reusable(could: dict[str, bool]) -> set[str]:
    return {uid for uid, yes in could.items() if yes}


@pytest.fixture
def history() -> History:
    found = History(NODES)
    assert reusable(built(found)) == set()  # the first build: nothing recorded
    return found


def test_nothing_changed_everything_deterministic_could(history: History) -> None:
    assert reusable(built(history)) == {"seed", "v", "t", "t2", "v2", "i", "test"}


def test_source_rows_move_its_readers_not_the_view(history: History) -> None:
    # The view holds no rows: only its definition and its inputs' columns matter.
    data = {**DATA, "src": (2, 0)}
    assert reusable(built(history, data=data)) == {"seed", "v", "v2", "t2"}


def test_an_upstream_rebuilt_moves_its_readers(history: History) -> None:
    """A new snapshot of `t`, even with the same rows, is a moved input for `t2` and `v2`'s
    readers; `v2` itself only sees `t`'s columns."""
    assert reusable(built(history, data={**DATA, "t": (21, 0)})) == {
        "seed",
        "v",
        "t",
        "v2",
        "i",
        "test",
    }


def test_a_column_added_upstream_redefines_the_view_and_its_readers(history: History) -> None:
    could = built(history, data={**DATA, "src": (1, 1)})
    assert reusable(could) == {"seed", "t2", "v2"}


def test_a_definition_change_builds_the_node_and_what_reads_it_through_views(
    history: History,
) -> None:
    assert reusable(built(history, own={"v": ("variant", 1)})) == {"seed", "t2", "v2"}
    # Back to the first definition: the last build was of the other one.
    assert reusable(built(history, own={"v": ("variant", 0)})) == {"seed", "t2", "v2"}
    assert reusable(built(history, own={"v": ("variant", 0)})) == {
        "seed",
        "v",
        "t",
        "t2",
        "v2",
        "i",
        "test",
    }


def test_full_refresh_builds_its_kinds_only(history: History) -> None:
    could = built(history, full_refresh=True)
    assert reusable(could) == {"test"}


def test_wrongly_reused_and_the_tally() -> None:
    could = {"a": True, "b": False, "c": True}
    assert wrongly_reused(could, {"a": True, "b": True, "c": False}) == ["b"]
    tally = Tally()
    nodes = {
        "a": Node("a", "a", "table"),
        "c": Node("c", "c", "view"),
        "i": Node("i", "i", "incremental"),
    }
    tally.add(1, nodes["a"], True, True)
    tally.add(1, nodes["c"], True, False)
    tally.add(1, nodes["i"], True, False)
    tally.add(2, nodes["a"], False, False)  # had to be built: not counted
    assert tally.totals(frozenset({"table", "view"})) == (2, 1)
    assert tally.ratio(frozenset({"table"})) == 1.0
    assert tally.missed == [(1, "c"), (1, "i")]


def test_counted_kinds_override() -> None:
    assert counted_kinds({}) == COUNTED_KINDS
    assert counted_kinds({"LAKEHOUSE_HISTORY_COUNTED": "table, test"}) == {"table", "test"}
    with pytest.raises(ValueError, match="unknown kinds"):
        counted_kinds({"LAKEHOUSE_HISTORY_COUNTED": "table,tables"})


def test_the_dag_must_be_whole_and_acyclic() -> None:
    with pytest.raises(ValueError, match="unknown nodes"):
        History([Node("t", "t", "table", ("missing",))])
    with pytest.raises(ValueError, match="cycle"):
        History([Node("a", "a", "view", ("b",)), Node("b", "b", "view", ("a",))])


def steps(seed: int, count: int):
    return generate(CATALOGUE, initial_state(CATALOGUE, SEED_ROWS), seed, count)


def test_a_seed_replays_the_same_history() -> None:
    assert steps(7, 50) == steps(7, 50)
    assert steps(7, 50) != steps(8, 50)


def test_a_long_history_draws_every_change_and_mode() -> None:
    history = steps(2026, 200)
    assert {s.action for s in history} == set(WEIGHTS)
    assert {s.mode for s in history} == {"build", "full_refresh", "concurrent"}


@pytest.mark.parametrize("seed", range(20))
def test_a_short_history_runs_concurrently_once_at_least(seed: int) -> None:
    assert any(s.mode == "concurrent" for s in steps(seed, 4))


def test_every_change_is_a_real_one() -> None:
    state = initial_state(CATALOGUE, SEED_ROWS)
    mirror = initial_state(CATALOGUE, SEED_ROWS)
    ids: list[int] = []
    for step in generate(CATALOGUE, state, 3, 300):
        if step.action == "edit_sql":
            assert step.param("variant") != mirror.variant[step.param("model")]
            mirror.variant[step.param("model")] = step.param("variant")
        elif step.action == "partition_change":
            assert step.param("spec") != mirror.partition[step.param("model")]
            mirror.partition[step.param("model")] = step.param("spec")
        elif step.action == "var_change":
            assert step.param("value") != mirror.vars[step.param("var")]
            mirror.vars[step.param("var")] = step.param("value")
        elif step.action == "seed_change":
            old = mirror.seed.get(step.param("kind"))
            assert old != (step.param("label"), step.param("weight"))
            mirror.seed[step.param("kind")] = (step.param("label"), step.param("weight"))
        elif step.action == "source_update":
            assert step.param("delta") != 0  # every matched row changes: the snapshot sees it
        elif step.action == "source_append":
            ids += [row[0] for row in step.param("rows")]
    assert len(ids) == len(set(ids)) and min(ids) == CATALOGUE.first_id  # never an id again
    assert set(mirror.seed) >= set(SEED_ROWS)  # the seed only gains kinds
    assert state.added_columns <= 6


def test_blank_lines_around_a_query_are_no_change() -> None:
    """A whitespace-only edit is no change (docs/reuse.md): here, blank lines before and after
    the model's SQL, which the CTAS statement renders around its query. Found by
    test_reuse_history.py (seed 2026, step 4: `enriched` rebuilt, 'its query or settings
    changed'), fixed in reuse/plan.py by 1b8f3aa."""
    from dbt.adapters.lakehouse.reuse.plan import statement_shape

    query = "select 1 as id\nfrom t"
    padded = f"\n\n{query}\n\n"
    statement = "create or replace table x\n  using iceberg\n  as\n  {}"
    assert statement_shape(statement.format(padded), padded) == statement_shape(
        statement.format(query), query
    )
