"""What reading dbt's catalogs.yml costs the edit loop: the catalogs package's share of a warm
`dbt run -s customers`, without and with a catalogs.yml.

Wall-clock before/after comparisons of a 5-second command cannot resolve a few milliseconds on
a shared 2-core machine, so this measures the package itself: each command runs under cProfile
(in its own process, on the warm engine, as users run it) and the script sums the time of every
call into `dbt/adapters/lakehouse/catalogs/` from outside it (module imports included), then
prints it beside the command's own time. Medians over the rounds.

    .venv/bin/python bench/catalogs_cost.py [--rounds 5] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import DBT, REPO, fresh_copy, ours_target, stop_engines, write_profiles  # noqa: E402

SAMPLE = REPO / "examples" / "jaffle_lakehouse"
PROFILE = "jaffle_lakehouse"
PACKAGE = os.sep + os.path.join("lakehouse", "catalogs") + os.sep
CATALOGS_YML = {
    "catalogs": [
        {
            "name": "side_lake",
            "active_write_integration": "side_lake_w",
            "write_integrations": [
                {
                    "name": "side_lake_w",
                    "catalog_type": "hadoop",
                    "table_format": "iceberg",
                    "external_volume": "side_lake",
                }
            ],
        }
    ]
}


def package_seconds(profile: Path, package: str = PACKAGE) -> float:
    """Time spent in calls into `package` (a path fragment) from code outside it."""
    stats = pstats.Stats(str(profile))
    total = 0.0
    for (file, _line, _name), (_cc, _nc, _tt, _ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if package not in file:
            continue
        for (caller_file, _l, _n), caller_stats in callers.items():
            if package not in caller_file:
                total += caller_stats[3]
    return total


def profiled_run(
    project: Path,
    env: dict[str, str],
    out: Path,
    args: tuple[str, ...] = ("run", "-s", "customers"),
    package: str = PACKAGE,
) -> tuple[float, float]:
    """One dbt command under cProfile: its wall time and the time spent in `package`."""
    command = [sys.executable, "-m", "cProfile", "-o", str(out), DBT, *args]
    command += ["--profiles-dir", str(project), "--project-dir", str(project)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"dbt {args[0]} failed:\n{done.stdout[-3000:]}")
    return wall, package_seconds(out, package)


def print_shares(
    title: str, first_column: str, package: str, figures: dict[str, list[tuple[float, float]]]
) -> None:
    """Each row's median wall time and time in the package, as a Markdown table."""
    print(title)
    print(f"| {first_column} | wall | {package} | share |")
    print("|---|---|---|---|")
    for name, rows in figures.items():
        wall = statistics.median(w for w, _ in rows)
        spent = statistics.median(p for _, p in rows)
        print(f"| {name} | {wall:.2f} s | {spent * 1000:.1f} ms | {spent / wall:.4f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-work")
    args = parser.parse_args()
    work: Path = args.work / "catalogs_cost"
    home = work / "engines"
    stop_engines(home)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(home)}
    projects = {}
    for name, catalogs in (("without catalogs.yml", None), ("with catalogs.yml", CATALOGS_YML)):
        project = fresh_copy(SAMPLE, work / name.replace(" ", "_").replace(".", "_"))
        write_profiles(project, PROFILE, ours_target("jaffle"))
        if catalogs is not None:
            (project / "catalogs.yml").write_text(yaml.safe_dump(catalogs))
        build = [DBT, "build", "--profiles-dir", str(project), "--project-dir", str(project)]
        subprocess.run(build, cwd=project, env=env, check=True, capture_output=True)
        projects[name] = project
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in projects}
    try:
        for round_ in range(args.rounds):
            for name, project in projects.items():  # alternating within each round
                out = work / f"{round_}.prof"
                figures[name].append(profiled_run(project, env, out))
    finally:
        stop_engines(home)
    title = f"warm `dbt run -s customers` under cProfile, medians of {args.rounds} rounds"
    print_shares(title, "project", "catalogs package", figures)


if __name__ == "__main__":
    main()
