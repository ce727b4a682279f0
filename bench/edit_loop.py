"""Edit loop: build, run -s and show on the sample project; ours cold/warm, dbt-spark, dbt-duckdb.

Every command runs in a fresh dbt process, as typed in a shell, with DO_NOT_TRACK=1 on every
side (dbt's usage tracking otherwise reaches for the network). Four sides:

- ours cold: `LAKEHOUSE_ENGINE=cold`, a driver JVM started by every command (the old way).
- ours warm: `LAKEHOUSE_ENGINE=warm` with an engine home of its own under the work folder. Before
  any timed command, one untimed `dbt build` on another copy of the project starts the engine
  and warms it (classes loaded, JIT compiled, as after a developer's first command); every
  timed warm command then attaches to that engine. Its JVM is not a child of the dbt process,
  so the RSS column of a warm row is the dbt process alone; the engine's RSS is printed apart.
  The engines are stopped at the end (engine.warm.client.stop_engine).
- dbt-spark `method: session` (the peer), set up as bench/project_build.py does: Iceberg
  everywhere through a hadoop catalog, the staging views as tables (peer_project).
- dbt-duckdb in a venv of its own (pinned below, the same dbt-core as ours), on one DuckDB file
  in the project copy. The staging views stay views; orders.sql loses its Iceberg-only
  `partition_by` transforms and `table_properties` and keeps its incremental merge.

The project is examples/jaffle_lakehouse as it stands (3 seeds of 10-16 rows, 5 models, a
snapshot, 11 tests: 20 nodes). Three commands, each timed over --rounds rounds, the sides
alternating within a round:

1. `dbt build` on an empty warehouse (a fresh copy of the project each round): seeds, views,
   tables, the snapshot, every test. Goals: warm <= 0.5x the peer, cold <= 0.9x the peer.
2. `dbt run -s customers` on the project the last build left. Goals: warm <= 1.3x dbt-duckdb
   and <= 0.25x the peer.
3. `dbt show --inline "select count(*) from {{ ref('orders') }}"` on the same project. Goals:
   as for 2.

dbt-duckdb is used from this venv when installed here, else from --duckdb-venv, created and
filled from PyPI on first use.

    .venv/bin/python bench/edit_loop.py --rounds 3
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    DBT,
    REPO,
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
    peer_settings,
    peer_target,
    report,
    run_timed,
    stop_engines,
    watch_engine,
    write_profiles,
)
from project_build import PROFILE, peer_project  # noqa: E402

SAMPLE = REPO / "examples" / "jaffle_lakehouse"
SCHEMA = "jaffle"
RUN_MODEL = "customers"
SHOW_SQL = "select count(*) from {{ ref('orders') }}"
TIMEOUT_SECONDS = 900.0
# dbt-duckdb for dbt-core 1.11, with the DuckDB it was released with, and ours' dbt-core: both
# sides then pay the same dbt start-up.
DBT_CORE = importlib.metadata.version("dbt-core")
DUCKDB_REQUIREMENTS = ("dbt-duckdb==1.11.1", "duckdb==1.5.5", f"dbt-core=={DBT_CORE}")
# dbt-core 1.12.1+ requires a parser published only as sdists that download from outside the
# package registries: resolved with 1.12.0 and the parser's last wheels, then ours alone, as
# scripts/install.sh installs ours.
if DBT_CORE.startswith("1.12."):
    DUCKDB_REQUIREMENTS = (
        *DUCKDB_REQUIREMENTS[:2],
        "dbt-core==1.12.0",
        "dbt-core-experimental-parser==2.0.0a4",
    )
SIDES = ("ours cold", "ours warm", "dbt-spark session", "dbt-duckdb")


def duckdb_project(project: Path) -> None:
    """The same project for dbt-duckdb: orders.sql without its Iceberg-only config."""
    orders = project / "models" / "marts" / "orders.sql"
    text = orders.read_text()
    head, rest = text.split(") }}", 1)
    kept = [
        line
        for line in head.splitlines()
        if not line.strip().startswith(("partition_by", "table_properties"))
    ]
    orders.write_text("\n".join(kept) + "\n) }}" + rest)


def duckdb_dbt(work: Path, venv: Path | None) -> str:
    """A `dbt` with dbt-duckdb: this venv's, when it has it, else one in `venv`, installed from
    PyPI (pinned, DUCKDB_REQUIREMENTS) on first use."""
    if importlib.util.find_spec("dbt.adapters.duckdb") is not None:
        return DBT
    venv = venv or work / "duckdb-venv"
    dbt = venv / "bin" / "dbt"
    check = [str(venv / "bin" / "python"), "-c", "import dbt.adapters.duckdb"]
    if dbt.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(dbt)
    print(
        f"dbt-duckdb is not installed here; installing {' '.join(DUCKDB_REQUIREMENTS)} from PyPI "
        f"into {venv} (once, untimed)",
        file=sys.stderr,
    )
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *DUCKDB_REQUIREMENTS], check=True)
    subprocess.run([*pip, "--no-deps", f"dbt-core=={DBT_CORE}"], check=True)
    subprocess.run(check, check=True)
    return str(dbt)


class Side:
    """One contender: its dbt, environment, project copy and how to prepare a copy."""

    def __init__(
        self,
        name: str,
        slug: str,
        work: Path,
        dbt: str,
        env: Mapping[str, str],
        profile: Callable[[Path], dict],
        adapt: Callable[[Path], None] = lambda project: None,
    ) -> None:
        self.name, self.work, self.dbt, self.env = name, work, dbt, dict(env)
        self.slug = slug
        self.project = work / self.slug
        self.profile, self.adapt = profile, adapt
        self.check: Callable[[Sample], None] = lambda sample: None

    def fresh(self, project: Path | None = None) -> Path:
        project = fresh_copy(SAMPLE, project or self.project)
        self.adapt(project)
        write_profiles(project, PROFILE, self.profile(project))
        return project

    def run(self, *args: str, project: Path | None = None, log: str) -> Sample:
        project = project or self.project
        command = [self.dbt, *dbt_command(*args, project=project)[1:]]
        sample = run_timed(
            command,
            project,
            env=self.env,
            timeout=TIMEOUT_SECONDS,
            log=self.work / "logs" / f"{self.slug}-{log}.log",
        )
        self.check(sample)
        return sample


def _build(side: Side) -> Callable[[int], Sample]:
    return lambda round_no: side.run("build", project=side.fresh(), log=f"build-{round_no}")


def _run_model(side: Side) -> Callable[[int], Sample]:
    return lambda round_no: side.run("run", "-s", RUN_MODEL, log=f"run-{round_no}")


def _show(side: Side) -> Callable[[int], Sample]:
    return lambda round_no: side.run("show", "--inline", SHOW_SQL, log=f"show-{round_no}")


# The three timed commands, each a step per side (a round number -> its Sample).
COMMANDS: dict[str, Callable[[Side], Callable[[int], Sample]]] = {
    "dbt build (empty warehouse)": _build,
    f"dbt run -s {RUN_MODEL}": _run_model,
    "dbt show --inline count(orders)": _show,
}


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument(
        "--duckdb-venv",
        type=Path,
        help="venv holding (or to hold) dbt-duckdb, when this venv has none "
        "(default: <work>/edit_loop/duckdb-venv)",
    )
    args = parser.parse_args()
    work: Path = args.work / "edit_loop"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    duck_dbt = duckdb_dbt(work, args.duckdb_venv)

    base = {**os.environ, "DO_NOT_TRACK": "1"}
    cold_home, warm_home = work / "engines-cold", work / "engines-warm"
    stop_engines(cold_home, warm_home)  # a run stopped half-way may have left one

    def peer_profile(project: Path) -> dict:
        warehouse = project / "peer_warehouse"
        # The hadoop catalog cannot list a missing folder.
        warehouse.mkdir(parents=True, exist_ok=True)
        return peer_target(SCHEMA, warehouse, spark_defaults=args.peer_spark_defaults)

    def duck_profile(project: Path) -> dict:
        return duckdb_target(SCHEMA, project / "jaffle.duckdb")

    cold = Side(
        "ours cold",
        "cold",
        work,
        DBT,
        {**base, "LAKEHOUSE_ENGINE": "cold", "LAKEHOUSE_ENGINE_HOME": str(cold_home)},
        lambda project: ours_target(SCHEMA),
    )
    warm = Side(
        "ours warm",
        "warm",
        work,
        DBT,
        {**base, "LAKEHOUSE_ENGINE": "warm", "LAKEHOUSE_ENGINE_HOME": str(warm_home)},
        lambda project: ours_target(SCHEMA),
    )
    peer = Side("dbt-spark session", "peer", work, DBT, base, peer_profile, peer_project)
    duck = Side("dbt-duckdb", "duckdb", work, duck_dbt, base, duck_profile, duckdb_project)
    sides = (cold, warm, peer, duck)

    engine_rss: list[float] = []
    try:
        print("warming the engine: one untimed `dbt build` on another copy", file=sys.stderr)
        warmup = warm.run("build", project=warm.fresh(work / "warmup"), log="warmup")
        jvm, rss = engine_state(warm_home)
        if not warmup.ok or jvm is None:
            sys.exit(f"the warm-up build failed or left no engine running: {warmup.note}")
        print(f"  warm-up {warmup.seconds:.1f}s, engine JVM pid {jvm}", file=sys.stderr)

        warm.check = watch_engine(warm_home, jvm, engine_rss)

        commands = COMMANDS
        results: dict[str, dict[str, Series]] = {}
        for command, step in commands.items():
            print(f"{command}:", file=sys.stderr)
            series = {side.name: Series(side.name) for side in sides}
            alternate(args.rounds, [(series[side.name], step(side)) for side in sides])
            results[command] = series
    finally:
        stopped = stop_engines(cold_home, warm_home)
        print(f"stopped {stopped} warm engine(s)", file=sys.stderr)

    title = (
        f"edit loop: examples/jaffle_lakehouse, fresh dbt process per command, "
        f"{args.rounds} round(s){peer_settings(args)}"
    )
    print(f"\n# {title}")
    print("dbt-duckdb: " + (duck_dbt if duck_dbt == DBT else " ".join(DUCKDB_REQUIREMENTS)))
    print(
        f"ours warm: engine warmed by an untimed `dbt build` ({warmup.seconds:.1f}s); "
        f"engine JVM RSS up to {fmt(max(engine_rss, default=None), 'MB')} "
        "(not in the warm rows' RSS)"
    )
    header = f"{'command (median)':<34}" + "".join(f"{name:>19}" for name in SIDES)
    print(header)
    print("-" * len(header))
    for command, series in results.items():
        print(f"{command:<34}" + "".join(f"{fmt(series[name].median):>19}" for name in SIDES))

    goals = {  # (ours, other, goal) per command; None: printed without a goal
        "dbt build (empty warehouse)": [
            ("ours warm", "dbt-duckdb", None),
            ("ours warm", "dbt-spark session", 0.5),
            ("ours cold", "dbt-spark session", 0.9),
        ],
        f"dbt run -s {RUN_MODEL}": [
            ("ours warm", "dbt-duckdb", 1.3),
            ("ours warm", "dbt-spark session", 0.25),
            ("ours cold", "dbt-spark session", None),
        ],
        "dbt show --inline count(orders)": [
            ("ours warm", "dbt-duckdb", 1.3),
            ("ours warm", "dbt-spark session", 0.25),
            ("ours cold", "dbt-spark session", None),
        ],
    }
    verdicts = []
    for command, series in results.items():
        rows = []
        for ours, other, goal in goals[command]:
            short = {"dbt-spark session": "peer", "dbt-duckdb": "duckdb"}[other]
            case = f"{ours.split()[1]}/{short}"
            target = "-" if goal is None else f"<={goal:.2f}x"
            rows.append((case, series[ours], series[other], target))
            med_ours, med_other = series[ours].median, series[other].median
            if goal is not None and med_ours is not None and med_other is not None:
                value = med_ours / med_other
                verdicts.append(
                    f"{command}: {case} {value:.3f}x (goal <= {goal:.2f}x): "
                    + ("met" if value <= goal else "not met")
                )
        report(command, rows)
    print("\n## goals (medians)")
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
