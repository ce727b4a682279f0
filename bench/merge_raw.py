"""bench/merge.py's raw side: one PySpark script (setup | merge <table> <out> | verify <out>)
run as a fresh process per step, and its config (Spark conf, target tables, MERGE statements)."""

from __future__ import annotations

from pathlib import Path

from harness import raw_spark_conf

from dbt.adapters.lakehouse.engine.statement_conf import statement_plan_conf
from dbt.include import lakehouse

MACROS = Path(lakehouse.PACKAGE_PATH) / "macros"

RAW_SCRIPT = '''"""bench/merge.py's raw side: setup | merge <table> <out> | verify <out>."""
import json
import sys
import time

from pyspark.sql import SparkSession

config = json.loads(open(sys.argv[1]).read())
mode = sys.argv[2]
builder = SparkSession.builder.appName("merge-raw")
for key, value in config["conf"].items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
if mode == "setup":
    spark.sql("create namespace if not exists raw.bench")
    for table, select in config["targets"].items():
        spark.sql(
            f"create table raw.bench.{table} using iceberg partitioned by (days(event_ts)) "
            f"tblproperties ('write.merge.mode' = '{config['write_mode']}') as {select}"
        )
elif mode == "merge":
    table = sys.argv[3]
    start = time.perf_counter()
    spark.sql(config["merges"][table])  # DML runs eagerly inside spark.sql
    seconds = time.perf_counter() - start
    open(sys.argv[4], "w").write(json.dumps({"seconds": seconds}))
elif mode == "verify":
    found = {}
    for table in config["targets"]:
        rows, updated = spark.sql(
            f"select count(*), count_if(status = 'updated') from raw.bench.{table}"
        ).first()
        files = spark.sql(f"select count(*) from raw.bench.{table}.files").first()[0]
        found[table] = {"rows": rows, "updated": updated, "files": files}
    open(sys.argv[3], "w").write(json.dumps(found))
spark.stop()
'''


# The planner setting dbt-lakehouse's MERGE statement carries, for --raw-hash-join: read from
# merge.sql's `-- lakehouse:plan` line as the cursor reads it, so it cannot drift from the macro.
OURS_MERGE_PLAN_CONF = statement_plan_conf(
    (MACROS / "materializations" / "incremental" / "merge.sql").read_text()
)


def raw_config(
    warehouse: Path,
    targets: dict[str, str],
    batches: dict[str, str],
    write_mode: str,
    hash_join: bool,
) -> dict:
    """`targets`: table -> the SELECT that builds it; `batches`: table -> its batch's SELECT."""
    conf = {**raw_spark_conf(warehouse), **(OURS_MERGE_PLAN_CONF if hash_join else {})}
    return {
        "conf": conf,
        "write_mode": write_mode,
        "targets": targets,
        "merges": {
            table: (
                f"merge into raw.bench.{table} as t\nusing (\n{batch}\n) as s\n"
                "on t.id = s.id\nwhen matched then update set *\nwhen not matched then insert *"
            )
            for table, batch in batches.items()
        },
    }
