"""What a small project's statements cost on raw PySpark, and two things every statement pays
through the adapter's catalogs that a plain session may not (issue 62's design input).

- `--compare explain`: Spark posts each SQL execution's physical plan as text
  (`QueryExecution.explainString`, in the mode `spark.sql.ui.explainMode`: `formatted` by
  default) whether or not a UI runs; a flight recording of a test engine found it 4% of the
  JVM's samples (docs/tests.md). Sides: `formatted` against `simple`.
- `--compare cache`: every catalog the adapter mounts has Iceberg's table cache off
  (`cache-enabled=false`: a run sees another process's commit at once), so each statement loads
  each table it names again. Sides: one hadoop catalog with the cache (Iceberg's default)
  against the same warehouse through a second catalog without it.

One process (harness.raw_spark_conf on `local[2]`: an Iceberg hadoop catalog in a temporary
folder); each round runs the statements below on each side, the order alternating, after
untimed warm-up rounds:

- `seed`: CREATE TABLE AS over 15 VALUES rows (a seed's one statement);
- `partitioned`: CREATE TABLE ... PARTITIONED BY (months(day), bucket(4, id)) AS a join of the
  seed with an aggregate of it (the sample's incremental `orders` on its first build);
- `not_null`, `unique`: dbt's generic tests' queries over it;
- `merge`: MERGE INTO it of 15 rows (an incremental run);
- `drop`: DROP TABLE of the partitioned table (the seed's table is dropped after, untimed).

Printed: each statement's median seconds per side and their ratio, and the rounds' totals
(min / median). The tests' counts must agree between the sides (a difference exits 1).

    .venv/bin/python bench/tiny_statements.py --rounds 15 [--compare cache]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import raw_spark_conf  # noqa: E402

# What each comparison sets per side: (side, catalog, plan-description mode). `raw_uncached` is
# the same warehouse as `raw` with Iceberg's table cache off, as every catalog the adapter
# mounts has it (a run sees another process's commit at once): each statement loads its tables
# again.
COMPARISONS = {
    "explain": (("formatted", "raw", "formatted"), ("simple", "raw", "simple")),
    "cache": (("cached", "raw", "formatted"), ("uncached", "raw_uncached", "formatted")),
}
ROWS = ", ".join(
    f"({i}, {i % 4}, date'2026-0{1 + i % 3}-1{i % 9}', {i * 7 % 11})" for i in range(1, 16)
)
STATEMENTS = (
    ("seed", "create table {c}.b.seed_{r} as select * from values {rows} as t(id, c, day, v)"),
    (
        "partitioned",
        "create table {c}.b.part_{r} partitioned by (months(day), bucket(4, id)) as "
        "with agg as (select c, sum(v) as total, count(*) as n from {c}.b.seed_{r} group by c) "
        "select s.id, s.c, s.day, coalesce(a.total, 0) as total, coalesce(a.n, 0) as n "
        "from {c}.b.seed_{r} s left join agg a on a.c = s.c",
    ),
    ("not_null", "select count(*) from (select id from {c}.b.part_{r} where id is null) t"),
    (
        "unique",
        "select count(*) from (select id from {c}.b.part_{r} where id is not null "
        "group by id having count(*) > 1) t",
    ),
    (
        "merge",
        "merge into {c}.b.part_{r} t using (select id, c, day, v * 2 as total, 1 as n "
        "from {c}.b.seed_{r}) s on t.id = s.id when matched then update set * "
        "when not matched then insert *",
    ),
    ("drop", "drop table {c}.b.part_{r}"),
)


# The statements whose rows are compared between the sides (the rest return none).
QUERIES = ("not_null", "unique")


def one_round(spark, catalog: str, mode: str, tag: str) -> tuple[dict[str, float], list]:
    """Each statement's seconds through `catalog` in plan-description `mode`, and the tests'
    counts."""
    spark.conf.set("spark.sql.ui.explainMode", mode)
    seconds: dict[str, float] = {}
    counts = []
    for name, template in STATEMENTS:
        began = time.monotonic()
        rows = spark.sql(template.format(c=catalog, r=tag, rows=ROWS)).collect()
        seconds[name] = time.monotonic() - began
        if name in QUERIES:
            counts.append(rows[0][0])
    spark.sql(f"drop table {catalog}.b.seed_{tag}")
    return seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds per side")
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="explain")
    args = parser.parse_args()
    sides = COMPARISONS[args.compare]
    names = [side for side, _, _ in sides]
    from pyspark.sql import SparkSession

    warehouse = Path(tempfile.mkdtemp(prefix="tiny-statements-"))
    conf = {
        **raw_spark_conf(warehouse),
        "spark.master": "local[2]",
        "spark.sql.catalog.raw_uncached": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.raw_uncached.type": "hadoop",
        "spark.sql.catalog.raw_uncached.warehouse": str(warehouse),
        "spark.sql.catalog.raw_uncached.cache-enabled": "false",
    }
    spark = SparkSession.builder.config(map=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    times: dict[str, dict[str, list[float]]] = {m: {n: [] for n, _ in STATEMENTS} for m in names}
    results: dict[str, list] = {m: [] for m in names}
    try:
        spark.sql("create namespace raw.b")
        for n in range(args.warmup):
            for side, catalog, mode in sides:
                one_round(spark, catalog, mode, f"w{n}_{side}")
        for n in range(args.rounds):
            for side, catalog, mode in sides if n % 2 == 0 else sides[::-1]:
                seconds, returned = one_round(spark, catalog, mode, f"r{n}_{side}")
                results[side].append(returned)
                for name, value in seconds.items():
                    times[side][name].append(value)
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
    first, second = names
    print(f"{'statement':<12} " + " ".join(f"{m:>10}" for m in names) + f"   {second}/{first}")
    for name, _ in STATEMENTS:
        medians = [statistics.median(times[m][name]) for m in names]
        cells = " ".join(f"{v:10.3f}" for v in medians)
        print(f"{name:<12} {cells}   {medians[1] / medians[0]:.3f}x")
    totals = {m: [sum(r) for r in zip(*times[m].values(), strict=True)] for m in names}
    for m in names:
        low, middle = min(totals[m]), statistics.median(totals[m])
        print(f"round total {m:<10} min {low:.3f} s, median {middle:.3f} s")
    ratio = statistics.median(totals[second]) / statistics.median(totals[first])
    print(f"round total {second}/{first} (medians): {ratio:.3f}x over {args.rounds} rounds")
    if results[first] != results[second]:
        sys.exit("the two sides' query results differ")


if __name__ == "__main__":
    main()
