"""What a small project's statements cost on raw PySpark, and what the plan description Spark
builds for every SQL execution adds to them (issue 62's design input).

Spark posts each SQL execution's physical plan as text (`QueryExecution.explainString`, in the
mode `spark.sql.ui.explainMode`: `formatted` by default) whether or not a UI runs; a flight
recording of a test engine found it 4% of the JVM's samples (docs/tests.md). This times the
statements of the sample project's nodes on tiny data, in one process (harness.SHARED_SPARK_CONF,
`local[2]`, an Iceberg hadoop catalog in a temporary folder), each round in both modes, the
order alternating, after untimed warm-up rounds:

- `seed`: CREATE TABLE AS over 15 VALUES rows (a seed's one statement);
- `partitioned`: CREATE TABLE ... PARTITIONED BY (months(day), bucket(4, id)) AS a join of the
  seed with an aggregate of it (the sample's incremental `orders` on its first build);
- `not_null`, `unique`: dbt's generic tests' queries over it;
- `merge`: MERGE INTO it of 15 rows (an incremental run);
- `drop`: DROP TABLE of both.

Printed: each statement's median seconds per mode and their ratio, and the rounds' totals
(min / median). The tests' counts must agree between the modes (a difference exits 1).

    .venv/bin/python bench/tiny_statements.py --rounds 15
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
from harness import SHARED_SPARK_CONF, iceberg_jar  # noqa: E402

MODES = ("formatted", "simple")
ROWS = ", ".join(
    f"({i}, {i % 4}, date'2026-0{1 + i % 3}-1{i % 9}', {i * 7 % 11})" for i in range(1, 16)
)
STATEMENTS = (
    ("seed", "create table lh.b.seed_{r} as select * from values {rows} as t(id, c, day, v)"),
    (
        "partitioned",
        "create table lh.b.part_{r} partitioned by (months(day), bucket(4, id)) as "
        "with agg as (select c, sum(v) as total, count(*) as n from lh.b.seed_{r} group by c) "
        "select s.id, s.c, s.day, coalesce(a.total, 0) as total, coalesce(a.n, 0) as n "
        "from lh.b.seed_{r} s left join agg a on a.c = s.c",
    ),
    ("not_null", "select count(*) from (select id from lh.b.part_{r} where id is null) t"),
    (
        "unique",
        "select count(*) from (select id from lh.b.part_{r} where id is not null "
        "group by id having count(*) > 1) t",
    ),
    (
        "merge",
        "merge into lh.b.part_{r} t using (select id, c, day, v * 2 as total, 1 as n "
        "from lh.b.seed_{r}) s on t.id = s.id when matched then update set * "
        "when not matched then insert *",
    ),
    ("drop", "drop table lh.b.part_{r}"),
)


# The statements whose rows are compared between the modes (the rest return none).
QUERIES = ("not_null", "unique")


def one_round(spark, mode: str, tag: str) -> tuple[dict[str, float], list]:
    """Each statement's seconds in `mode`, and the tests' counts."""
    spark.conf.set("spark.sql.ui.explainMode", mode)
    seconds: dict[str, float] = {}
    counts = []
    for name, template in STATEMENTS:
        began = time.monotonic()
        rows = spark.sql(template.format(r=tag, rows=ROWS)).collect()
        seconds[name] = time.monotonic() - began
        if name in QUERIES:
            counts.append(rows[0][0])
    spark.sql(f"drop table lh.b.seed_{tag}")
    return seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds per mode")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    warehouse = Path(tempfile.mkdtemp(prefix="tiny-statements-"))
    conf = {
        **SHARED_SPARK_CONF,
        "spark.master": "local[2]",
        "spark.ui.showConsoleProgress": "false",
        "spark.jars": iceberg_jar(),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lh": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lh.type": "hadoop",
        "spark.sql.catalog.lh.warehouse": str(warehouse),
    }
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    times: dict[str, dict[str, list[float]]] = {m: {n: [] for n, _ in STATEMENTS} for m in MODES}
    results: dict[str, list] = {m: [] for m in MODES}
    try:
        spark.sql("create namespace lh.b")
        for n in range(args.warmup):
            for mode in MODES:
                one_round(spark, mode, f"w{n}_{mode}")
        for n in range(args.rounds):
            for mode in MODES if n % 2 == 0 else MODES[::-1]:
                seconds, returned = one_round(spark, mode, f"r{n}_{mode}")
                results[mode].append(returned)
                for name, value in seconds.items():
                    times[mode][name].append(value)
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
    print(f"{'statement':<12} " + " ".join(f"{m:>10}" for m in MODES) + "   simple/formatted")
    for name, _ in STATEMENTS:
        medians = [statistics.median(times[m][name]) for m in MODES]
        print(
            f"{name:<12} "
            + " ".join(f"{v:10.3f}" for v in medians)
            + f"   {medians[1] / medians[0]:.3f}x"
        )
    totals = {m: [sum(r) for r in zip(*times[m].values(), strict=True)] for m in MODES}
    for m in MODES:
        low, middle = min(totals[m]), statistics.median(totals[m])
        print(f"round total {m:<10} min {low:.3f} s, median {middle:.3f} s")
    ratio = statistics.median(totals["simple"]) / statistics.median(totals["formatted"])
    print(f"round total simple/formatted (medians): {ratio:.3f}x over {args.rounds} rounds")
    if results["formatted"] != results["simple"]:
        sys.exit("the two modes' query results differ")


if __name__ == "__main__":
    main()
