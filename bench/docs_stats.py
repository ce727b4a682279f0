"""Docs catalog stats: `dbt docs generate` on 200 tables in 4 schemas, with the table stats
(iceberg/table_stats.py) and without them.

The project is bench/metadata.py's (one-row table models spread over schemas), built once with
`dbt run`. Each round then runs `dbt docs generate` twice in fresh processes on that same
warehouse: as shipped, and with `LakehouseAdapter.table_stats` patched to return None (the
catalog as it was before stats), alternating. Besides the wall time, the catalog phase alone
is read from the project's logs/dbt.log (from "Building catalog" to "Catalog written"), and
the run with stats times each `table_stats` call (one Iceberg table load and its metadata,
summed over dbt's threads). The run with stats is checked to have them for every table.

    .venv/bin/python bench/docs_stats.py --models 200 --schemas 4 --rounds 3
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    ours_target,
    report,
    run_timed,
    write_profiles,
)
from metadata import PROFILE, SCHEMA, write_project  # noqa: E402

# dbt's CLI in a fresh process like the real `dbt`, with the stats turned off, or timed.
WITHOUT_STATS = """
import sys
from dbt.adapters.lakehouse.impl import LakehouseAdapter
LakehouseAdapter.table_stats = lambda self, relation: None
from dbt.cli.main import cli
sys.argv[0] = "dbt"
cli()
"""
WITH_STATS_TIMED = """
import atexit, statistics, sys, time
from dbt.adapters.lakehouse.impl import LakehouseAdapter
read, spent = LakehouseAdapter.table_stats, []
def timed(self, relation):
    start = time.perf_counter()
    try:
        return read(self, relation)
    finally:
        spent.append(time.perf_counter() - start)
LakehouseAdapter.table_stats = timed
atexit.register(lambda: print(
    f"TABLE_STATS calls={len(spent)} total={sum(spent):.3f} "
    f"median_ms={1000 * statistics.median(spent or [0]):.1f}", file=sys.stderr, flush=True))
from dbt.cli.main import cli
sys.argv[0] = "dbt"
cli()
"""
_STAMP = re.compile(r"(\d\d:\d\d:\d\d\.\d+)")
_STATS_TIME = re.compile(r"TABLE_STATS calls=(\d+) total=([\d.]+) median_ms=([\d.]+)")


def catalog_seconds(log: Path) -> float | None:
    """Seconds from the last "Building catalog" to the "Catalog written" after it."""
    start = end = None
    for line in log.read_text(errors="replace").splitlines():
        stamp = _STAMP.search(line)
        if stamp is None:
            continue
        if "Building catalog" in line:
            start, end = stamp.group(1), None
        elif "Catalog written" in line and start is not None:
            end = stamp.group(1)
    if start is None or end is None:
        return None
    seconds = (
        dt.datetime.strptime(end, "%H:%M:%S.%f") - dt.datetime.strptime(start, "%H:%M:%S.%f")
    ).total_seconds()
    return seconds % 86400  # across midnight


def tables_with_stats(project: Path) -> int:
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    return sum(1 for node in catalog["nodes"].values() if node["stats"]["has_stats"]["value"])


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--models", type=int, default=200, help="models (default %(default)s)")
    parser.add_argument("--schemas", type=int, default=4, help="schemas (default %(default)s)")
    args = parser.parse_args()
    project = write_project(args.work / "docs_stats", args.models, args.schemas, peer=False)
    write_profiles(project, PROFILE, ours_target(SCHEMA))
    built = run_timed(dbt_command("run", project=project), project, log=project / "run.log")
    if not built.ok:
        sys.exit(f"dbt run failed: {built.note}, see {project / 'run.log'}")
    print(f"built {args.models} tables in {built.seconds:.1f}s", file=sys.stderr)

    phases: dict[str, list[float]] = {"with": [], "without": []}
    checked: list[int] = []
    stats_reads: list[str] = []

    def generate(side: str, command: list[str], round_no: int) -> Sample:
        log = project / "logs" / "dbt.log"
        log.unlink(missing_ok=True)
        output = project / f"docs-{side}-{round_no}.log"
        sample = run_timed(command, project, log=output)
        seconds = catalog_seconds(log)
        found = _STATS_TIME.search(output.read_text(errors="replace"))
        if found:
            calls, total, median = found.groups()
            stats_reads.append(f"{calls} reads, {total}s in all, median {median} ms")
        if sample.ok and seconds is not None:
            phases[side].append(seconds)
        if sample.ok and side == "with":
            checked.append(tables_with_stats(project))
        return sample

    with_stats, without_stats = Series("with stats"), Series("without stats")
    plain = dbt_command("docs", "generate", project=project)
    timed = [sys.executable, "-c", WITH_STATS_TIMED, *plain[1:]]
    patched = [sys.executable, "-c", WITHOUT_STATS, *plain[1:]]
    alternate(
        args.rounds,
        [
            (with_stats, lambda n: generate("with", timed, n)),
            (without_stats, lambda n: generate("without", patched, n)),
        ],
    )
    report(
        f"docs catalog stats: `dbt docs generate` of {args.models} tables in "
        f"{args.schemas} schemas, warm warehouse, cold process",
        [("docs generate, with / without stats", with_stats, without_stats, "-")],
    )
    for side, seconds in phases.items():
        if seconds:
            print(
                f"catalog phase {side} stats: min {min(seconds):.2f}s, "
                f"median {sorted(seconds)[len(seconds) // 2]:.2f}s over {len(seconds)} runs"
            )
    print(f"table_stats calls (each run with stats): {'; '.join(stats_reads)}")
    print(f"tables with stats in catalog.json (each run with stats): {checked}")


if __name__ == "__main__":
    main()
