"""What reporting each node's work costs the edit loop: the share of the adapter's report package
(report/: reading each commit's summary entries, the node's Spark jobs from Spark's status store,
the response and the run's summary table) in warm `dbt run -s customers`, `dbt show` and
`dbt build` of the sample.

As bench/catalogs_cost.py does, and for its reason (a wall-clock before/after pair cannot
resolve milliseconds on a shared 2-core machine), each command runs under cProfile in its own
process on the warm engine, and the script sums every call into `dbt/adapters/lakehouse/report/`
from outside it. Reporting adds no Spark job: every figure is metadata the JVM already holds.
Medians over the rounds.

    .venv/bin/python bench/report_cost.py [--rounds 3] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalogs_cost import PROFILE, SAMPLE, print_shares, profiled_run  # noqa: E402
from harness import DBT, fresh_copy, ours_target, stop_engines, write_profiles  # noqa: E402

PACKAGE = os.sep + os.path.join("lakehouse", "report") + os.sep
COMMANDS = {
    "run -s customers": ("run", "-s", "customers"),
    "show (orders count)": ("show", "--inline", "select count(*) from {{ ref('orders') }}"),
    "build (20 nodes)": ("build",),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-work")
    args = parser.parse_args()
    work: Path = args.work / "report_cost"
    home = work / "engines"
    stop_engines(home)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(home)}
    project = fresh_copy(SAMPLE, work / "sample")
    write_profiles(project, PROFILE, ours_target("jaffle"))
    build = [DBT, "build", "--profiles-dir", str(project), "--project-dir", str(project)]
    subprocess.run(build, cwd=project, env=env, check=True, capture_output=True)
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    try:
        for round_ in range(args.rounds):
            for name, command in COMMANDS.items():
                out = work / f"{round_}.prof"
                figures[name].append(profiled_run(project, env, out, command, PACKAGE))
    finally:
        stop_engines(home)
    title = f"warm dbt commands on the sample under cProfile, medians of {args.rounds} rounds"
    print_shares(title, "command (profiled)", "report package", figures)


if __name__ == "__main__":
    main()
