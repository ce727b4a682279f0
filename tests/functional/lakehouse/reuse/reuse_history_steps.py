"""The random steps of the reuse property test (test_reuse_history.py), drawn from a seed alone:
pure logic, so a failing history replays from its seed (tests/unit/reuse/test_history_model.py).

A step is one change and one `dbt build` (or two at once). The generator keeps the project's
state as far as a change depends on it (each model's SQL variant, partitioning, vars, the seed's
rows, the source's next id and columns), so every change it draws is a real one: another
variant, another partition spec, another value.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Relative weights of the changes. A concurrent or --full-refresh step is a mode, drawn apart.
WEIGHTS = {
    "edit_sql": 3.0,
    "edit_cosmetic": 2.0,
    "source_append": 3.0,
    "source_update": 2.0,
    "source_delete": 1.5,
    "seed_change": 1.0,
    "var_change": 1.0,
    "partition_change": 1.0,
    "add_column": 0.5,
    "touch_nondeterministic": 0.7,
    "nothing": 1.5,
}
FULL_REFRESH_ODDS = 0.04
# Two dbt processes cost a few engine attaches and parses: rare, but once in any history of
# four steps or more (CI's short one included).
CONCURRENT_ODDS = 0.025
MAX_ADDED_COLUMNS = 6
COSMETIC_FORMS = ("comment", "blank_lines", "spaces")


@dataclass(frozen=True)
class Catalogue:
    """What the project lets a step change."""

    variants: Mapping[str, int]  # model -> number of SQL variants (semantic edits)
    cosmetic: tuple[str, ...]  # files a comment or whitespace edit may touch
    nondeterministic: str
    partitions: Mapping[str, tuple[str, ...]]  # model -> partition specs ("" none)
    vars: Mapping[str, tuple[int, ...]]  # var -> values
    kinds: tuple[str, ...]  # the kinds the source's rows take
    seed_kinds: tuple[str, ...]  # kinds the seed may gain (it never loses one)
    days: int  # the source's `day` takes 0 .. days-1
    first_id: int  # the first id an append takes


@dataclass(frozen=True)
class Step:
    action: str
    params: tuple[tuple[str, Any], ...] = ()
    mode: str = "build"  # build, full_refresh, concurrent

    def param(self, name: str) -> Any:
        return dict(self.params)[name]

    def __str__(self) -> str:
        said = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.action}({said})" + ("" if self.mode == "build" else f" [{self.mode}]")


@dataclass
class State:
    variant: dict[str, int]
    partition: dict[str, str]
    vars: dict[str, int]
    seed: dict[str, tuple[str, int]]  # kind -> (label, weight)
    next_id: int
    added_columns: int = 0
    labels: int = 0
    cosmetic: dict[str, int] = field(default_factory=dict)  # file -> edits so far
    forms: dict[str, str] = field(default_factory=dict)  # file -> its latest edit's form


def initial_state(catalogue: Catalogue, seed_rows: Mapping[str, tuple[str, int]]) -> State:
    return State(
        variant={m: 0 for m in catalogue.variants},
        partition={m: specs[0] for m, specs in catalogue.partitions.items()},
        vars={v: values[0] for v, values in catalogue.vars.items()},
        seed=dict(seed_rows),
        next_id=catalogue.first_id,
    )


def generate(catalogue: Catalogue, state: State, seed: int, steps: int) -> list[Step]:
    """`steps` steps from `seed`, advancing `state` (a copy the caller does not reuse)."""
    rng = random.Random(seed)
    actions = list(WEIGHTS)
    out: list[Step] = []
    for _ in range(steps):
        action = rng.choices(actions, weights=[WEIGHTS[a] for a in actions])[0]
        if action == "add_column" and state.added_columns >= MAX_ADDED_COLUMNS:
            action = "source_append"
        roll = rng.random()
        mode = (
            "full_refresh"
            if roll < FULL_REFRESH_ODDS
            else "concurrent"
            if roll < FULL_REFRESH_ODDS + CONCURRENT_ODDS
            else "build"
        )
        out.append(Step(action, _params(action, catalogue, state, rng), mode))
    if steps >= 4 and not any(s.mode == "concurrent" for s in out):
        middle = steps // 2
        out[middle] = Step(out[middle].action, out[middle].params, "concurrent")
    return out


def _params(action: str, c: Catalogue, state: State, rng: random.Random) -> tuple:
    if action == "edit_sql":
        model = rng.choice(sorted(c.variants))
        others = [v for v in range(c.variants[model]) if v != state.variant[model]]
        state.variant[model] = rng.choice(others)
        return (("model", model), ("variant", state.variant[model]))
    if action in ("edit_cosmetic", "touch_nondeterministic"):
        target = rng.choice(c.cosmetic) if action == "edit_cosmetic" else c.nondeterministic
        state.cosmetic[target] = state.cosmetic.get(target, 0) + 1
        form = state.forms[target] = rng.choice(COSMETIC_FORMS)
        return (("file", target), ("form", form), ("count", state.cosmetic[target]))
    if action == "source_append":
        rows = []
        for _ in range(rng.randint(1, 4)):
            rows.append(
                (state.next_id, rng.choice(c.kinds), rng.randint(0, 20), rng.randrange(c.days))
            )
            state.next_id += 1
        return (("rows", tuple(rows)),)
    if action == "source_update":
        # Every matched row's values change (amount by a non-zero delta), so the snapshot
        # closes a version of each.
        return (
            ("modulus", rng.randint(3, 7)),
            ("remainder", rng.randint(0, 2)),
            ("delta", rng.choice((-3, -1, 2, 5))),
            ("kind", rng.choice((None, *c.kinds))),
        )
    if action == "source_delete":
        return (("modulus", rng.randint(8, 13)), ("remainder", rng.randint(0, 7)))
    if action == "seed_change":
        missing = [k for k in c.seed_kinds if k not in state.seed]
        kind = missing[0] if missing and rng.random() < 0.4 else rng.choice(sorted(state.seed))
        state.labels += 1
        old_weight = state.seed.get(kind, ("", 0))[1]
        weight = rng.choice([w for w in range(1, 5) if w != old_weight])
        state.seed[kind] = (f"{kind.upper()}{state.labels}", weight)
        return (("kind", kind), ("label", state.seed[kind][0]), ("weight", weight))
    if action == "var_change":
        name = rng.choice(sorted(c.vars))
        state.vars[name] = rng.choice([v for v in c.vars[name] if v != state.vars[name]])
        return (("var", name), ("value", state.vars[name]))
    if action == "partition_change":
        model = rng.choice(sorted(c.partitions))
        others = [p for p in c.partitions[model] if p != state.partition[model]]
        state.partition[model] = rng.choice(others)
        return (("model", model), ("spec", state.partition[model]))
    if action == "add_column":
        state.added_columns += 1
        return (("column", f"extra_{state.added_columns}"),)
    if action == "nothing":
        return ()
    raise ValueError(f"unknown action {action}")
