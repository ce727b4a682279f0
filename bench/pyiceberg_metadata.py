"""Metadata without a query engine: pyiceberg on the embedded lakehouse's SQLite catalog against
the JVM path (the warm engine), per operation, cold and warm.

The sample is built once into an embedded lakehouse. Then, in fresh processes, each side does
the metadata operations dbt-lakehouse needs without a query:

- list a schema's relations (`SHOW TABLES` | `list_tables` + the catalog's views),
- a table's last commit time (source freshness; `<t>.snapshots` | `current_snapshot()`),
- a table's row count and size (the docs catalog's stats; the snapshot summary, both sides),
- a table's history (`dbt-lakehouse history`; `<t>.history` | `table.history()`).

"cold" is the first operation in a new process, including what that side must do first: the
JVM side attaches to the warm engine that is already up (as every dbt command does), pyiceberg
imports itself and opens the catalog file. "warm" is the same operation again in that process.
Medians of --rounds fresh processes per side. A path moves to pyiceberg only where it wins both.

Then the whole `dbt-lakehouse history` command, a fresh process each time, the three ways it can
go: attached to the warm engine that is up; with no engine up, through pyiceberg (what it does
now); and with no engine up through a JVM of its own (what it did before: the same Spark read,
LAKEHOUSE_ENGINE=cold). The three must print the same table.

    .venv/bin/python bench/pyiceberg_metadata.py [--rounds 3] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    DBT,
    REPO,
    SHARED_SPARK_CONF,
    fresh_copy,
    ours_target,
    stop_engines,
    write_profiles,
)

SAMPLE = REPO / "examples" / "jaffle_lakehouse"
SCHEMA = "jaffle"
TABLE = "orders"
OPERATIONS = ("list relations", "last commit", "row count and size", "history")

JVM_SIDE = """
import json, sys, time
started = time.perf_counter()
from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
# The profile the sample was built with, so this attaches to the engine its build left warm.
spark_options = SparkOptions(master=sys.argv[5], driver_memory=sys.argv[6])
creds = LakehouseCredentials(schema=sys.argv[2], warehouse=sys.argv[1], spark=spark_options)
spark = ENGINE.get(resolve_profile(creds).spec)
ready = time.perf_counter() - started
t = f"lakehouse.{sys.argv[2]}.{sys.argv[3]}"
ops = {
    "list relations": lambda: spark.sql(f"show tables in lakehouse.{sys.argv[2]}").collect(),
    "last commit": lambda: spark.sql(
        f"select max(committed_at) from {t}.snapshots").collect(),
    "row count and size": lambda: spark.sql(
        f"select summary['total-records'], summary['total-files-size'] from {t}.snapshots "
        "order by committed_at desc limit 1").collect(),
    "history": lambda: spark.sql(f"select * from {t}.history").collect(),
}
"""

PYICEBERG_SIDE = """
import json, sys, time
started = time.perf_counter()
from dbt.adapters.lakehouse import open_catalog
catalog = open_catalog(sys.argv[4])
ready = time.perf_counter() - started
ident = (sys.argv[2], sys.argv[3])
ops = {
    "list relations": lambda: catalog.list_tables(sys.argv[2]),
    "last commit": lambda: catalog.load_table(ident).current_snapshot().timestamp_ms,
    "row count and size": lambda: (
        lambda s: (s["total-records"], s["total-files-size"])
    )(catalog.load_table(ident).current_snapshot().summary),
    "history": lambda: catalog.load_table(ident).history(),
}
"""

MEASURE = """
figures = {}
for name, op in ops.items():
    first = time.perf_counter(); op(); cold = time.perf_counter() - first
    again = time.perf_counter(); op(); warm = time.perf_counter() - again
    figures[name] = (cold, warm)
print("FIGURES " + json.dumps({"ready": ready, "ops": figures}))
"""


# The command as it was before pyiceberg read the embedded lakehouse's history: its Spark path.
HISTORY_THROUGH_SPARK = """
import argparse, sys
from dbt.adapters.lakehouse.cli.history import _read_with_spark
from dbt.adapters.lakehouse.cli.common import load_resolved
from dbt.adapters.lakehouse.iceberg.history import (
    history_rows, main_ancestors, render_table, table_name)
args = argparse.Namespace(profiles_dir=sys.argv[1], profile=None, target=None)
resolved, chosen = load_resolved("history", args)
commits, head = _read_with_spark(resolved, table_name(sys.argv[2], chosen.credentials.database))
print(render_table(history_rows(commits, main_ancestors(commits, head), 20)))
"""


def time_history(way: str, project: Path, env: dict[str, str], no_engines: Path) -> tuple:
    """Seconds and output of one `dbt-lakehouse history` process, the `way` named."""
    name = f"{SCHEMA}.{TABLE}"
    if way == "JVM of its own (before)":
        command = [sys.executable, "-c", HISTORY_THROUGH_SPARK, str(project), name]
        env = {**env, "LAKEHOUSE_ENGINE": "cold"}
    else:
        command = [str(Path(DBT).with_name("dbt-lakehouse")), "history", name,
                   "--profiles-dir", str(project)]  # fmt: skip
        if way == "no engine up: pyiceberg":
            env = {**env, "LAKEHOUSE_ENGINE_HOME": str(no_engines)}
    began = time.perf_counter()
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"history, {way}, failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def measure(side: str, warehouse: Path, project: Path, env: dict[str, str]) -> dict:
    code = (JVM_SIDE if side == "jvm" else PYICEBERG_SIDE) + MEASURE
    spark = SHARED_SPARK_CONF["spark.master"], SHARED_SPARK_CONF["spark.driver.memory"]
    argv = [str(warehouse), SCHEMA, TABLE, str(project), *spark]
    return run_figures(side, code, argv, project, env)


def run_figures(side: str, code: str, argv: list[str], project: Path, env: dict[str, str]) -> dict:
    """The FIGURES a side's script prints, run in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    line = next((x for x in done.stdout.splitlines() if x.startswith("FIGURES ")), None)
    if line is None:
        raise SystemExit(f"{side} side failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return dict(json.loads(line[len("FIGURES ") :]))


WAYS = ("engine up: attach", "no engine up: pyiceberg", "JVM of its own (before)")


def report(runs: dict[str, list[dict]], commands: dict[str, list[tuple]], rounds: int,
           name: str) -> None:  # fmt: skip
    """The per-operation table and the whole command's, with pyiceberg's ratios: cold against
    a JVM of its own, warm (an engine up) against attaching to it."""

    def med(side: str, pick) -> float:  # type: ignore[no-untyped-def]
        return statistics.median(pick(r) for r in runs[side]) * 1000

    print(f"`{name}`, medians of {rounds} fresh processes per side (ms)")
    print("| operation | JVM cold | pyiceberg cold | JVM warm | pyiceberg warm |")
    print("|---|---|---|---|---|")
    ready = (med("jvm", lambda r: r["ready"]), med("pyiceberg", lambda r: r["ready"]))
    print(
        f"| before the first (attach / import + open) | {ready[0]:.0f} | {ready[1]:.0f} | - | - |"
    )
    for op in OPERATIONS:
        cells = [
            med(side, lambda r, op=op, i=i: r["ops"][op][i])
            for i in (0, 1)
            for side in ("jvm", "pyiceberg")
        ]
        print(f"| {op} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    printed = {out for way in WAYS for _, out in commands[way]}
    assert len(printed) == 1, f"the ways printed different tables:\n{printed}"
    print(f"\n`dbt-lakehouse history {name}`, a fresh process each, medians of "
          f"{rounds} (s); the three printed the same table")  # fmt: skip
    print("| way | command | ratio to a JVM of its own | ratio to attach |")
    print("|---|---|---|---|")
    seconds = {way: statistics.median(s for s, _ in commands[way]) for way in WAYS}
    for way in WAYS:
        print(f"| {way} | {seconds[way]:.2f} | {seconds[way] / seconds[WAYS[2]]:.2f}x | "
              f"{seconds[way] / seconds[WAYS[0]]:.2f}x |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-work")
    args = parser.parse_args()
    work: Path = args.work / "pyiceberg_metadata"
    home = work / "engines"
    stop_engines(home)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(home)}
    project = fresh_copy(SAMPLE, work / "sample")
    warehouse = project / "lakehouse_warehouse"
    write_profiles(project, "jaffle_lakehouse", ours_target(SCHEMA))
    build = [DBT, "build", "--profiles-dir", str(project), "--project-dir", str(project)]
    subprocess.run(build, cwd=project, env=env, check=True, capture_output=True)
    runs: dict[str, list[dict]] = {"jvm": [], "pyiceberg": []}
    commands: dict[str, list[tuple]] = {way: [] for way in WAYS}
    try:
        for _ in range(args.rounds):
            for side in runs:  # alternating
                runs[side].append(measure(side, warehouse, project, env))
            for way in WAYS:
                commands[way].append(time_history(way, project, env, work / "no-engines"))
    finally:
        stop_engines(home)

    report(runs, commands, args.rounds, f"{SCHEMA}.{TABLE}")


if __name__ == "__main__":
    main()
