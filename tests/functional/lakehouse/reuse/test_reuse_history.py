"""Reuse under random histories (issue 61): a seeded random sequence of steps over one dbt
project (reuse_history_project.py: a source written outside dbt, a seed, views, tables, three
incremental strategies, a snapshot and data tests), each step one change and a `dbt build`:
a model's SQL edited (its meaning, or only a comment or whitespace), rows appended, updated or
deleted in the source, the seed's CSV, a var, a model's partition_by, a column added to the
source, the non-deterministic model touched; some steps run with --full-refresh, some as two
`dbt build` processes at once.

After every step:
- each table, incremental model, view and the seed equals a build from scratch (its query
  evaluated now over the current inputs, the CSV), the snapshot's current rows equal the
  source's and its closed versions are exactly those the history made, and each data test's
  outcome is its query's count of failing rows now (reuse_history_checks.py);
- no node was reused that had to be built: one that something it reads or is defined by changed
  since its last build (reuse_history_model.py); a failure names the steps so far;
- in a concurrent step, each process built or reused every node (no error, no half state).
Nodes that could have been reused and were built are counted: at least 90% of those of the
kinds reuse covers (COUNTED_KINDS) must have been reused.

CI runs a short history on `local`; by hand, the issue's 200 steps:
LAKEHOUSE_HISTORY_STEPS=200 LAKEHOUSE_HISTORY_SEED=<n> .venv/bin/pytest -s -p no:randomly
tests/functional/lakehouse/reuse/test_reuse_history.py --profile local
(the seed is printed first, so any failure replays)."""

from __future__ import annotations

import os
import random
import time

import pytest

from functional.lakehouse.reuse.reuse_history_checks import (
    BUILT,
    build,
    build_concurrently,
    closed_versions,
    dag,
    data_versions,
    invariants,
    source_rows,
)
from functional.lakehouse.reuse.reuse_history_model import (
    History,
    Tally,
    counted_kinds,
    wrongly_reused,
)
from functional.lakehouse.reuse.reuse_history_project import (
    CATALOGUE,
    INCREMENTAL_BRANCH,
    SEED_ROWS,
    SOURCE,
    SOURCE_COLUMNS,
    apply_step,
    definitions,
    manifest,
    project_files,
    values,
    vars_arg,
    write_project,
)
from functional.lakehouse.reuse.reuse_history_steps import generate, initial_state
from functional.lakehouse.reuse.test_reuse import ReuseOnProfile
from functional.lakehouse.shared.tables import table

# CI's short history: seed 137's four steps edit an incremental model's SQL, update the source
# under --full-refresh (so the next run is an incremental model's first incremental run), change
# a partition_by in a concurrent step, and update the source again (the snapshot closes rows).
STEPS = int(os.environ.get("LAKEHOUSE_HISTORY_STEPS", "4"))
SEED = int(os.environ.get("LAKEHOUSE_HISTORY_SEED", "137"))
GOAL = 0.9


def _files(prefix: str) -> dict[str, str]:
    files = project_files(initial_state(CATALOGUE, SEED_ROWS))
    return {p.split("/", 1)[1]: text for p, text in files.items() if p.startswith(prefix + "/")}


@pytest.mark.only_profile("local")
class TestReuseHistory(ReuseOnProfile):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        # Warn, not error: a failing test would skip the models downstream of what it tests.
        return {
            "data_tests": {"+severity": "warn"},
            "vars": initial_state(CATALOGUE, SEED_ROWS).vars,
        }

    @pytest.fixture(scope="class")
    def models(self):
        return _files("models")

    @pytest.fixture(scope="class")
    def seeds(self):
        return _files("seeds")

    @pytest.fixture(scope="class")
    def snapshots(self):
        return _files("snapshots")

    @pytest.fixture(scope="class")
    def tests(self):
        return _files("tests")

    def test_random_history(self, project):
        print(
            f"\nreuse history: LAKEHOUSE_HISTORY_SEED={SEED} LAKEHOUSE_HISTORY_STEPS={STEPS}",
            flush=True,
        )
        steps = generate(CATALOGUE, initial_state(CATALOGUE, SEED_ROWS), SEED, STEPS)
        state = initial_state(CATALOGUE, SEED_ROWS)
        written = dict(project_files(state))
        events = table(project, SOURCE)
        rng = random.Random(SEED)
        first = [
            (i, rng.choice("abc"), rng.randint(0, 20), rng.randrange(CATALOGUE.days))
            for i in range(1, 25)
        ]
        project.run_sql(
            f"create table {events} (id int, kind string, amount int, day int) using iceberg"
        )
        project.run_sql(f"insert into {events} ({SOURCE_COLUMNS}) values {values(first)}")

        def relation(name: str) -> str:
            return table(project, name)

        history: History | None = None
        tally, kinds, done = Tally(), counted_kinds(), ["0: first build"]
        snapshot_seen: dict[int, tuple] = {}
        closed: list[tuple] = []
        source_columns = 0
        started = time.monotonic()

        def fail(message: str) -> None:
            pytest.fail(f"seed {SEED}, steps so far:\n" + "\n".join(done) + f"\n{message}")

        for number, step in enumerate([None, *steps]):
            mode = step.mode if step else "build"
            if step is not None:
                done.append(f"{number}: {step}")
                source_columns += apply_step(step, state, project.run_sql, events)
            write_project(project.project_root, state, written)
            began = time.monotonic()
            if mode == "concurrent":
                runs = build_concurrently(project, vars_arg(state), number)
            else:
                runs = [build(vars_arg(state), mode == "full_refresh")]
            took = time.monotonic() - began
            if history is None:
                history = History(dag(manifest(f"{project.project_root}/target")))
            nodes = list(history.nodes.values())
            for run in runs:
                half = {
                    o.uid: o.status for o in run.values() if not o.reused and o.status not in BUILT
                }
                missing = {n.uid for n in nodes if n.kind != "source"} - set(run)
                if half or missing:
                    fail(f"nodes neither built nor reused: {half}, absent: {sorted(missing)}")
            if mode == "concurrent":
                for node in nodes:
                    if node.kind not in ("view", "test"):
                        project.run_sql(f"refresh table {relation(node.name)}")
            uids = {n.name: n.uid for n in nodes}
            data = data_versions(project.run_sql, nodes, relation, source_columns)
            own = definitions(state, uids)
            # An incremental model's first build (or --full-refresh) runs its query without the
            # is_incremental() branch and its next runs with it: two definitions, so the run
            # after a full build is built (docs/reuse.md). Without a branch, one definition.
            full = number == 0 or mode == "full_refresh"
            for name in INCREMENTAL_BRANCH:
                own[uids[name]] = (own[uids[name]], "full" if full else "incremental")
            signatures = history.signatures(own, data)
            could = history.could_reuse(signatures, mode == "full_refresh")
            if mode != "concurrent":
                reused = {uid: o.reused for uid, o in runs[0].items() if uid in could}
                wrong = wrongly_reused(could, reused)
                if wrong:
                    fail(
                        "reused though something it reads or is defined by changed: "
                        + ", ".join(f"{runs[0][u].name} ({runs[0][u].reason})" for u in wrong)
                    )
                if mode == "build" and number > 0:
                    for uid in could:
                        tally.add(number, history.nodes[uid], could[uid], reused[uid])
            now = source_rows(project.run_sql, events)
            closed += closed_versions(snapshot_seen, now)
            snapshot_seen = now
            for run in runs:
                wrong = invariants(project.run_sql, nodes, run, relation, state.seed, closed)
                if wrong:
                    fail("differs from a build from scratch:\n" + "\n".join(wrong))
            history.commit(signatures)
            reused_names = sorted(o.name for o in runs[0].values() if o.reused)
            why = {o.name: o.reason for o in runs[0].values()}
            missed = [f"{n} ({why.get(n)})" for step_no, n in tally.missed if step_no == number]
            print(
                f"{done[-1]}: {took:.1f}s, {len(reused_names)} reused"
                + (f", missed {missed}" if missed else ""),
                flush=True,
            )
            if mode == "concurrent":  # who built what: a race's records explain the next step
                for i, run in enumerate(runs):
                    print(f"  process {i} built: {_built(run)}", flush=True)

        assert history is not None
        could_total, reused_total = tally.totals(kinds)
        print(
            f"reuse history: seed {SEED}, {STEPS} steps, {len(history.nodes)} nodes, "
            f"{time.monotonic() - started:.0f}s; counted kinds {sorted(kinds)}: could be reused "
            f"{could_total}, reused {reused_total} ({100 * tally.ratio(kinds):.1f}%); per kind "
            f"could {tally.could}, reused {tally.reused}; missed {tally.missed[:30]}",
            flush=True,
        )
        assert could_total > 0, "no step left a counted node reusable: the history tests nothing"
        if tally.ratio(kinds) < GOAL:
            fail(
                f"reused {reused_total} of {could_total} nodes that could have been "
                f"({100 * tally.ratio(kinds):.1f}% < {100 * GOAL:.0f}%); missed {tally.missed}"
            )


def _built(run) -> list[str]:
    return sorted(f"{o.name} ({o.reason})" for o in run.values() if not o.reused)
