"""TPC-DS as a dbt project with native execution (`engine: {native: comet}`) against the same
project on Spark's JVM: times, and every query's rows compared.

The data and the 99 queries come from DuckDB's `tpcds` extension (PyPI `duckdb-extension-tpcds`,
`pip install -e .[bench]`): `CALL dsdgen(sf=...)` once per scale factor into the work folder, each
table copied to Parquet (not timed), and DuckDB's row count of each query's answer kept beside it.
The project is bench/tpch.py's, for 24 tables: a load model per table and a table model per
query. The queries are DuckDB's text with one mechanical change where Spark needs it (SPARK_DIALECT
below; the queries it touched are printed). Each round runs `dbt run` cold, in a fresh process,
once per side, sides alternating. A model that fails does not stop the run (dbt goes on with the
others): the failures of each side are listed. After the last round every query table's rows are
compared between the sides (bench/tpch_native.py's `table_rows`: its Parquet files read with
DuckDB, sorted, doubles to 6 places) and their count with DuckDB's answer. The issue's goal:
native <= 0.7x the JVM side at SF1.

    .venv/bin/python bench/tpcds_native.py --sf 1 --rounds 1
    .venv/bin/python bench/tpcds_native.py --sf 0.1 --rounds 1 --fallbacks
"""

from __future__ import annotations

import json
import re
import shutil
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
    write_profiles,
)
from tpch import duckdb_with, node_times, write_project  # noqa: E402
from tpch_native import table_rows  # noqa: E402

TABLES = [
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer",
    "customer_address", "customer_demographics", "date_dim", "household_demographics",
    "income_band", "inventory", "item", "promotion", "reason", "ship_mode", "store",
    "store_returns", "store_sales", "time_dim", "warehouse", "web_page", "web_returns",
    "web_sales", "web_site",
]  # fmt: skip
SIDES = ("native", "jvm")
# DuckDB's text is standard SQL; Spark reads a double-quoted name as a string literal, so
# `AS "order count"` becomes `AS `order count``. Nothing else is changed.
SPARK_DIALECT = [(re.compile(r'"([^"\n]+)"'), r"`\1`")]


def generate(data: Path, sf: float) -> tuple[dict[int, str], dict[int, int]]:
    """Parquet files for the 24 tables (once per scale factor), the 99 queries, and DuckDB's row
    count for each query's answer (kept in the data folder: 99 queries take a while)."""
    duck = duckdb_with("tpcds")
    marker = data / "complete"
    if not marker.exists():
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        duck.execute(f"call dsdgen(sf={sf})")
        for table in TABLES:
            duck.execute(f"copy {table} to '{data / table}.parquet' (format parquet)")
        queries = dict(duck.execute("select query_nr, query from tpcds_queries()").fetchall())
        counts = {n: len(duck.execute(q).fetchall()) for n, q in queries.items()}
        (data / "counts.json").write_text(json.dumps(counts))
        marker.write_text(str(sf))
    queries = dict(duck.execute("select query_nr, query from tpcds_queries()").fetchall())
    counts = {int(n): c for n, c in json.loads((data / "counts.json").read_text()).items()}
    return queries, counts


def for_spark(queries: dict[int, str]) -> tuple[dict[int, str], list[int]]:
    """The queries in Spark's dialect, and the numbers of those that needed a change."""
    adapted, changed = {}, []
    for number, query in queries.items():
        text = query
        for pattern, replacement in SPARK_DIALECT:
            text = pattern.sub(replacement, text)
        adapted[number] = text
        if text != query:
            changed.append(number)
    return adapted, changed


def failures(project: Path) -> dict[str, str]:
    """{model: first line of its error} for the models of the project's last run that failed."""
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    return {
        r["unique_id"].split(".")[-1]: (r.get("message") or "").strip().splitlines()[0][:160]
        for r in results
        if r["status"] != "success"
    }


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=1)
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default %(default)s)")
    parser.add_argument(
        "--threads", type=int, default=2, help="dbt threads, both sides (default %(default)s)"
    )
    parser.add_argument(
        "--fallbacks", action="store_true", help="after the rounds, explain each query natively"
    )
    args = parser.parse_args()
    work: Path = args.work / "tpcds_native"
    data = args.work / "tpcds" / f"data-sf{args.sf:g}"
    queries, expected = generate(data, args.sf)
    queries, changed = for_spark(queries)
    print(f"queries adapted for Spark (double-quoted names): {changed}", file=sys.stderr)
    series = {"native": Series("native (Comet)"), "jvm": Series("JVM")}

    def run(side: str, round_no: int) -> Sample:
        project = write_project(work / side, data, queries, False, TABLES, "tpcds")
        target = ours_target("tpcds", threads=args.threads)
        if side == "native":
            target["engine"] = {"native": "comet"}
        write_profiles(project, "tpcds", target)
        sample = run_timed(
            dbt_command("run", project=project),
            project,
            env=cold_env(),
            log=work / f"{side}-{round_no}.log",
        )
        # A failed model makes `dbt run` exit 1 but the run is whole: its time counts, and the
        # failures are listed below (the same models on both sides, or the difference shows).
        if not sample.ok and (project / "target" / "run_results.json").exists():
            failed = failures(project)
            return Sample(sample.seconds, sample.peak_rss_mb, True, f"{len(failed)} failed")
        return sample

    alternate(args.rounds, [(series[side], lambda r, s=side: run(s, r)) for side in SIDES])
    report(
        f"TPC-DS SF{args.sf:g} as a dbt project: 24 loads + 99 query models, `dbt run`, cold, "
        "native execution against the JVM",
        [(f"TPC-DS SF{args.sf:g} dbt run (123 models)", *series.values(), "<=0.70x")],
    )
    times = {side: node_times(work / side, TABLES) for side in SIDES}
    for group in ("load", "queries"):
        native_s, jvm_s = (
            sum(t for (g, _), t in times[side].items() if g == group) for side in SIDES
        )
        print(f"  {group:8} native {native_s:7.1f}s  JVM {jvm_s:7.1f}s  {native_s / jvm_s:.2f}x")
    for side in SIDES:
        failed = failures(work / side)
        print(f"\n{side}: {len(failed)} models failed" + "".join(
            f"\n  {name}: {message}" for name, message in sorted(failed.items())
        ))  # fmt: skip
    print("\nrows per query table (last round), native against the JVM:")
    warehouses = {side: work / side / "lakehouse_warehouse" for side in SIDES}
    equal, problems = 0, []
    for number, want in sorted(expected.items()):
        name = f"q{number:02d}"
        native_rows, jvm_rows = (table_rows(warehouses[s], name, "tpcds") for s in SIDES)
        if native_rows is None or jvm_rows is None:
            problems.append(f"{name}: not built ({'native' if native_rows is None else 'JVM'})")
        elif native_rows != jvm_rows:
            only = sorted(set(native_rows) ^ set(jvm_rows), key=repr)[:2]
            problems.append(
                f"{name}: rows differ ({len(native_rows)} native, {len(jvm_rows)} JVM; e.g. {only})"
            )
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
