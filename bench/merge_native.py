"""The merge node with native execution (Comet) against the same node on the JVM alone, both
dbt-lakehouse, in one run.

bench/merge.py's model and data (an incremental `merge` of a batch into a --rows table
partitioned by days(event_ts) over 30 days; half the batch updates ids in every partition, half
inserts), on two projects that differ only in `engine: {native: comet}`. Each round builds both
targets again, untimed (the merge changes them), then times the batch's `dbt run --select` on
each side, sides alternating. --engine picks cold processes or one warm engine per side (each
in its own engine home; the untimed builds attach to it too). Two rows: process vs process, and
the node's own execution time (target/run_results.json). The last round's tables are checked
(rows, updated rows) on both sides. No goal in the issue: Iceberg's writes stay on the JVM.

    .venv/bin/python bench/merge_native.py --rounds 3
    .venv/bin/python bench/merge_native.py --rows 200000 --batch 20000 --rounds 1   # quick look
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    report,
    run_timed,
    stop_engines,
)
from merge import check, human, ours_counts, ours_project, run_node  # noqa: E402

SIDES = {"native": "comet", "jvm": None}


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="target rows (%(default)s)")
    parser.add_argument("--batch", type=int, default=1_000_000, help="batch rows (%(default)s)")
    parser.add_argument(
        "--engine", choices=["cold", "warm"], default="warm", help="(default %(default)s)"
    )
    args = parser.parse_args()
    work: Path = args.work / "merge_native"
    model = f"merge_{args.batch}"
    projects = {side: work / side for side in SIDES}
    homes = {side: work / f"engines-{side}" for side in SIDES}
    envs = {
        side: {
            **os.environ,
            "LAKEHOUSE_ENGINE": args.engine,
            "LAKEHOUSE_ENGINE_HOME": str(homes[side]),
        }
        for side in SIDES
    }
    stop_engines(*homes.values())  # a run stopped half-way may have left some
    process = {side: Series(f"{side} (process)") for side in SIDES}
    node = {side: Series(f"{side} (node)") for side in SIDES}

    def run(side: str, round_no: int) -> Sample:
        project = projects[side]
        ours_project(project, args.rows, [args.batch], "copy-on-write", SIDES[side])
        log = work / f"{side}-setup-{round_no}.log"
        built = run_timed(dbt_command("run", project=project), project, env=envs[side], log=log)
        if not built.ok:
            failed = Sample(0.0, 0.0, False, f"setup failed: {built.note}")
            node[side].samples.append(failed)
            return failed
        sample, timed = run_node(project, model, envs[side], work / f"{side}-{round_no}.log")
        node[side].samples.append(timed)
        return sample

    try:
        alternate(args.rounds, [(process[s], lambda r, s=s: run(s, r)) for s in SIDES])
        print(f"\n## checks (last round, target {args.rows} rows)")
        for side in SIDES:
            log = work / f"{side}-check.log"
            found = ours_counts(projects[side], [args.batch], log, envs[side])
            check(side, found, args.rows, [args.batch])
    finally:
        stop_engines(*homes.values())
    case = f"merge {human(args.batch)} into {human(args.rows)}"
    report(
        f"merge node, Comet against the JVM alone, both dbt-lakehouse {args.engine}",
        [
            (f"{case} (process)", process["native"], process["jvm"], "report"),
            (f"{case} (node)", node["native"], node["jvm"], "report"),
        ],
    )


if __name__ == "__main__":
    main()
