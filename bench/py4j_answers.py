"""What a py4j answer longer than 8 KiB costs with Nagle's algorithm on the JVM's socket (py4j's
and PySpark's default) against TCP_NODELAY (engine/py4j_nodelay.py sets it on every connection
of the adapter's sessions).

py4j's Java side writes an answer through an 8 KiB buffer: a longer answer leaves in two writes
or more, and with Nagle on, the later ones wait for the ACK of the first, which the Python
side's kernel delays (40 ms on Linux). The adapter reads such answers on every reuse decision
(reuse/inputs.py: the analysed plan's JSON) and for every input table of one (mv/metadata.py:
the table's metadata JSON, which grows with each commit the table keeps).

One process, one raw PySpark session (harness.raw_spark_conf, `local[2]`, an Iceberg hadoop
catalog in a temporary folder), one py4j connection; the sides are its two socket settings,
set on both ends (`nagle`: off, as py4j leaves them; `nodelay`: on), alternating within each
round. Answers timed, each --calls times a side a round:

- `text N KiB`: a Java string of N KiB (commons-lang3's `StringUtils.repeat`);
- `plan json`: the analysed plan of a `unique` data test over a view over an Iceberg table, as
  a reuse decision reads it (`toJSON`);
- `metadata after C commits`: that table's metadata JSON (`TableMetadataParser.toJson`) after C
  appends, as the metadata reader reads each input's.

Printed: each answer's size, its median milliseconds per side and their ratio (medians of the
rounds' medians).

    .venv/bin/python bench/py4j_answers.py --rounds 3
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import raw_spark_conf  # noqa: E402

from dbt.adapters.lakehouse.engine.py4j_nodelay import serving_connection  # noqa: E402

TEXT_KIB = (4, 16, 64, 256)
COMMITS = (1, 30, 150)
TEST_SQL = (
    "select count(*) as failures, count(*) != 0 as should_warn, count(*) != 0 as should_error "
    "from (select customer_id as unique_field, count(*) as n_records from stg "
    "where customer_id is not null group by customer_id having count(*) > 1) dbt_internal_test"
)


def set_nodelay(spark: Any, on: bool) -> None:
    """Both ends of this thread's py4j connection."""
    jvm = spark.sparkContext._jvm
    serving_connection(jvm, jvm.java.lang.Thread.currentThread()).getSocket().setTcpNoDelay(on)
    own = spark.sparkContext._gateway._gateway_client.get_thread_connection().socket
    own.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if on else 0)


def answers(spark: Any, metadata_of: dict[int, Any]) -> dict[str, Callable[[], str]]:
    jvm = spark.sparkContext._jvm
    repeat = jvm.org.apache.commons.lang3.StringUtils.repeat  # commons-lang3 ships with Spark
    plan = spark.sql(TEST_SQL)._jdf.queryExecution().analyzed()
    to_json = jvm.org.apache.iceberg.TableMetadataParser.toJson
    found: dict[str, Callable[[], str]] = {
        f"text {k} KiB": (lambda k=k: repeat("x", k * 1024)) for k in TEXT_KIB
    }
    found["plan json (a data test's)"] = plan.toJSON
    for commits, metadata in metadata_of.items():
        found[f"metadata after {commits} commits"] = lambda m=metadata: to_json(m)
    return found


def table_metadata(spark: Any) -> dict[int, Any]:
    """The table's metadata (Java) after each count of COMMITS appends."""
    jvm = spark.sparkContext._jvm
    spark.sql("create namespace if not exists raw.b")
    spark.sql("create table raw.b.customers (customer_id int, name string) using iceberg")
    spark.sql("create view stg as select customer_id, name from raw.b.customers")
    util = jvm.org.apache.iceberg.spark.Spark3Util
    found, done = {}, 0
    for commits in COMMITS:
        for i in range(done, commits):
            spark.sql(f"insert into raw.b.customers values ({i}, 'n{i}')")
        done = commits
        table = util.loadIcebergTable(spark._jsparkSession, "raw.b.customers")
        found[commits] = table.operations().current()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=9, help="calls a side a round")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    folder = Path(tempfile.mkdtemp(prefix="py4j-answers-"))
    conf = raw_spark_conf(folder / "warehouse")
    spark = SparkSession.builder.config(map=conf).master("local[2]").getOrCreate()
    try:
        timed = answers(spark, table_metadata(spark))
        sizes = {name: len(answer()) for name, answer in timed.items()}
        medians: dict[tuple[str, bool], list[float]] = {}
        for round_no in range(args.rounds + 1):  # round 0: warm-up, untimed
            for on in (False, True) if round_no % 2 else (True, False):
                set_nodelay(spark, on)
                for name, answer in timed.items():
                    took = []
                    for _ in range(args.calls):
                        started = time.perf_counter()
                        answer()
                        took.append(time.perf_counter() - started)
                    if round_no:
                        medians.setdefault((name, on), []).append(statistics.median(took))
        print(f"{'answer':34} {'size':>9} {'nagle ms':>9} {'nodelay ms':>11} {'ratio':>7}")
        for name in timed:
            slow = statistics.median(medians[(name, False)]) * 1000
            fast = statistics.median(medians[(name, True)]) * 1000
            size = f"{sizes[name] / 1024:.1f} KiB"
            print(f"{name:34} {size:>9} {slow:9.2f} {fast:11.2f} {fast / slow:6.3f}x")
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
