"""A MERGE into a small copy-on-write Iceberg table with Spark's runtime group filter and without
it: a design input (the adapter keeps the filter: without it a MERGE with nothing to change
rewrites every file; bench/RESULTS.md).

Before rewriting the target's files, a copy-on-write MERGE runs its join once more as a job of
its own to find the files holding a matched row (`spark.sql.optimizer.runtime.
rowLevelOperationGroupFilter.enabled`, on by default), so untouched files are kept. Without it
the whole table is rewritten. This measures where one beats the other.

One process (harness.raw_spark_conf, `local[*]`: an Iceberg hadoop catalog in a temporary
folder). For each table size (--rows: rows of an id and a SHA-256 hex string, which compresses
poorly: a size's worst case), each round copies the table afresh (CREATE TABLE AS, untimed) and
times one MERGE of 40 source rows (20 matching an id, 20 new), with the filter on and off, the
order alternating, after --warm-up untimed rounds. The merged rows must agree between the sides
(a difference exits 1).

Printed per size: the table's bytes, each side's median seconds, off / on.

    .venv/bin/python bench/merge_group_filter.py --rounds 5
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

GROUP_FILTER = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"
SIDES = (("on", "true"), ("off", "false"))
SOURCE = (
    "select id, 'matched' as payload from range(0, 20) "
    "union all select id, 'new' from range(-20, 0)"
)
MERGE = (
    "merge into raw.b.target t using source s on s.id = t.id "
    "when matched then update set payload = s.payload when not matched then insert *"
)


def one_merge(spark, value: str) -> tuple[float, list]:
    """Seconds of one MERGE with the filter set to `value`, and the rows it left matched."""
    spark.conf.set(GROUP_FILTER, value)
    spark.sql("create or replace table raw.b.target using iceberg as select * from raw.b.base")
    started = time.perf_counter()
    spark.sql(MERGE)
    seconds = time.perf_counter() - started
    rows = spark.sql("select * from raw.b.target where id < 20 order by id").collect()
    return seconds, [tuple(r) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm-up", type=int, default=2, help="untimed rounds per size")
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[20_000, 100_000, 400_000, 1_600_000]
    )
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    warehouse = Path(tempfile.mkdtemp(prefix="merge-group-filter-"))
    conf = {**raw_spark_conf(warehouse), "spark.master": "local[*]"}
    spark = SparkSession.builder.config(map=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    differ = False
    print(f"{'rows':>10} {'bytes':>12} {'on s':>8} {'off s':>8}   off/on")
    try:
        spark.sql("create namespace raw.b")
        spark.sql(f"create or replace temporary view source as {SOURCE}")
        for rows in args.rows:
            spark.sql(
                "create or replace table raw.b.base using iceberg as "
                f"select id, sha2(cast(id as string), 256) as payload from range({rows})"
            )
            size = spark.sql(
                "select summary['total-files-size'] from raw.b.base.snapshots"
            ).collect()[-1][0]
            times: dict[str, list[float]] = {name: [] for name, _ in SIDES}
            merged: dict[str, list] = {}
            for round_no in range(args.warm_up + args.rounds):
                for name, value in SIDES if round_no % 2 == 0 else SIDES[::-1]:
                    seconds, merged[name] = one_merge(spark, value)
                    if round_no >= args.warm_up:
                        times[name].append(seconds)
            differ = differ or merged["on"] != merged["off"]
            on, off = (statistics.median(times[name]) for name, _ in SIDES)
            print(f"{rows:>10} {int(size):>12} {on:8.3f} {off:8.3f}   {off / on:.2f}x", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
    if differ:
        sys.exit("the merged rows differ between the sides")


if __name__ == "__main__":
    main()
