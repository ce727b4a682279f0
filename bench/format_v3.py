"""Format v3: merge-on-read MERGE into an Iceberg v2 table (position delete files) vs a v3
table (deletion vectors), and what readers pay after k merges before compaction.

Each round is one fresh PySpark process (same Iceberg jar and SHARED_SPARK_CONF as every raw
side here, a fresh hadoop-catalog warehouse). It builds, untimed, two targets of --rows rows
partitioned by days(event_ts) over 30 days, merge-on-read, one `format-version` 2 and one 3.
Then --merges MERGEs of --batch rows each (half updates spread over every partition, half
inserts: bench/merge.py's batch, with a different id offset per merge so each merge updates
rows earlier merges did not), and after the last one two reads: a full scan (`sum(hash(*))`
over every column, so every delete applies to every data file) and a filtered count (two
day-partitions and a predicate on a non-partition column). Every step runs on both tables
back to back, the first one alternating (ABBA), and is timed inside the process: on a shared
machine a busy moment then falls on both versions alike, which separate processes minutes apart
do not get. Delete files' count and bytes are recorded; both tables' rows are checked each
round (count and `updated` rows), so a figure never comes from a wrong table.

Printed: per case the v3 and v2 min/median over the rounds and their ratio v3 / v2 (below
1.00x v3 is faster), then the ratio within each round (the paired figure). Never asserted.

    .venv/bin/python bench/format_v3.py --rounds 3
    .venv/bin/python bench/format_v3.py --rows 200000 --batch 20000 --merges 2 --rounds 1
"""

from __future__ import annotations

import json
import shutil
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
from merge import EVENT_TS, human, target_sql  # noqa: E402

VERSIONS = (2, 3)
MOR = ("write.merge.mode", "write.update.mode", "write.delete.mode")

CHILD = '''"""bench/format_v3.py's worker: a v2 and a v3 table in one session, their MERGEs and
reads interleaved, figures as JSON."""
import json
import sys
import time

from pyspark.sql import SparkSession

config = json.loads(open(sys.argv[1]).read())
versions = [2, 3]
builder = SparkSession.builder.appName("format-v2-v3")
for key, value in config["conf"].items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
properties = ", ".join(f"'{k}' = '{v}'" for k, v in config["properties"].items())
spark.sql("create namespace if not exists raw.bench")
for version in versions:
    spark.sql(
        f"create table raw.bench.t_v{version} using iceberg partitioned by (days(event_ts)) "
        f"tblproperties ('format-version' = '{version}', {properties}) as {config['target']}"
    )


def timed(sql):
    start = time.perf_counter()
    rows = spark.sql(sql).collect()
    return time.perf_counter() - start, rows


figures = {v: {"merges": [], "scan": [], "filtered": []} for v in versions}
# Each step runs on both tables back to back, the first one alternating (ABBA), so a busy
# moment of the machine and the JVM's warm-up fall on both versions alike.
for number, merge in enumerate(config["merges"]):
    for version in versions if number % 2 == 0 else versions[::-1]:
        seconds, _ = timed(merge.replace("{table}", f"raw.bench.t_v{version}"))
        figures[version]["merges"].append(seconds)
for version in versions + versions[::-1]:
    table = f"raw.bench.t_v{version}"
    seconds, _ = timed(f"select sum(hash(*)), count(*) from {table}")
    figures[version]["scan"].append(seconds)
    seconds, _ = timed(config["filtered"].replace("{table}", table))
    figures[version]["filtered"].append(seconds)
for version in versions:
    table = f"raw.bench.t_v{version}"
    deletes = spark.sql(
        f"select count(*), coalesce(sum(file_size_in_bytes), 0), max(file_format) "
        f"from {table}.delete_files"
    ).first()
    rows, updated = spark.sql(
        f"select count(*), count_if(status = 'updated') from {table}"
    ).first()
    figures[version].update(
        rows=rows, updated=updated, delete_files=deletes[0], delete_bytes=deletes[1],
        delete_format=deletes[2],
    )
print("FIGURES " + json.dumps(figures))
spark.stop()
'''


def batch_sql(rows: int, batch: int, merge_no: int) -> str:
    """Half updates (one id per block of `stride`, shifted by the merge's number, so merges
    hit different rows of the same data files), half new ids above every earlier merge's."""
    updates = min(batch // 2, rows)
    inserts = batch - updates
    stride = max(rows // max(updates, 1), 1)
    first_new = rows + merge_no * inserts
    return f"""select id,
       {EVENT_TS} as event_ts,
       cast(id % 1000 as double) / 10 + 1 as amount,
       case when id < {rows} then 'updated' else 'inserted' end as status,
       {EVENT_TS} as updated_at
from (
  select id * {stride} + (id + {merge_no}) % {stride} as id from range(0, {updates})
  union all
  select id from range({first_new}, {first_new + inserts})
) as b"""


def child_config(warehouse: Path, rows: int, batch: int, merges: int) -> dict:
    epoch_day = "timestamp '2024-01-01 00:00:00'"
    return {
        "conf": raw_spark_conf(warehouse),
        "properties": {key: "merge-on-read" for key in MOR},
        "target": target_sql(rows),
        "merges": [
            f"merge into {{table}} as t using (\n{batch_sql(rows, batch, m)}\n) as s "
            "on t.id = s.id when matched then update set * when not matched then insert *"
            for m in range(merges)
        ],
        "filtered": (
            f"select count(*) from {{table}} where event_ts >= {epoch_day} + interval 10 days "
            f"and event_ts < {epoch_day} + interval 12 days and amount > 50"
        ),
    }


def expected(rows: int, batch: int, merges: int) -> tuple[int, int]:
    """(rows, updated rows) after the merges: updated ids overlap only if strides repeat."""
    updates = min(batch // 2, rows)
    stride = max(rows // max(updates, 1), 1)
    touched = {i * stride + (i + m) % stride for m in range(merges) for i in range(updates)}
    return rows + merges * (batch - updates), len(touched)


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--rows", type=int, default=3_000_000, help="target rows")
    parser.add_argument("--batch", type=int, default=1_000_000, help="rows per MERGE")
    parser.add_argument("--merges", type=int, default=3, help="MERGEs before the reads (k)")
    args = parser.parse_args()
    work = args.work / "format_v3"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    script = work / "child.py"
    script.write_text(CHILD)
    want = expected(args.rows, args.batch, args.merges)
    cases = ("merge (median of the k)", "full scan after k", "filtered count after k")
    series = {(v, c): Series(f"v{v} {c}") for v in VERSIONS for c in cases}
    paired: dict[str, list[float]] = {c: [] for c in cases}
    deletes: dict[int, list[str]] = {v: [] for v in VERSIONS}

    def one(round_no: int) -> Sample:
        warehouse = work / f"wh-{round_no}"
        config = work / f"config-{round_no}.json"
        config.write_text(json.dumps(child_config(warehouse, args.rows, args.batch, args.merges)))
        log = work / f"round-{round_no}.log"
        sample = run_timed([sys.executable, str(script), str(config)], work, log=log)
        shutil.rmtree(warehouse, ignore_errors=True)
        lines = [x for x in log.read_text().splitlines() if x.startswith("FIGURES ")]
        if not (sample.ok and lines):
            return sample
        found = {int(v): f for v, f in json.loads(lines[-1][len("FIGURES ") :]).items()}
        wrong = [v for v in VERSIONS if (found[v]["rows"], found[v]["updated"]) != want]
        if wrong:
            note = f"v{wrong[0]}: {found[wrong[0]]['rows']} rows, expected {want[0]}"
            return Sample(sample.seconds, sample.peak_rss_mb, False, note)
        for version in VERSIONS:
            figures = found[version]
            for case, key in zip(cases, ("merges", "scan", "filtered"), strict=True):
                seconds = statistics.median(figures[key])
                series[(version, case)].samples.append(Sample(seconds, sample.peak_rss_mb, True))
            deletes[version].append(
                f"{figures['delete_files']} {figures['delete_format']} files, "
                f"{figures['delete_bytes'] / 1e6:.1f} MB"
            )
        for case in cases:
            paired[case].append(series[(3, case)].times[-1] / series[(2, case)].times[-1])
        return sample

    alternate(args.rounds, [(Series("round (both tables)"), one)])
    title = (
        f"Format v3 vs v2, merge-on-read: {human(args.rows)} rows, {args.merges} MERGEs of "
        f"{human(args.batch)} rows, reads after the last (ours = v3, other = v2)"
    )
    report(title, [(case, series[(3, case)], series[(2, case)], "<1.00x") for case in cases])
    for case in cases:
        ratios = ", ".join(f"{r:.2f}x" for r in paired[case])
        middle = f"{statistics.median(paired[case]):.2f}x" if paired[case] else "-"
        print(f"{case}: v3/v2 within each round {ratios} (median {middle})")
    for version in VERSIONS:
        print(f"v{version} delete files after {args.merges} merges: {'; '.join(deletes[version])}")


if __name__ == "__main__":
    main()
