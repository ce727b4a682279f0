"""TPC-H as a dbt project with native execution (`engine: {native: comet}`) against the same
project on Spark's JVM: times, and every query's rows compared.

The project, the data and the queries are bench/tpch.py's (DuckDB's tpch extension, `pip install
-e .[bench]`): 8 load models and the 22 queries as table models. Each round runs `dbt run`
cold, in a fresh process, once per side, sides alternating (both in one run, so a shared
machine's load falls on both). After the last round every query table's rows are read from its
Parquet data files with DuckDB (each side's table is new in that round: its data folder holds
exactly its rows) and compared row for row between the sides, doubles to 6 places. The issue's
goal: native <= 0.6x the JVM side.

With --engine warm each side runs on a warm engine of its own (LAKEHOUSE_ENGINE=warm, an engine
home per side), as the embedded lakehouse runs by default: one untimed round first starts both
engines, the timed rounds attach to them, and both are stopped at the end.

With --fallbacks, after the rounds, one `dbt run-operation` on the native side's project (its
tables built by the last round) EXPLAINs each query's compiled SQL (target/compiled) on the native
target, with Comet's extended explain (the reasons it gives for each operator left to Spark), and
prints per query which operators of the physical plan are Comet's and which stay on the JVM
(bench/comet_plans.py).

    .venv/bin/python bench/tpch_native.py --sf 1 --rounds 3 --fallbacks
    .venv/bin/python bench/tpch_native.py --sf 1 --rounds 3 --engine warm
    .venv/bin/python bench/tpch_native.py --sf 0.01 --rounds 1     # does it run at all
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from comet_plans import explain_compiled, print_fallbacks  # noqa: E402
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    cold_env,
    common_args,
    dbt_command,
    ours_target,
    report,
    run_timed,
    stop_engines,
    write_profiles,
)
from tpch import generate, node_times, write_project  # noqa: E402

SIDES = ("native", "jvm")


def table_rows(warehouse: Path, table: str, schema: str = "tpch") -> list[tuple] | None:
    """A table's rows, sorted, doubles rounded to 6 places; None when it was not built."""
    import duckdb

    files = sorted(warehouse.glob(f"{schema}/{table}/data/**/*.parquet"))
    if not files:
        # A table of no rows has metadata and no data file (TPC-DS has 18 such answers at SF0.1).
        return [] if any(warehouse.glob(f"{schema}/{table}/metadata/*.json")) else None
    found = (
        duckdb.connect()
        .execute("select * from read_parquet(?)", [[str(f) for f in files]])
        .fetchall()
    )
    rounded = [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in found]
    return sorted(rounded, key=repr)


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default %(default)s)")
    parser.add_argument(
        "--threads", type=int, default=2, help="dbt threads, both sides (default %(default)s)"
    )
    parser.add_argument(
        "--fallbacks",
        action="store_true",
        help="after the rounds, explain each query on the native side: Comet's operators, "
        "the JVM's, and why",
    )
    parser.add_argument(
        "--engine",
        choices=["cold", "warm"],
        default="cold",
        help="a fresh JVM per run, or a warm engine per side (default %(default)s)",
    )
    args = parser.parse_args()
    work: Path = args.work / "tpch_native"
    data = args.work / "tpch" / f"data-sf{args.sf:g}"  # shared with bench/tpch.py
    queries, expected = generate(data, args.sf)
    series = {"native": Series("native (Comet)"), "jvm": Series("JVM")}

    homes = {side: work / f"engines-{side}" for side in SIDES}
    envs = {
        side: cold_env()
        if args.engine == "cold"
        else {**os.environ, "LAKEHOUSE_ENGINE": "warm", "LAKEHOUSE_ENGINE_HOME": str(homes[side])}
        for side in SIDES
    }
    stop_engines(*homes.values())  # a run stopped half-way may have left some

    def run(side: str, round_no: int) -> Sample:
        project = write_project(work / side, data, queries, peer=False)
        target = ours_target("tpch", threads=args.threads)
        if side == "native":
            target["engine"] = {"native": "comet"}
        write_profiles(project, "tpch", target)
        return run_timed(
            dbt_command("run", project=project),
            project,
            env=envs[side],
            log=work / f"{side}-{round_no}.log",
        )

    try:
        if args.engine == "warm":
            for side in SIDES:  # untimed: starts each side's engine
                started = run(side, -1)
                print(f"  engine start, {side}: {started.seconds:.1f}s", file=sys.stderr)
        alternate(args.rounds, [(series[side], lambda r, s=side: run(s, r)) for side in SIDES])
    finally:
        stop_engines(*homes.values())
    report(
        f"TPC-H SF{args.sf:g} as a dbt project: 8 loads + 22 query models, `dbt run`, "
        f"{args.engine}, native execution against the JVM",
        [(f"TPC-H SF{args.sf:g} dbt run (30 models)", series["native"], series["jvm"], "<=0.60x")],
    )
    times = {side: node_times(work / side) for side in SIDES}
    print("\nquery model times of the last round (target/run_results.json):")
    for key in sorted(k for k in times["jvm"] if k[0] == "queries"):
        native_s, jvm_s = times["native"].get(key), times["jvm"][key]
        shown = f"{native_s:6.1f}s  ratio {native_s / jvm_s:.2f}x" if native_s else "   not built"
        print(f"  {key[1]}: JVM {jvm_s:6.1f}s  native {shown}")
    print("\nrows per query table (last round), native against the JVM:")
    warehouses = {side: work / side / "lakehouse_warehouse" for side in SIDES}
    equal, problems = 0, []
    for number, want in sorted(expected.items()):
        name = f"q{number:02d}"
        native_rows, jvm_rows = (table_rows(warehouses[side], name) for side in SIDES)
        if native_rows is None or jvm_rows is None:
            problems.append(f"{name}: not built ({'native' if native_rows is None else 'JVM'})")
        elif native_rows != jvm_rows:
            problems.append(f"{name}: rows differ ({len(native_rows)} native, {len(jvm_rows)} JVM)")
        elif len(jvm_rows) != want:
            problems.append(f"{name}: {len(jvm_rows)} rows on both sides, DuckDB has {want}")
        else:
            equal += 1
    print(f"  {equal}/{len(expected)} equal row for row" + "".join(f"\n  {p}" for p in problems))

    if args.fallbacks:
        print("\nphysical plans on the native side (EXPLAIN of each query's compiled SQL):")
        print_fallbacks(explain_compiled(work / "native", "queries"))


if __name__ == "__main__":
    main()
