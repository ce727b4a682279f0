"""What a reuse decision costs under Spark Connect (issue 61): the adapter's probe against the
former one, its inputs' states read from the EXPLAIN's scans against a metadata statement
after it, a statement's rows fetched in one round trip against `spark.sql`, `schema`,
`collect`, the probe's text asked by AnalyzePlan against the EXPLAIN statement, and a view's
columns in one request.

A decision under Connect is an `EXPLAIN EXTENDED` of the query wrapped as a CTE read twice
(reuse/connect_inputs.py `probe`), whose Iceberg scans give each input's state, and a read of
the node's own table's metadata when it has one.
Each change is measured against what it replaced, in one run, sides alternating:

0. the probe whose second read is `where false` (the optimizer decides on inlining before it
   prunes that read: the query is planned once) against the former probe, whose two reads
   were both planned;
1. the inputs' snapshots and schema ids read from the `EXPLAIN`'s Iceberg scans
   (`inputs_and_metadata`: no statement more) against the `EXPLAIN` then the statement reading
   their metadata tables (what the decision did before 2026-12-07 afternoon);
2. a data test's count query, fetched as the adapter's cursor now fetches a read whose rows
   dbt reads straight after (engine/runtime.py `fetched`: the statement sent as the plan to
   run) against the former path (`spark.sql`, which the server analyses as a command, then
   `schema` for dbt's column names, then `collect`, which asks for a setting first);
3. the same for one table's metadata (`refs`), the reads the decision itself makes;
4. the probe's text asked as an analysis of its plan (`AnalyzePlan`, engine/runtime.py
   `explain_extended`, since 2026-12-07 evening) against the `EXPLAIN EXTENDED` statement sent
   as a plan to run;
5. a view's columns, as its decision reads them: the query as the plan of a schema request
   (`query_frame`) against `spark.sql` (the query analysed as a command) then `schema`.

The query joins two views over two Iceberg tables, on `dbt-lakehouse serve`'s Connect endpoint
(an embedded lakehouse of this run's own). Printed per case: wall time (the decision's wait)
and the server's CPU time (every `java` process's, read from /proc: run it with nothing else
on the machine), medians over the rounds, and their ratios.

    .venv/bin/python bench/connect_decision_cost.py --rounds 15
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import served_lakehouse, server_cpu_seconds  # noqa: E402

from dbt.adapters.lakehouse.engine import runtime  # noqa: E402
from dbt.adapters.lakehouse.iceberg.table_name import TableName  # noqa: E402
from dbt.adapters.lakehouse.mv.metadata import SqlReader  # noqa: E402
from dbt.adapters.lakehouse.reuse.connect_inputs import (  # noqa: E402
    connect_inputs,
    inputs_and_metadata,
    probe,
)

TOKEN = "bench-connect-decision-token"  # noqa: S105 - this run's own server
CATALOG = "lakehouse"
SETUP = (
    f"create namespace if not exists {CATALOG}.b",
    f"create or replace table {CATALOG}.b.orders using iceberg as "
    "select id as order_id, id % 100 as customer_id, cast(id % 7 as string) as status "
    "from range(20000)",
    f"create or replace table {CATALOG}.b.payments using iceberg as "
    "select id as payment_id, id % 20000 as order_id, id * 1.5 as amount from range(40000)",
    f"create or replace view {CATALOG}.b.stg_orders as select * from {CATALOG}.b.orders",
    f"create or replace view {CATALOG}.b.stg_payments as select * from {CATALOG}.b.payments",
)
QUERY = (
    f"select o.order_id, o.status, sum(p.amount) as amount from {CATALOG}.b.stg_orders o "
    f"join {CATALOG}.b.stg_payments p on o.order_id = p.order_id group by o.order_id, o.status"
)
TABLES = [TableName(CATALOG, "b", "orders"), TableName(CATALOG, "b", "payments")]
# dbt's not_null test, as its test materialization wraps it.
TEST_QUERY = (
    "select count(*) as failures, count(*) != 0 as should_warn, count(*) != 0 as should_error "
    f"from (select order_id from {CATALOG}.b.stg_orders where order_id is null) dbt_internal_test"
)
REFS = f"select name, snapshot_id from {CATALOG}.b.orders.refs"


def former_probe(query: str) -> str:
    """The probe before 2026-12-07: both CTE reads planned."""
    return (
        f"with lakehouse_probe as (select *, 1 as lakehouse_marker from ({query}) q) "
        "select * from lakehouse_probe union all select * from lakehouse_probe"
    )


def measured(action: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, server CPU seconds) of one call."""
    cpu, began = server_cpu_seconds(), time.perf_counter()
    action()
    return time.perf_counter() - began, server_cpu_seconds() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    work = Path(tempfile.mkdtemp(prefix="lh-decision-"))
    try:
        with served_lakehouse(work, TOKEN, work / "warehouse") as (port, _):
            url = f"sc://localhost:{port}/;token={TOKEN};session_id={uuid.uuid4()}"
            spark = SparkSession.builder.remote(url).create()
            try:
                return measure(spark, args.rounds)
            finally:
                spark.stop()  # its channel's threads would keep this process from exiting
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(spark, rounds: int) -> int:  # noqa: ANN001 - a Spark Connect session
    for statement in SETUP:
        spark.sql(statement)

    def rows(sql: str) -> list[tuple]:  # as the adapter reads: both sides of case 1 alike
        return runtime.rows(spark, sql)

    def explain(text: str) -> None:
        spark.sql("explain extended " + text).collect()

    def fetched_at_once(sql: str) -> None:
        _, schema = runtime.fetched(spark, sql)
        assert schema.fields

    def fetched_before(sql: str) -> None:
        frame = spark.sql(sql)
        assert frame.schema.fields
        frame.collect()

    def after() -> None:
        inputs = connect_inputs(spark, QUERY, [CATALOG])
        SqlReader(spark, rows).prefetch(inputs.tables, [])

    def scanned() -> None:
        inputs = inputs_and_metadata(spark, QUERY, [CATALOG], SqlReader(spark, rows), [])
        assert len(inputs.scanned) == len(TABLES), inputs.scanned  # nothing left to read

    cases = [
        ("probe: planned once / both reads planned",
         lambda: explain(probe(QUERY)), lambda: explain(former_probe(QUERY))),
        ("inputs' states: the EXPLAIN's scans / a metadata read", scanned, after),
        ("a test's query: one round trip / sql+schema+collect",
         lambda: fetched_at_once(TEST_QUERY), lambda: fetched_before(TEST_QUERY)),
        ("a table's refs: one round trip / sql+schema+collect",
         lambda: fetched_at_once(REFS), lambda: fetched_before(REFS)),
        ("probe's text: AnalyzePlan / EXPLAIN statement",
         lambda: runtime.explain_extended(spark, probe(QUERY)), lambda: explain(probe(QUERY))),
        ("a view's columns: one request / sql+schema",
         lambda: runtime.query_frame(spark, QUERY).schema, lambda: spark.sql(QUERY).schema),
    ]  # fmt: skip
    for _, ours, other in cases:  # untimed: the server's JIT, the tables' first loads
        for _ in range(3):
            ours(), other()
    header = f"{'wall ours/other':>20} {'ratio':>7} {'server CPU ours/other':>24} {'ratio':>7}"
    print(f"{'case':54} {header}")
    for name, ours, other in cases:
        samples: dict[str, list[tuple[float, float]]] = {"ours": [], "other": []}
        for n in range(rounds):
            sides = [("ours", ours), ("other", other)]
            for side, action in sides if n % 2 == 0 else reversed(sides):
                samples[side].append(measured(action))
        wall = [statistics.median(s[0] for s in samples[k]) for k in ("ours", "other")]
        cpu = [statistics.median(s[1] for s in samples[k]) for k in ("ours", "other")]
        print(
            f"{name:54} {wall[0] * 1000:8.0f}/{wall[1] * 1000:.0f} ms {wall[0] / wall[1]:6.2f}x "
            f"{cpu[0] * 1000:12.0f}/{cpu[1] * 1000:.0f} ms {cpu[0] / cpu[1]:6.2f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
