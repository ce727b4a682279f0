"""Whether a Spark Connect client can tell a query that varies from run to run, from what the
server's EXPLAIN says (issue 61's design input: reuse of tables under Spark Connect).

Reuse never keeps a node whose query Spark calls non-deterministic (docs/reuse.md). On a
classic session that is the analysed plan's own `deterministic`, read through py4j; a Connect
client gets no plan, only EXPLAIN's text, which does not mark non-deterministic expressions.
It does show what Spark's optimizer did with them: a CTE referenced twice is inlined unless
its plan is not deterministic (InlineCTE), and one kept is then read through a repartition of
its own (ReplaceCTERefWithRepartition). So the adapter's probe (reuse/connect_inputs.py, which
reuse under Spark Connect decides with) wraps the query as

    with p as (select *, 1 as marker from (<query>) q)
    select * from p union all select * from p where false

(the marker column keeps the CTE's top a projection, which a user's DISTRIBUTE BY cannot
replace; the second read's `where false` is pruned after the optimizer decided on inlining, so
the query is planned once) and looks for a CTE kept in its optimized plan: a repartition
without expressions (a user's DISTRIBUTE BY or hint names its expressions or count), or a CTE
node. One kept, the
probe's or one inside the query, is a non-deterministic query.

Each case runs twice: the probe over a Spark Connect server (`dbt-lakehouse serve` on an
embedded lakehouse of this run's own, its Connect endpoint only), and on a classic session in
this process, where the analysed plan's and its subqueries' `deterministic` is the truth. A
query the probe calls deterministic where Spark does not exits 1 (reuse would keep rows that
differ); the other way round is reuse missed, printed. Printed: each case's two answers and
the probe's time (one EXPLAIN round trip).

    .venv/bin/python bench/connect_determinism.py
"""

from __future__ import annotations

import contextlib
import io
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import served_lakehouse  # noqa: E402

from dbt.adapters.lakehouse.reuse.connect_inputs import KEPT_CTE, probe  # noqa: E402

TOKEN = "bench-connect-determinism-token"  # noqa: S105 - this run's own server
# The session's temporary views the cases read: rows, a parquet path, and two views.
SETUP = (
    "create or replace temporary view t as select id, cast(id as string) s from range(5)",
    "create or replace temporary view vr as select id, rand() r from range(5)",
    "create or replace temporary view vd as select id * 2 x from range(5)",
)
# name -> query: every one Spark accepts; their verdicts come from Spark, not from here.
CASES = {
    "a projection": "select id, s from t",
    "an aggregate": "select s, count(*) c from t group by s",
    "a self-join": "select a.id from t a join t b on a.id = b.id",
    "rand()": "select id, rand() r from t",
    "rand(3), seeded": "select id, rand(3) r from t",
    "uuid()": "select uuid() u from t",
    "shuffle()": "select shuffle(array(1, 2, 3)) a from t",
    "monotonically_increasing_id()": "select monotonically_increasing_id() m from t",
    "spark_partition_id()": "select spark_partition_id() p from t",
    "input_file_name()": "select input_file_name() f from pq",
    "rand() in WHERE": "select id from t where rand() > 0.5",
    "rand() in a scalar subquery": (
        "select id, (select first(r) from (select rand() r from range(1))) x from t"
    ),
    "rand() in EXISTS": (
        "select id from t where exists (select 1 from range(2) where rand() > 0.5)"
    ),
    "rand() in IN (subquery)": (
        "select id from t where id in (select id from range(5) where rand() > 0.5)"
    ),
    "rand() in a view read": "select id from vr",
    "a deterministic view": "select x from vd",
    "rand() in a CTE read once": "with a as (select id, rand() r from t) select * from a",
    "rand() in a CTE read twice": (
        "with a as (select id, rand() r from t) select * from a union all select * from a"
    ),
    "a deterministic CTE read twice": (
        "with a as (select id from t) select * from a union all select * from a"
    ),
    "rand() in ORDER BY": "select id from t order by rand()",
    "rand() in a window's input": "select id, sum(r) over (order by id) w from vr",
    "rand() in GROUP BY": "select count(*) n from t group by rand() > 0.5",
    "rand() in a generator": "select explode(array(rand(), 1.0)) e from t",
    "DISTRIBUTE BY": "select id from t distribute by id",
    "rand() with DISTRIBUTE BY": "select id, rand() r from t distribute by id",
    "a REPARTITION hint": "select /*+ REPARTITION(3) */ id from t",
    "a REPARTITION hint without arguments": "select /*+ REPARTITION */ id from t",
    "rand() with a REPARTITION hint": "select /*+ REPARTITION(2) */ id, rand() r from t",
    "current_timestamp() (per run, not Spark's concern)": "select current_timestamp() n from t",
}


def optimized_text(spark, query: str) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        spark.sql(query).explain(extended=True)
    text = buffer.getvalue()
    return text.split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]


def told_deterministic(spark, query: str) -> bool:
    """Deterministic, as the adapter's probe over `spark` (a Connect session) tells it
    (reuse/connect_inputs.py): no CTE kept in the optimized plan of the query read twice."""
    return not KEPT_CTE.search(optimized_text(spark, probe(query)))


def truth(spark, query: str) -> bool:
    """Spark's own answer on a classic session: the analysed plan and its subqueries."""
    analyzed = spark.sql(query)._jdf.queryExecution().analyzed()
    subqueries = analyzed.subqueriesAll()
    plans = [analyzed, *(subqueries.apply(i) for i in range(subqueries.size()))]
    return all(plan.deterministic() for plan in plans)


def prepare(spark, parquet: Path) -> None:
    spark.range(5).write.mode("overwrite").parquet(str(parquet))
    for statement in (*SETUP, f"create or replace temporary view pq using parquet "
                      f"options (path '{parquet}')"):  # fmt: skip
        spark.sql(statement)


def main() -> int:
    from pyspark.sql import SparkSession

    work = Path(tempfile.mkdtemp(prefix="lh-det-"))
    # Spark's own answers first, on a classic session stopped before the Connect client starts
    # (one process holds one kind at a time).
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    classic = builder.config("spark.sql.shuffle.partitions", "1").getOrCreate()
    version = classic.version
    prepare(classic, work / "pq-classic")
    expected = {name: truth(classic, query) for name, query in CASES.items()}
    classic.stop()
    unsafe, missed, seconds = 0, 0, []
    try:
        with served_lakehouse(work, TOKEN, work / "warehouse") as (port, _):
            url = f"sc://localhost:{port}/;token={TOKEN};session_id={uuid.uuid4()}"
            remote = SparkSession.builder.remote(url).create()
            try:
                prepare(remote, work / "pq")
                print(f"{'case':52} {'Spark':>13} {'probe':>13}  probe")
                for name, query in CASES.items():
                    began = time.monotonic()
                    told = told_deterministic(remote, query)
                    seconds.append(time.monotonic() - began)
                    # told deterministic where Spark says not: reuse would be wrong; the other way
                    # round it is only reuse missed
                    unsafe += told and not expected[name]
                    missed += expected[name] and not told
                    mark = "" if told == expected[name] else ("  UNSAFE" if told else "  missed")
                    verdicts = ["deterministic" if v else "varying" for v in (expected[name], told)]
                    print(f"{name:52} {verdicts[0]:>13} {verdicts[1]:>13}  "
                          f"{seconds[-1] * 1000:5.0f} ms{mark}", flush=True)  # fmt: skip
            finally:
                remote.stop()  # its channel's threads would keep this process from exiting
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"Spark {version}: {len(CASES) - unsafe - missed} of {len(CASES)} agree, {unsafe} "
        f"told deterministic wrongly, {missed} varying wrongly (reuse missed); the probe's "
        f"EXPLAIN over Connect: median {statistics.median(seconds) * 1000:.0f} ms"
    )
    return 1 if unsafe else 0


if __name__ == "__main__":
    sys.exit(main())
