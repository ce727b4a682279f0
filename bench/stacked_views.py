"""Stacked views: `dbt build --full-refresh` of a project of many small stacked views, ours
(warm engine, reuse off) against dbt-duckdb, in the same run (issue 62).

The project is generated (bench/stacked_project.py: 28 seeds, 116 models, views stacked eight
levels deep, a recursive CTE unrolled to --depth levels with unions, 70 generic tests) into the
work folder; nothing generated is committed. Two sides, each a fresh `dbt build --full-refresh`
process on a fresh copy of the project (an empty schema), timed from start to exit, the sides
alternating within each round, DO_NOT_TRACK=1 on both:

- ours: LAKEHOUSE_ENGINE=warm with an engine home of this bench's own, LAKEHOUSE_REUSE=off (so
  both sides do the work). One untimed `dbt build -s +j_00` (no tests) on another copy first
  starts and warms the engine; the engine is stopped at the end.
- dbt-duckdb: set up as bench/edit_loop.py does (its own venv, pinned versions), one DuckDB file
  in the project copy.

Printed: min and median per side and their ratio (goal <= 3x), the slowest nodes of ours' last
build with their wall time split (dbt / planning / jobs / catalog, from run_results.json's
adapter_response) beside dbt-duckdb's time for the same node, and the rows of the four final
tables on both sides (row count and a fingerprint of their columns, one `dbt show` per side):
a difference exits 1 after the figures.

    .venv/bin/python bench/stacked_views.py --rounds 3 [--depth 9] [--no-checkpoints] [--rebuild]

`--rebuild` (issue 61): each side builds its fresh copy once, untimed, then the timed `dbt build`
is a rebuild with nothing changed; ours with reuse on (the default), dbt-duckdb doing it all again.

The chain's plan doubles with each level (Spark inlines views). Without view checkpoints
(`--no-checkpoints`, docs/models.md#stacked-views) ours' `f_rec` over the ninth level ran for more
than nine minutes on 2 cores (a stage of ~1000 one-row tasks, each deserializing a task binary
that grows with the plan).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stacked_project  # noqa: E402
from edit_loop import DUCKDB_REQUIREMENTS, duckdb_dbt  # noqa: E402
from harness import (  # noqa: E402
    DBT,
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    duckdb_target,
    engine_state,
    fmt,
    fresh_copy,
    ours_target,
    report,
    run_timed,
    stop_engines,
    watch_engine,
    write_profiles,
)

SCHEMA = "stacked"
TIMEOUT_SECONDS = 1800.0
SLOWEST = 12
GOAL = 3.0
BUILD_RESULTS = "build_results.json"


class Side:
    """One contender: its dbt, environment and profile; each build on a fresh project copy."""

    def __init__(self, name: str, slug: str, work: Path, dbt: str, env: dict, profile) -> None:
        self.name, self.slug, self.work, self.dbt, self.env = name, slug, work, dbt, env
        self.profile = profile
        self.project = work / slug
        self.check = lambda sample: None

    def fresh(self, source: Path, project: Path | None = None) -> Path:
        project = fresh_copy(source, project or self.project)
        write_profiles(project, stacked_project.PROFILE, self.profile(project))
        return project

    def run(self, *args: str, project: Path | None = None, log: str) -> Sample:
        project = project or self.project
        sample = run_timed(
            [self.dbt, *dbt_command(*args, project=project)[1:]],
            project,
            env=self.env,
            timeout=TIMEOUT_SECONDS,
            log=self.work / "logs" / f"{self.slug}-{log}.log",
        )
        self.check(sample)
        return sample


def node_results(project: Path) -> dict[str, dict]:
    """The last build's results by node name."""
    path = project / BUILD_RESULTS
    if not path.exists():
        return {}
    # model.stacked.f_rec, test.stacked.unique_stg_s00_id.6a9fb0fb21: the name is the third part
    return {r["unique_id"].split(".")[2]: r for r in json.loads(path.read_text())["results"]}


def print_slowest(ours: dict[str, dict], duck: dict[str, dict]) -> None:
    """Ours' slowest nodes with their wall time split, and dbt-duckdb's time for the node."""
    print(f"\n## slowest nodes of ours' last build (of {len(ours)})")
    header = (
        f"{'node':<34} {'wall s':>7} {'dbt s':>6} {'plan s':>7} {'jobs s':>7} {'catalog s':>9} "
        f"{'spark s':>8} {'jobs':>5} {'duckdb s':>9}"
    )
    print(header)
    print("-" * len(header))
    ranked = sorted(ours.items(), key=lambda item: -item[1]["execution_time"])
    for name, result in ranked[:SLOWEST]:
        response = result.get("adapter_response") or {}
        wall = result["execution_time"]
        split = [response.get(key) for key in ("planning_seconds", "jobs_seconds")]
        split.append(response.get("catalog_seconds"))
        own = wall - sum(value or 0.0 for value in split)
        other = duck.get(name, {}).get("execution_time")
        print(
            f"{name[:34]:<34} {wall:>7.2f} {own:>6.2f} "
            + " ".join(
                f"{'-' if value is None else f'{value:.2f}':>{width}}"
                for value, width in zip(split, (7, 7, 9), strict=True)
            )
            + f" {response.get('spark_seconds') or 0.0:>8.2f} {response.get('spark_jobs') or 0:>5}"
            + f" {'-' if other is None else f'{other:.2f}':>9}"
        )
    total = {
        key: sum((r.get("adapter_response") or {}).get(key) or 0.0 for r in ours.values())
        for key in ("planning_seconds", "jobs_seconds", "catalog_seconds")
    }
    walls = sum(r["execution_time"] for r in ours.values())
    print(
        f"every node: wall {walls:.1f} s (threads overlap), "
        f"planning {total['planning_seconds']:.1f}"
        f" s, jobs {total['jobs_seconds']:.1f} s, catalog {total['catalog_seconds']:.1f} s; "
        f"dbt-duckdb's nodes {sum(r['execution_time'] for r in duck.values()):.1f} s"
    )


def checksums(side: Side) -> dict[str, tuple[int, int]] | str:
    """The final tables' row counts and fingerprints on `side`'s last build, from `dbt show`
    (its JSON log line); a string says why there are none."""
    log = side.work / "logs" / f"{side.slug}-show.json"
    sample = side.run(
        "show",
        "--inline",
        stacked_project.checksum_sql(),
        "--limit",
        "10",
        "--output",
        "json",
        "--log-format",
        "json",
        log="show",
    )
    text = (side.work / "logs" / f"{side.slug}-show.log").read_text(errors="replace")
    log.write_text(text)
    if not sample.ok:
        return f"dbt show failed: {sample.note}"
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        preview = event.get("data", {}).get("preview")
        if event.get("info", {}).get("name") == "ShowNode" and preview:
            rows = json.loads(preview)
            return {
                row["model"]: (int(float(row["row_count"])), int(float(row["fingerprint"] or 0)))
                for row in rows
            }
    return f"no ShowNode line in {log}"


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument(
        "--depth",
        type=int,
        default=stacked_project.DEPTH,
        help="levels of the unrolled recursive chain (default %(default)s)",
    )
    parser.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="ours without view checkpoints (every model `checkpoint: false`)",
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="time a rebuild with nothing changed after an untimed build (ours: reuse on)",
    )
    parser.add_argument(
        "--untimed",
        type=int,
        default=1,
        help="with --rebuild: untimed builds before the timed one (default %(default)s; 2: ours "
        "then recalls every reuse decision the first rebuild made, reuse/memo.py)",
    )
    parser.add_argument(
        "--duckdb-venv",
        type=Path,
        help="venv holding (or to hold) dbt-duckdb (default: <work>/edit_loop/duckdb-venv, "
        "bench/edit_loop.py's)",
    )
    args = parser.parse_args()
    work: Path = args.work / "stacked_views"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    source = work / "source"
    count = stacked_project.write(source, args.depth, checkpoints=not args.no_checkpoints)
    duck_dbt = duckdb_dbt(args.work / "edit_loop", args.duckdb_venv)

    base = {**os.environ, "DO_NOT_TRACK": "1"}
    home = work / "engines"
    stop_engines(home)  # a run stopped half-way may have left one
    ours = Side(
        "ours warm",
        "ours",
        work,
        DBT,
        {
            **base,
            "LAKEHOUSE_ENGINE": "warm",
            "LAKEHOUSE_ENGINE_HOME": str(home),
            "LAKEHOUSE_REUSE": "on" if args.rebuild else "off",
        },
        lambda project: ours_target(SCHEMA),
    )
    duck = Side(
        "dbt-duckdb",
        "duckdb",
        work,
        duck_dbt,
        base,
        lambda project: duckdb_target(SCHEMA, project / "stacked.duckdb"),
    )
    series = {side.name: Series(side.name) for side in (ours, duck)}
    engine_rss: list[float] = []

    def build(side: Side):
        def step(round_no: int) -> Sample:
            project = side.fresh(source)
            if args.rebuild:
                for untimed in range(args.untimed):
                    first = side.run("build", project=project, log=f"untimed-{untimed}-{round_no}")
                    if not first.ok:
                        return first
                sample = side.run("build", project=project, log=f"build-{round_no}")
            else:
                sample = side.run(
                    "build", "--full-refresh", project=project, log=f"build-{round_no}"
                )
            # Kept apart: the `dbt show` of the row check writes run_results.json again.
            results = project / "target" / "run_results.json"
            if results.exists():
                shutil.copy(results, project / BUILD_RESULTS)
            return sample

        return step

    try:
        print(
            "warming the engine: one untimed `dbt build -s +j_00` (tests excluded)", file=sys.stderr
        )
        warmup = ours.run(
            "build",
            "-s",
            "+j_00",
            "--exclude-resource-type",
            "test",
            project=ours.fresh(source, work / "warmup"),
            log="warmup",
        )
        jvm, _ = engine_state(home)
        if not warmup.ok or jvm is None:
            sys.exit(f"the warm-up build failed or left no engine running: {warmup.note}")
        print(f"  warm-up {warmup.seconds:.1f}s, engine JVM pid {jvm}", file=sys.stderr)
        ours.check = watch_engine(home, jvm, engine_rss)
        alternate(args.rounds, [(series[side.name], build(side)) for side in (ours, duck)])
        sums = {side.name: checksums(side) for side in (ours, duck)}
    finally:
        print(f"stopped {stop_engines(home)} warm engine(s)", file=sys.stderr)

    title = (
        f"stacked views: {count} models, 28 seeds, 70 tests, recursive chain {args.depth} deep, "
        + (
            f"a rebuild with nothing changed after {args.untimed} untimed build(s) (ours: reuse on)"
            if args.rebuild
            else "`dbt build --full-refresh` into an empty schema"
        )
        + f", {args.rounds} round(s)"
        + (", ours without view checkpoints (`checkpoint: false`)" if args.no_checkpoints else "")
    )
    print(f"\n# {title}")
    print("dbt-duckdb: " + (duck_dbt if duck_dbt == DBT else " ".join(DUCKDB_REQUIREMENTS)))
    print(
        f"ours: warm engine, reuse {'on' if args.rebuild else 'off'}; warm-up "
        f"{warmup.seconds:.1f}s; engine JVM RSS up to "
        f"{fmt(max(engine_rss, default=None), 'MB')}"
    )
    report(
        "dbt build, nothing changed" if args.rebuild else "dbt build --full-refresh",
        [("stacked views build", series[ours.name], series[duck.name], f"<={GOAL:.2f}x")],
    )
    print_slowest(node_results(ours.project), node_results(duck.project))

    print("\n## final tables' rows (count, fingerprint)")
    failed = False
    ours_sums, duck_sums = sums[ours.name], sums[duck.name]
    if isinstance(ours_sums, str) or isinstance(duck_sums, str):
        print(f"ours: {ours_sums if isinstance(ours_sums, str) else 'ok'}")
        print(f"dbt-duckdb: {duck_sums if isinstance(duck_sums, str) else 'ok'}")
        failed = True
    else:
        for model in stacked_project.FINALS:
            mine, theirs = ours_sums.get(model), duck_sums.get(model)
            same = mine == theirs and mine is not None
            failed |= not same
            print(f"{model:<14} ours {mine}  dbt-duckdb {theirs}  {'equal' if same else 'DIFFER'}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
