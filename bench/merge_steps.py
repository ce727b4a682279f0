"""Merge steps: where an incremental `merge` node's seconds go, and what other orders would cost.

Raw PySpark, the shared engine settings and a hadoop catalog (harness.raw_spark_conf); the
target and the batch of bench/merge.py (--rows over 30 day-partitions; half the batch updates
ids in every partition, half inserts). One untimed setup builds the target; every variant then
runs in a fresh process, times its steps, checks the table (rows, updated rows) and rolls the
table back to the setup's snapshot, so every variant merges into the same table. Variants:

- `raw`: the MERGE statement alone, on Spark's planner defaults (bench/merge.py's raw side);
- `raw-hash`: the same with the planner setting the adapter's MERGE carries;
- `node`: the adapter's order: the new rows checkpointed (`localCheckpoint`, eager), the
  repeated-key check (one aggregate over them), the MERGE over the checkpoint; the check runs
  a second time after the MERGE's commit, untimed in the total, to show it on warm code paths;
- `lazy`: the checkpoint made by the key check's own job (`localCheckpoint(eager=False)`);
- `no-checkpoint`: the key check over the model's query, then a MERGE that computes the new
  rows itself, twice (Iceberg's runtime file filter, then the join), as `raw` does;
- `window`: the checkpoint, a NULL-key probe, and the key check inside the MERGE (a window
  counting rows per key in its USING clause, as a merge model's first build does).

A merge model's first build (no MERGE: one CREATE TABLE AS of --rows rows), `--first-build`:
- `ctas`: the statement alone, no key check;
- `ctas-window`: the adapter's: a window counting rows per key, failing on a repeated key;
- `ctas-subquery`: the check as a scalar subquery (one aggregate over the model's keys) that
  the CTAS's filter reads, so the model's query runs twice, keys only the first time.

    .venv/bin/python bench/merge_steps.py --rounds 2
    .venv/bin/python bench/merge_steps.py --rounds 2 --first-build
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import common_args, raw_spark_conf  # noqa: E402
from merge import batch_sql, split, target_sql  # noqa: E402
from merge_raw import OURS_MERGE_PLAN_CONF  # noqa: E402

VARIANTS = ("raw", "raw-hash", "node", "lazy", "no-checkpoint", "window")
FIRST_BUILD_VARIANTS = ("ctas", "ctas-window", "ctas-subquery")
KEY_CHECK = """select count(*) from (select id, count(*) as n from new_rows group by id) as k
where case when n > 1 then raise_error('repeated id') else id is null end"""
MERGE = """merge into raw.steps.t as d using {source} as s on s.id = d.id
when matched then update set * when not matched then insert *"""


def window_checked(relation: str) -> str:
    """`relation`'s rows, failing on a repeated id: a window counting rows per id, as the
    adapter's first build of a merge model checks them."""
    return f"""select id, event_ts, amount, status, updated_at from (
  select *, count(*) over (partition by id) as n from {relation}) as c
  where case when n > 1 then raise_error('repeated id') else true end"""


def run_variant(variant: str, warehouse: Path, rows: int, batch: int) -> dict[str, float]:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(f"merge-steps-{variant}")
    for key, value in raw_spark_conf(warehouse).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    steps: dict[str, float] = {}

    def timed(step: str, action):  # noqa: ANN001, ANN202
        start = time.perf_counter()
        result = action()
        steps[step] = round(time.perf_counter() - start, 2)
        return result

    if variant == "setup":
        spark.sql("create namespace if not exists raw.steps")
        spark.sql("drop table if exists raw.steps.t purge")
        timed(
            "create target",
            lambda: spark.sql(
                "create table raw.steps.t using iceberg partitioned by (days(event_ts)) "
                f"as {target_sql(rows)}"
            ),
        )
        base = spark.sql(
            "select snapshot_id from raw.steps.t.snapshots order by committed_at desc limit 1"
        ).first()[0]
        (warehouse / "base_snapshot").write_text(str(base))
        return steps
    if variant.startswith("ctas"):
        return first_build(spark, variant, rows, timed, steps)
    base = int((warehouse / "base_snapshot").read_text())
    spark.sql("select count(*) from raw.steps.t").collect()  # the catalog loaded, as in a node
    spark.sql(f"create or replace temporary view new_rows as {batch_sql(rows, batch)}")
    if variant != "raw":
        for key, value in OURS_MERGE_PLAN_CONF.items():
            spark.conf.set(key, value)
    source = "new_rows"
    if variant in ("node", "window"):
        rows_df = timed("checkpoint", lambda: spark.table("new_rows").localCheckpoint(eager=True))
        rows_df.createOrReplaceTempView("new_rows")
    elif variant == "lazy":
        spark.table("new_rows").localCheckpoint(eager=False).createOrReplaceTempView("new_rows")
    if variant in ("node", "no-checkpoint"):
        timed("key check", lambda: spark.sql(KEY_CHECK).collect())
    elif variant == "lazy":
        timed("checkpoint + key check", lambda: spark.sql(KEY_CHECK).collect())
    elif variant == "window":
        probe = "select 1 from new_rows where id is null limit 1"
        timed("NULL-key probe", lambda: spark.sql(probe).collect())
        source = f"({window_checked('new_rows')})"
    timed("merge", lambda: spark.sql(MERGE.format(source=source)))
    total = round(sum(steps.values()), 2)
    if variant == "node":
        timed("key check again (warm)", lambda: spark.sql(KEY_CHECK).collect())
    steps["total"] = total
    updates, inserts = split(rows, batch)
    found = spark.sql("select count(*), count_if(status = 'updated') from raw.steps.t").first()
    if tuple(found) != (rows + inserts, updates):
        raise SystemExit(
            f"{variant}: rows, updated {tuple(found)}, want {(rows + inserts, updates)}"
        )
    spark.sql(f"call raw.system.rollback_to_snapshot('steps.t', {base})")
    spark.stop()
    return steps


def first_build(spark, variant: str, rows: int, timed, steps: dict[str, float]) -> dict[str, float]:  # noqa: ANN001
    model = f"({target_sql(rows)}) as m"
    if variant == "ctas-window":
        select = window_checked(model)
    elif variant == "ctas-subquery":
        keys = f"select id, count(*) as n from {model} group by id"
        select = f"""select * from {model}
          where (select coalesce(max(n), 0) from ({keys}) as k) <= 1
             or raise_error('repeated id') is null"""
    else:
        select = f"select * from {model}"
    spark.sql("create namespace if not exists raw.steps")
    spark.sql("drop table if exists raw.steps.first_build purge")
    statement = (
        "create table raw.steps.first_build using iceberg partitioned by (days(event_ts)) "
        f"as {select}"
    )
    timed("create table as", lambda: spark.sql(statement))
    steps["total"] = steps["create table as"]
    found = spark.sql("select count(*) from raw.steps.first_build").first()[0]
    if found != rows:
        raise SystemExit(f"{variant}: {found} rows, want {rows}")
    spark.sql("drop table raw.steps.first_build purge")
    spark.stop()
    return steps


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=2)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=1_000_000)
    parser.add_argument("--variants", help="comma separated (default: every one of the mode)")
    parser.add_argument(
        "--first-build", action="store_true", help="a merge model's first build instead"
    )
    parser.add_argument("--one", nargs=2, metavar=("VARIANT", "WAREHOUSE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        steps = run_variant(args.one[0], Path(args.one[1]), args.rows, args.batch)
        print(json.dumps(steps))
        return
    warehouse = args.work / "merge_steps"
    warehouse.mkdir(parents=True, exist_ok=True)
    default = FIRST_BUILD_VARIANTS if args.first_build else VARIANTS
    variants = [v for v in (args.variants or ",".join(default)).split(",") if v]

    def fresh(variant: str) -> dict[str, float]:
        command = [
            sys.executable, __file__, "--one", variant, str(warehouse),
            "--rows", str(args.rows), "--batch", str(args.batch),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{variant} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    if not args.first_build:
        print(f"setup: {fresh('setup')}", file=sys.stderr)
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for round_no in range(args.rounds):
        for variant in variants:
            steps = fresh(variant)
            results[variant].append(steps)
            print(f"  round {round_no + 1} {variant}: {steps}", file=sys.stderr)

    case = (
        f"first build of {args.rows:,} rows"
        if args.first_build
        else (f"{args.batch:,} rows into {args.rows:,}")
    )
    print(f"\n# merge steps: {case}, raw PySpark, medians of {args.rounds}")
    reference = "ctas" if args.first_build else "raw"
    raw_total = (
        statistics.median(s["total"] for s in results[reference]) if reference in results else None
    )
    for variant, samples in results.items():
        names = [k for k in samples[0] if k != "total"]
        parts = ", ".join(f"{n} {statistics.median(s[n] for s in samples):.2f}s" for n in names)
        total = statistics.median(s["total"] for s in samples)
        ratio = f" ({total / raw_total:.2f}x {reference})" if raw_total else ""
        print(f"{variant:<14} total {total:6.2f}s{ratio}: {parts}")


if __name__ == "__main__":
    main()
