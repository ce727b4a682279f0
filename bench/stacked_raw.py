"""Stacked views on raw PySpark: where a chain of views that reads the level below twice spends
its time, and what bounding the expanded plan saves (issue 62's design input).

The chain of bench/stacked_project.py, its own SQL and seed rows (`rec_00` .. `rec_<depth>`:
each level is the one below UNION ALL the one below joined to a 30-row staging table, so
Spark's inlined plan doubles per level), its refs pointed at this process's tables and views,
built as views in the session catalog over parquet tables, one database per variant, in one
process with harness.SHARED_SPARK_CONF (`local[2]` here, the 2-core machine's cores). At each
level: CREATE VIEW (Spark analyses the expanded query), then `select count(*)` timed as
planning (analysis, optimization, physical plan) and execution; an untimed 3-level chain first
warms the JVM. Variants:

- `plain`: views only, as the adapter builds them today;
- `cache`: every `--every`-th level also `CACHE TABLE` (eager): later plans substitute the
  cached relation after analysis;
- `table`: every `--every`-th level also materialized into a table, which the next level
  reads instead of the view: what a scratch table for the invocation's later nodes would do.

Printed per level: each variant's seconds (view / plan / exec) and its total over `plain`'s;
the counts must agree across variants (a difference exits 1).

    .venv/bin/python bench/stacked_raw.py --depth 9
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stacked_project  # noqa: E402
from harness import SHARED_SPARK_CONF  # noqa: E402

VARIANTS = ("plain", "cache", "table")
REF = re.compile(r"\{\{ ref\('(\w+)'\) \}\}")


def resolved(sql: str, db: str, reads: dict[str, str]) -> str:
    """stacked_project's model SQL with each ref() named in `db`, through `reads` (a level's
    materialized table in place of its view)."""
    return REF.sub(lambda ref: f"{db}.{reads.get(ref[1], ref[1])}", sql)


def create_staging(spark, db: str, n: int) -> None:
    """`stg_sNN`'s columns the chain reads, from stacked_project's rows of seed `sNN`."""
    _, *lines = stacked_project._seed_csv(n).splitlines()
    rows = [tuple(int(x) for x in line.split(",")[:3]) for line in lines]
    spark.createDataFrame(rows, "id int, k int, v int").write.saveAsTable(f"{db}.stg_s{n:02d}")


def timed_count(spark, sql: str) -> tuple[float, float, int]:
    began = time.monotonic()
    frame = spark.sql(sql)
    frame._jdf.queryExecution().executedPlan()  # planning only: no job runs
    planned = time.monotonic() - began
    count = frame.collect()[0][0]
    return planned, time.monotonic() - began - planned, count


def run_variant(spark, variant: str, depth: int, every: int) -> list[tuple[float, ...]]:
    db = f"chain_{variant}"
    spark.sql(f"create database {db}")
    for n in sorted({level % stacked_project.SEEDS for level in range(depth + 1)}):
        create_staging(spark, db, n)
    reads: dict[str, str] = {}
    spark.sql(f"create view {db}.rec_00 as {resolved(stacked_project._rec(0), db, reads)}")
    levels = []
    for level in range(1, depth + 1):
        name = f"rec_{level:02d}"
        began = time.monotonic()
        spark.sql(f"create view {db}.{name} as {resolved(stacked_project._rec(level), db, reads)}")
        view = time.monotonic() - began
        planned, executed, count = timed_count(spark, f"select count(*) from {db}.{name}")
        levels.append((view, planned, executed, count))
        if level % every == 0 and variant == "cache":
            spark.sql(f"cache table {db}.{name}")
        if level % every == 0 and variant == "table":
            spark.sql(f"create table {db}.m_{level:02d} using parquet as select * from {db}.{name}")
            reads[name] = f"m_{level:02d}"
    return levels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=9)
    parser.add_argument("--every", type=int, default=3, help="levels between materializations")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    warehouse = Path(tempfile.mkdtemp(prefix="stacked-raw-"))
    builder = SparkSession.builder.config("spark.sql.warehouse.dir", str(warehouse))
    conf = {
        **SHARED_SPARK_CONF,
        "spark.master": "local[2]",
        "spark.ui.showConsoleProgress": "false",
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        run_variant(spark, "warmup", 3, args.every)  # the JVM's first compiles, untimed
        results = {v: run_variant(spark, v, args.depth, args.every) for v in VARIANTS}
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
    print("level  " + "  ".join(f"{v:>24}" for v in VARIANTS) + "   (view/plan/exec s, x plain)")
    differ = False
    for i in range(args.depth):
        plain_total = sum(results["plain"][i][:3])
        cells = []
        for variant in VARIANTS:
            view, planned, executed, _ = results[variant][i]
            ratio = (view + planned + executed) / plain_total
            cells.append(f"{view:5.2f}/{planned:5.2f}/{executed:6.2f} {ratio:5.2f}x")
        counts = {results[v][i][3] for v in VARIANTS}
        differ |= len(counts) != 1
        print(f"{i + 1:5d}  " + "  ".join(f"{c:>24}" for c in cells) + f"   rows {sorted(counts)}")
    if differ:
        sys.exit("the variants' counts differ")


if __name__ == "__main__":
    main()
