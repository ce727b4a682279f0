"""Reused nodes on the sample project: a warm `dbt build` with nothing changed, and after one
staging model is edited, with reuse on against reuse off and against dbt-duckdb (issue 61).

The project is examples/jaffle_lakehouse as it stands (3 seeds, 3 staging views, the table
`customers`, the incremental `orders`, a snapshot, 11 tests: 20 nodes). Three sides, each a
fresh `dbt build` process timed from start to exit (what a user waits), DO_NOT_TRACK=1:

- reuse on: LAKEHOUSE_REUSE=on, LAKEHOUSE_ENGINE=warm, an engine home of this bench's own;
- reuse off: LAKEHOUSE_REUSE=off, the same engine (it serves any project);
- dbt-duckdb: set up as bench/edit_loop.py does (its venv, pinned versions, orders.sql without
  its Iceberg-only config); it builds everything every time.

Each side builds its own copy of the project once (--first-builds), untimed: the reuse-on copy
with reuse on, so its records are written; the first of these starts the warm engine, whose
warm-up (--warm-up-seconds) the script then waits out, as a user's next command after a minute
of editing finds it: it runs only while no command of ours is attached. (The
incremental `orders`' first incremental run after its full build is never reused: with one
untimed build, round 1 of "nothing changed" builds it.) Then, the sides alternating within each
round, each round starting with the next side (none always follows the same one):

0. `dbt build` into an empty warehouse (each side's copy made again: nothing recorded, nothing
   built), --rounds times. Goals (medians): reuse on <= 1.03x reuse off (what deciding and
   recording cost when nothing can be reused), and <= 1.6x dbt-duckdb. Each side is left with
   one build, as after --first-builds 1.
1. `dbt build` with nothing changed, --rounds times, after --settle-builds untimed builds of
   each side (default 2: the incremental `orders`' first incremental run, then the build whose
   full decisions are remembered, reuse/memo.py; each round is then a build following a build
   with nothing changed in between). Goals (medians): reuse on <= 0.3x reuse off, and <= 0.8x
   dbt-duckdb.
2. stg_customers edited (a computed column `full_name`, each round another expression, so each
   build follows a real change), then `dbt build` (reuse on and off only). Goal: reuse on <= 0.6x
   reuse off. Every node of the reuse-on side's run_results.json that is not stg_customers or
   downstream of it (manifest.json's child_map) must be `reused`: the script says which were not
   and exits 1 after printing the figures.

Printed per side: min and median, the ratios, and the reused / built nodes of each build from
run_results.json (built: any other status, tests included), with the reuse-on side's built nodes
and their reuse_reason. The warm engine is stopped at the end.

    .venv/bin/python bench/reuse_sample.py --rounds 3
    .venv/bin/python bench/reuse_sample.py --rounds 7 --cases empty --warm-dbt
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edit_loop import (  # noqa: E402
    DUCKDB_REQUIREMENTS,
    SAMPLE,
    SCHEMA,
    Side,
    duckdb_dbt,
    duckdb_project,
)
from harness import (  # noqa: E402
    DBT,
    WARM_UP_ENV,
    Sample,
    Series,
    add_warm_up_argument,
    alternate,
    common_args,
    duckdb_target,
    engine_state,
    fmt,
    ours_target,
    report,
    stop_engines,
    wait_warm_up,
    watch_engine,
)

from dbt.adapters.lakehouse.warm_dbt import switch  # noqa: E402
from dbt.adapters.lakehouse.warm_dbt.client import SWITCH  # noqa: E402

EDITED = "stg_customers"
EDITED_ID = f"model.jaffle_lakehouse.{EDITED}"
# One computed column, another expression each round: every edited build follows a change.
EDITS = (
    "concat(first_name, ' ', last_name) as full_name",
    "concat(last_name, ', ', first_name) as full_name",
)
NOTHING, EDIT = "nothing changed", f"{EDITED} edited"
EMPTY = "first build (empty warehouse)"
CASES = {"empty": EMPTY, "nothing": NOTHING, "edited": EDIT}  # --cases
WARM = "(warm dbt)"
GOALS = {  # shape -> (ours, other, goal) on medians
    # Nothing can be reused yet: what deciding and recording costs (issue 61: <= 3%); against
    # dbt-duckdb, issue 62's empty-schema build (<= 1.6x, there on the classic jaffle_shop).
    EMPTY: [("reuse on", "reuse off", 1.03), ("reuse on", "dbt-duckdb", 1.6)],
    NOTHING: [("reuse on", "reuse off", 0.3), ("reuse on", "dbt-duckdb", 0.8)],
    EDIT: [("reuse on", "reuse off", 0.6)],
}


def edit_staging(project: Path, round_no: int) -> None:
    """stg_customers with one more column: the sample's SQL, its select list extended."""
    path = project / "models" / "staging" / f"{EDITED}.sql"
    original = (SAMPLE / "models" / "staging" / f"{EDITED}.sql").read_text()
    edited = original.replace("last_name\n", f"last_name, {EDITS[round_no % len(EDITS)]}\n", 1)
    if edited == original:
        sys.exit(f"{path}: the sample's {EDITED}.sql changed; cannot place the edit")
    path.write_text(edited)


def results_of(project: Path) -> list[dict]:
    """The last run's node results (unique_id, status, adapter_response), or none."""
    path = project / "target" / "run_results.json"
    return json.loads(path.read_text())["results"] if path.exists() else []


def downstream(project: Path, node: str) -> set[str]:
    """Every node downstream of `node` in the project's last manifest (tests included)."""
    children = json.loads((project / "target" / "manifest.json").read_text())["child_map"]
    found: set[str] = set()
    stack = list(children.get(node, []))
    while stack:
        child = stack.pop()
        if child not in found:
            found.add(child)
            stack.extend(children.get(child, []))
    return found


def short(unique_id: str) -> str:
    """`customers`, `not_null_orders_order_id`: a node's name without its type and package."""
    return unique_id.split(".")[2] if unique_id.count(".") >= 2 else unique_id


def was_reused(result: dict) -> bool:
    """A reused model, seed or snapshot has dbt's status `reused`; a reused test keeps its
    PASS/WARN/FAIL and says so in its adapter_response."""
    response = result.get("adapter_response") or {}
    return result["status"] == "reused" or response.get("reused") is True


def counts(results: list[dict]) -> str:
    reused = sum(was_reused(r) for r in results)
    return f"{reused}/{len(results) - reused}"


def built_lines(results: list[dict]) -> list[str]:
    """The nodes a run built, each with its reuse_reason (none: reuse does not decide it)."""
    lines = []
    for r in results:
        if was_reused(r):
            continue
        reason = (r.get("adapter_response") or {}).get("reuse_reason")
        lines.append(f"{short(r['unique_id'])} [{r['status']}]: {reason or 'no reuse decision'}")
    return lines


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument(
        "--duckdb-venv",
        type=Path,
        help="venv holding (or to hold) dbt-duckdb, when this venv has none "
        "(default: edit_loop.py's, <work>/edit_loop/duckdb-venv)",
    )
    parser.add_argument(
        "--first-builds",
        type=int,
        default=1,
        help="untimed builds of each side's copy before the rounds (default %(default)s: "
        "'nothing changed' is the second build; an incremental model's first incremental run "
        "is never reused, 2 measures the steady state)",
    )
    parser.add_argument(
        "--settle-builds",
        type=int,
        default=2,
        help="untimed builds of each side before the nothing-changed rounds (default "
        "%(default)s; 0: the first round is the incremental model's first incremental run)",
    )
    parser.add_argument(
        "--warm-dbt",
        action="store_true",
        help="also two sides whose `dbt` runs forked from a warm zygote (docs/warm-dbt.md): the "
        "warm dbt is turned on in this venv for the run and off at its end; the other sides "
        "run with LAKEHOUSE_WARM_DBT=off",
    )
    parser.add_argument(
        "--cases",
        default=",".join(CASES),
        help="the cases to run, comma-separated (default %(default)s): a narrower run "
        "affords more rounds of the case it measures",
    )
    add_warm_up_argument(parser)
    args = parser.parse_args()
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    if not chosen or set(chosen) - set(CASES):
        parser.error(f"--cases: one or more of {', '.join(CASES)}")
    shapes = [CASES[c] for c in chosen]
    work: Path = args.work / "reuse_sample"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    duck_dbt = duckdb_dbt(args.work / "edit_loop", args.duckdb_venv)
    home = work / "engines"
    stop_engines(home)  # a run stopped half-way may have left one
    load_before = os.getloadavg()

    base = {
        **os.environ,
        "DO_NOT_TRACK": "1",
        "LAKEHOUSE_ENGINE": "warm",
        "LAKEHOUSE_ENGINE_HOME": str(home),
        WARM_UP_ENV: f"{args.warm_up_seconds:g}",
    }

    def ours(project: Path) -> dict:
        return ours_target(SCHEMA)

    def duck(project: Path) -> dict:
        return duckdb_target(SCHEMA, project / "jaffle.duckdb")

    plain = {**base, SWITCH: "off"}
    on = Side("reuse on", "on", work, DBT, {**plain, "LAKEHOUSE_REUSE": "on"}, ours)
    off = Side("reuse off", "off", work, DBT, {**plain, "LAKEHOUSE_REUSE": "off"}, ours)
    duckdb = Side("dbt-duckdb", "duckdb", work, duck_dbt, base, duck, duckdb_project)
    sides = {side.name: side for side in (on, off, duckdb)}
    goals = {shape: list(rows) for shape, rows in GOALS.items() if shape in shapes}
    if args.warm_dbt:
        for reuse in ("on", "off"):
            env = {**base, "LAKEHOUSE_REUSE": reuse}
            side = Side(f"{reuse} {WARM}", f"{reuse}-warm", work, DBT, env, ours)
            sides[side.name] = side
        for shape in goals:
            goals[shape] += [
                (f"on {WARM}", f"off {WARM}" if other == "reuse off" else other, goal)
                for _, other, goal in GOALS[shape]
            ]
        print(f"warm dbt on for this run: {switch.turn_on()}", file=sys.stderr)

    series = {(shape, name): Series(name) for shape in goals for name in sides}
    node_counts: dict[tuple[str, str], list[str]] = {key: [] for key in series}
    built_by_on: dict[str, list[str]] = {}  # shape -> the last reuse-on build's built nodes
    unrelated_built: dict[int, list[str]] = {}  # edit round -> nodes built that should not be
    engine_rss: list[float] = []

    def step(
        side: Side, shape: str, prepare: Callable[[Path, int], None] | None = None
    ) -> Callable[[int], Sample]:
        def run(round_no: int) -> Sample:
            if prepare:
                prepare(side.project, round_no)
            slug = "empty" if shape == EMPTY else shape.split()[-1]
            sample = side.run("build", log=f"{slug}-{round_no}")
            results = results_of(side.project)
            node_counts[(shape, side.name)].append(counts(results))
            if side is not on:
                return sample
            built_by_on[shape] = built_lines(results)
            if shape == EDIT:  # nothing outside the edited model's descendants is built
                related = downstream(side.project, EDITED_ID) | {EDITED_ID}
                unrelated_built[round_no] = [
                    f"{short(r['unique_id'])} [{r['status']}]"
                    for r in results
                    if r["unique_id"] not in related and not was_reused(r)
                ]
            return sample

        return run

    first: dict[str, list[str]] = {}  # side -> each untimed build's seconds and counts
    settled: dict[str, list[str]] = {}  # the same, before the nothing-changed rounds
    try:
        for side in sides.values():
            print(f"{side.name}: {args.first_builds} untimed build(s)", file=sys.stderr)
            side.fresh()
            for n in range(args.first_builds):
                sample = side.run("build", log=f"first-{n}")
                if not sample.ok:
                    sys.exit(f"{side.name}: untimed build {n + 1} failed: {sample.note}")
                said = f"{sample.seconds:.1f}s ({counts(results_of(side.project))})"
                first.setdefault(side.name, []).append(said)
                print(f"  {said}", file=sys.stderr)
        waited = wait_warm_up(home)
        print(f"the engine's warm-up ended {waited:.0f}s after the first builds", file=sys.stderr)
        jvm, _ = engine_state(home)
        if jvm is None:
            sys.exit(f"no warm engine runs in {home} after the first builds")
        on.check = off.check = watch_engine(home, jvm, engine_rss)

        if EMPTY in goals:
            print(f"{EMPTY}:", file=sys.stderr)
            alternate(
                args.rounds,
                [
                    (series[(EMPTY, n)], step(s, EMPTY, lambda _p, _r, s=s: s.fresh()))
                    for n, s in sides.items()
                ],
                rotate=True,
            )
        for side in sides.values() if NOTHING in goals else ():
            for n in range(args.settle_builds):
                sample = side.run("build", log=f"settle-{n}")
                said = f"{sample.seconds:.1f}s ({counts(results_of(side.project))})"
                settled.setdefault(side.name, []).append(said)
        if NOTHING in goals:
            print(f"{NOTHING}:", file=sys.stderr)
            nothing = [(series[(NOTHING, n)], step(s, NOTHING)) for n, s in sides.items()]
            alternate(args.rounds, nothing, rotate=True)
        if EDIT in goals:
            print(f"{EDIT}:", file=sys.stderr)
            alternate(
                args.rounds,
                [
                    (series[(EDIT, s.name)], step(s, EDIT, edit_staging))
                    for n, s in sides.items()
                    if n != duckdb.name
                ],
                rotate=True,
            )
    finally:
        stopped = stop_engines(home)
        print(f"stopped {stopped} warm engine(s)", file=sys.stderr)
        if args.warm_dbt:
            removed, zygotes = switch.turn_off(os.environ)
            print(f"warm dbt off ({removed}); zygotes stopped: {zygotes}", file=sys.stderr)

    load_after = os.getloadavg()
    print(f"\n# reused nodes on examples/jaffle_lakehouse: `dbt build`, {args.rounds} round(s)")
    print(
        "dbt-duckdb: "
        + (duck_dbt if duck_dbt == DBT else " ".join(DUCKDB_REQUIREMENTS))
        + f"; warm engine JVM RSS up to {fmt(max(engine_rss, default=None), 'MB')}"
    )
    print(
        "untimed builds before the rounds (reused/built): "
        + "; ".join(f"{name} {', '.join(said)}" for name, said in first.items())
        + f"; load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after"
    )
    if settled:
        print(
            "untimed builds before the nothing-changed rounds (reused/built): "
            + "; ".join(f"{name} {', '.join(said)}" for name, said in settled.items())
        )
    verdicts = []
    for shape, rows_of_goals in goals.items():
        print(f"\n## {shape}: reused/built nodes per round (run_results.json)")
        for name in sides:
            if node_counts[(shape, name)]:
                print(f"{name:<12} {', '.join(node_counts[(shape, name)])}")
        if built_by_on.get(shape):
            print("reuse on, built in its last round (each node's reuse_reason):")
            for line in built_by_on[shape]:
                print(f"  {line}")
        rows = []
        for ours_name, other, goal in rows_of_goals:
            mine, theirs = series[(shape, ours_name)], series[(shape, other)]
            case = f"{ours_name} / {other}"
            rows.append((case, mine, theirs, f"<={goal:.2f}x"))
            if mine.median is not None and theirs.median is not None:
                value = mine.median / theirs.median
                verdicts.append(
                    f"{shape}: {case} {value:.3f}x (goal <= {goal:.2f}x): "
                    + ("met" if value <= goal else "not met")
                )
        report(f"{shape}: `dbt build` wall time", rows)
    print("\n## goals (medians)")
    for line in verdicts:
        print(line)

    failed = [s.name for s in series.values() if len(s.times) < len(s.samples)]
    if failed:
        print(f"\nFAILED builds on: {', '.join(sorted(set(failed)))} (logs: {work / 'logs'})")
    wrong = {r: nodes for r, nodes in unrelated_built.items() if nodes}
    if wrong:
        print(f"\nFAILED: nodes not downstream of {EDITED} were built with reuse on:")
        for round_no, nodes in wrong.items():
            print(f"  round {round_no + 1}: {len(nodes)}: {', '.join(nodes)}")
    elif EDIT in goals:
        print(f"\nafter each edit only {EDITED} and its downstream nodes were built")
    if failed or wrong:
        sys.exit(1)


if __name__ == "__main__":
    main()
