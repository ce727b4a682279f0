"""Reused nodes under Spark Connect (issue 61): the sample's `dbt build` over a Connect server,
reuse on against reuse off, into an empty schema and with nothing changed.

The server is `dbt-lakehouse serve` (its Connect endpoint only, with a token) on an embedded
lakehouse of this run's own; the sample (examples/jaffle_lakehouse: 3 seeds, 3 staging views, a
table, an incremental model, a snapshot, 11 tests) is built over it with `spark.master:
sc://...` (reuse/connect_inputs.py decides there: one EXPLAIN and one metadata statement a
node). Each build is a fresh `dbt` process timed from start to exit, the sides alternating and
each round starting with the next side:

0. into an empty schema (a schema of its own each build), after one untimed build of each
   side (a just-started server's JIT makes the first builds slower, whichever side runs them):
   nothing can be reused, so reuse on costs its decisions and records. Goal: <= 1.03x reuse
   off (medians).
1. nothing changed, after two untimed builds of each side (the incremental model's first
   incremental run, then a build that reuses): every node is reused there, the data tests
   from the results the last build wrote at its end. No goal is set for Connect: printed.

Besides wall time, each case's CPU seconds a build: the `dbt` process's and the server's (every
`java` process, read from /proc: run it with nothing else on the machine). On 2 cores the two
share, that is the cost reuse adds, and it spreads less from round to round than wall time.

    .venv/bin/python bench/reuse_connect.py --rounds 3
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edit_loop import SAMPLE  # noqa: E402
from harness import (  # noqa: E402
    DBT,
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    fresh_copy,
    ours_target,
    report,
    write_profiles,
)
from served import served_lakehouse, server_cpu_seconds  # noqa: E402
from timed_runs import run_timed  # noqa: E402

TOKEN = "bench-reuse-connect-token"  # noqa: S105 - this run's own server
PROFILE = "jaffle_lakehouse"
_SCHEMAS = itertools.count()


def build(project: Path, env: dict[str, str], schema: str, url: str, log: Path) -> Sample:
    target = {**ours_target(schema), "spark": {"master": url}, "warehouse": env["WAREHOUSE"]}
    write_profiles(project, PROFILE, target)
    command = [DBT, *dbt_command("build", project=project)[1:]]
    client, server = os.times(), server_cpu_seconds()
    sample = run_timed(command, project, env=env, timeout=900, log=log)
    after = os.times()
    dbt_cpu = after.children_user + after.children_system
    dbt_cpu -= client.children_user + client.children_system
    return replace(sample, cpu_seconds=dbt_cpu + server_cpu_seconds() - server)


def cpu_series(series: Series) -> Series:
    """The same builds, their CPU seconds in place of their wall time."""
    samples = [replace(s, seconds=s.cpu_seconds) for s in series.samples]
    return Series(f"{series.name} CPU", samples)


def main() -> int:
    args = common_args(__doc__.splitlines()[0]).parse_args()
    work = Path(tempfile.mkdtemp(prefix="lh-reuse-connect-"))
    env = {**os.environ, "WAREHOUSE": str(work / "warehouse")}
    try:
        with served_lakehouse(work, TOKEN, work / "warehouse") as (port, served_env):
            env.update(served_env)
            return measure(args.rounds, work, env, f"sc://localhost:{port}/;token={TOKEN}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(rounds: int, work: Path, env: dict[str, str], url: str) -> int:
    """Both cases, printed; 1 when a build failed."""
    sides = {}
    for side in ("on", "off"):
        project = fresh_copy(SAMPLE, work / f"reuse-{side}")
        sides[side] = (project, {**env, "LAKEHOUSE_REUSE": side})
    logs = work / "logs"
    logs.mkdir()

    def empty(side: str):
        project, side_env = sides[side]
        return lambda n: build(
            project, side_env, f"e{next(_SCHEMAS)}_{side}", url, logs / f"e-{side}-{n}.log"
        )

    def nothing(side: str):
        project, side_env = sides[side]
        return lambda n: build(project, side_env, f"n_{side}", url, logs / f"n-{side}-{n}.log")

    for side in sides:  # the server's JIT warms on the first builds, whichever side they are
        empty(side)(-1)
    empty_series = {side: Series(f"reuse {side}") for side in sides}
    alternate(rounds, [(empty_series[s], empty(s)) for s in sides], rotate=True)
    for side in sides:
        for n in range(2):
            nothing(side)(-1 - n)
    nothing_series = {side: Series(f"reuse {side}") for side in sides}
    alternate(rounds, [(nothing_series[s], nothing(s)) for s in sides], rotate=True)
    report(
        "reuse under Spark Connect (the sample over `dbt-lakehouse serve`)",
        [
            ("empty schema: on vs off", empty_series["on"], empty_series["off"], "1.03x"),
            ("nothing changed: on vs off", nothing_series["on"], nothing_series["off"], "-"),
            (
                "empty schema, CPU s: on vs off",
                cpu_series(empty_series["on"]),
                cpu_series(empty_series["off"]),
                "1.03x",
            ),
            (
                "nothing changed, CPU s: on vs off",
                cpu_series(nothing_series["on"]),
                cpu_series(nothing_series["off"]),
                "-",
            ),
        ],
    )
    failed = [s for series in (*empty_series.values(), *nothing_series.values())
              for s in series.samples if not s.ok]  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
