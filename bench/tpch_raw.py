"""The 22 TPC-H queries on raw PySpark, without dbt: plain Spark against the same session with
Comet, on the same Iceberg tables; times per query and in total, rows compared.

The data and queries are bench/tpch.py's (DuckDB's tpch extension). Once per scale factor, untimed,
a plain PySpark process loads the 8 Parquet files into Iceberg tables of a hadoop catalog
(`raw.tpch.*`, harness.raw_spark_conf). Each round then runs one fresh Python process per side,
sides alternating: it opens a plain PySpark session on that catalog (no dbt, no adapter code in
the process) and collects each of the 22 queries in turn, timing each. The Comet side adds
exactly the adapter's launch settings for `engine: {native: comet}` (engine/native.comet_conf,
the cached Comet 1.2.0 jar), computed here in the parent. Figures: the process's wall time
(session start included) and the 22 queries' own times, medians over --rounds. The last round's
rows are compared between the sides, sorted, doubles to 6 places. The issue's goal: native <=
0.6x raw plain Spark.

    .venv/bin/python bench/tpch_raw.py --sf 1 --rounds 3
    .venv/bin/python bench/tpch_raw.py --sf 0.01 --rounds 1     # does it run at all
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    raw_spark_conf,
    report,
    run_timed,
)
from tpch import _TABLE_REF, TABLES, generate  # noqa: E402

SIDES = ("comet", "plain")

CHILD = '''"""bench/tpch_raw.py's worker: one plain PySpark session, the load or the 22 queries."""
import json
import sys
import time

from pyspark.sql import SparkSession

config = json.loads(open(sys.argv[1]).read())
builder = SparkSession.builder.appName("tpch-raw")
for key, value in config["conf"].items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
if config.get("load"):
    spark.sql("create namespace if not exists raw.tpch")
    for table, path in config["load"].items():
        spark.sql(f"create or replace table raw.tpch.{table} using iceberg "
                  f"as select * from parquet.`{path}`")
    sys.exit(0)


def plain(value):
    # Doubles to 6 places (the last digits depend on the order of a sum); the rest as printed.
    return round(value, 6) if isinstance(value, float) else str(value)


times, rows = {}, {}
for name, query in config["queries"].items():
    started = time.perf_counter()
    found = spark.sql(query).collect()
    times[name] = time.perf_counter() - started
    rows[name] = sorted(json.dumps([plain(v) for v in row]) for row in found)
json.dump({"times": times, "rows": rows}, open(config["out"], "w"))
spark.stop()
'''


def comet_settings(conf: dict[str, str]) -> dict[str, str]:
    """The adapter's own Comet launch settings over `conf`, with the jar it caches."""
    from dbt.adapters.lakehouse.engine.jars import COMET_JARS
    from dbt.adapters.lakehouse.engine.native import comet_conf

    jar = COMET_JARS.locate()
    if jar is None:
        raise SystemExit("no Comet jar cached: run `dbt-lakehouse install` on the 4.1 line")
    return comet_conf(conf, jar[0], conf["spark.master"])


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default %(default)s)")
    args = parser.parse_args()
    work: Path = args.work / "tpch_raw"
    work.mkdir(parents=True, exist_ok=True)
    data = args.work / "tpch" / f"data-sf{args.sf:g}"  # shared with bench/tpch.py
    queries, expected = generate(data, args.sf)
    warehouse = work / f"warehouse-sf{args.sf:g}"
    conf = raw_spark_conf(warehouse)
    script = work / "child.py"
    script.write_text(CHILD)
    if not (warehouse / "complete").exists():
        config = work / "load.json"
        load = {t: str(data / f"{t}.parquet") for t in TABLES}
        config.write_text(json.dumps({"conf": conf, "load": load}))
        warehouse.mkdir(parents=True, exist_ok=True)  # a hadoop catalog lists its folder
        loaded = run_timed([sys.executable, str(script), str(config)], work, log=work / "load.log")
        if not loaded.ok:
            raise SystemExit(f"loading the tables failed: {loaded.note}, see {work / 'load.log'}")
        (warehouse / "complete").write_text(f"loaded in {loaded.seconds:.0f} s")
    sql = {
        f"q{n:02d}": _TABLE_REF.sub(lambda m: f"{m[1]}{m[2]}raw.tpch.{m[3].lower()}", q)
        .strip()
        .rstrip(";")
        for n, q in queries.items()
    }
    confs = {"plain": conf, "comet": comet_settings(conf)}
    series = {"comet": Series("raw + Comet"), "plain": Series("raw plain Spark")}
    inner = {side: Series(side) for side in SIDES}
    per_query: dict[str, dict[str, list[float]]] = {side: {q: [] for q in sql} for side in SIDES}
    rows: dict[str, dict[str, list[str]]] = {}

    def run(side: str, round_no: int) -> Sample:
        out = work / f"{side}-{round_no}.json"
        config = work / f"{side}.json"
        config.write_text(json.dumps({"conf": confs[side], "queries": sql, "out": str(out)}))
        sample = run_timed(
            [sys.executable, str(script), str(config)], work, log=work / f"{side}-{round_no}.log"
        )
        if sample.ok:
            found = json.loads(out.read_text())
            for name, seconds in found["times"].items():
                per_query[side][name].append(seconds)
            total = sum(found["times"].values())
            inner[side].samples.append(Sample(total, sample.peak_rss_mb, True))
            rows[side] = found["rows"]
        return sample

    alternate(args.rounds, [(series[side], lambda r, s=side: run(s, r)) for side in SIDES])
    report(
        f"TPC-H SF{args.sf:g}, the 22 queries collected on raw PySpark (no dbt), one fresh "
        "process per side: Comet (the adapter's settings) against plain Spark",
        [
            ("process wall (session start + 22)", series["comet"], series["plain"], "<=0.60x"),
            ("the 22 queries' own time", inner["comet"], inner["plain"], "<=0.60x"),
        ],
    )
    print(f"\nper query, median of {args.rounds} (s): plain, Comet, ratio")
    for name in sql:
        plain_s, comet_s = (
            statistics.median(per_query[side][name]) if per_query[side][name] else None
            for side in ("plain", "comet")
        )
        if plain_s is None or comet_s is None:
            print(f"  {name}: not run on both sides")
            continue
        print(f"  {name}: {plain_s:6.2f} {comet_s:6.2f} {comet_s / plain_s:5.2f}x")
    if len(rows) < 2:
        print("\nrows not compared: a side did not finish")
        return
    equal, problems = 0, []
    for number, want in sorted(expected.items()):
        name = f"q{number:02d}"
        comet_rows, plain_rows = rows["comet"][name], rows["plain"][name]
        if comet_rows != plain_rows:
            only = sorted(set(comet_rows) ^ set(plain_rows))[:2]
            problems.append(
                f"{name}: rows differ ({len(comet_rows)} Comet, {len(plain_rows)} plain; "
                f"e.g. {only})"
            )
        elif len(plain_rows) != want:
            problems.append(f"{name}: {len(plain_rows)} rows on both sides, DuckDB has {want}")
        else:
            equal += 1
    print(
        f"\nrows (last round), Comet against plain: {equal}/{len(expected)} equal row for row"
        + "".join(f"\n  {p}" for p in problems)
    )


if __name__ == "__main__":
    main()
