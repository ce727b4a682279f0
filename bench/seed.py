"""Seed: 100k and 1M rows vs the peer (capped at a time limit) and vs raw `spark.read.csv` + CTAS.

A deterministic CSV of 8 columns (id, name, category, amount, quantity, created_at date, flag
boolean, note with commas, quotes and empty values) is generated once per row count in the work
folder. Each round loads it three ways, each in a fresh process on an empty warehouse:
- ours: `dbt seed` on the embedded lakehouse;
- the peer: `dbt seed` with dbt-spark (`+file_format: iceberg`), stopped at `--peer-cap`
  seconds. A stopped peer counts as taking the cap, so that ratio is an upper bound (ours is at
  least that much faster); it is skipped for seeds above `--skip-peer-above` rows;
- raw: a PySpark script with the same jar and engine settings, an Iceberg hadoop catalog,
  `spark.read.csv(path, header=True, schema=<the types dbt infers>)` and one
  `CREATE TABLE ... USING iceberg AS SELECT`: the floor of what Spark needs for the same table.
Every side's row count and column types are read afterwards from the table's Iceberg metadata
(no engine) and printed. Goals: ours faster than the peer; ours <= 1.5x raw at 1M rows.

    .venv/bin/python bench/seed.py --rows 100000,1000000 --rounds 3 --peer-cap 300
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import shutil
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    iceberg_table_facts,
    ours_target,
    peer_settings,
    peer_target,
    raw_spark_conf,
    report,
    run_timed,
    write_profiles,
)

PROFILE = "bench_seed"
SCHEMA = "bench"
TABLE = "seed_rows"
CATEGORIES = ["books", "garden", "toys", "music", "tools", "food", "sports"]
COLUMNS = ["id", "name", "category", "amount", "quantity", "created_at", "flag", "note"]
# The types dbt infers for these columns (agate, then dbt-spark's conversion), given to raw as
# its explicit schema so the three tables come out alike.
RAW_SCHEMA = (
    "id BIGINT, name STRING, category STRING, amount DOUBLE, quantity BIGINT, "
    "created_at DATE, flag BOOLEAN, note STRING"
)

RAW_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession

settings = json.loads(sys.argv[1])
builder = SparkSession.builder.appName("bench-raw-seed")
for key, value in settings["conf"].items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
frame = spark.read.csv(settings["csv"], header=True, schema=settings["schema"])
frame.createOrReplaceTempView("seed_csv")
spark.sql(f"create namespace if not exists raw.{settings['schema_name']}")
spark.sql(
    f"create table raw.{settings['schema_name']}.{settings['table']} using iceberg "
    "as select * from seed_csv"
)
spark.stop()
"""


def label(rows: int) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if rows >= size and rows % size == 0:
            return f"{rows // size}{suffix}"
    return str(rows)


def write_csv(path: Path, rows: int) -> Path:
    """The same rows for every run with this row count; written once per work folder."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    start = dt.date(2020, 1, 1)
    partial = path.with_suffix(".partial")
    with partial.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for i in range(1, rows + 1):
            writer.writerow(
                [
                    i,
                    f"customer {i * 7 % 99991:05d}",
                    CATEGORIES[i % len(CATEGORIES)],
                    f"{(i * 7919) % 1_000_000 / 100:.2f}",
                    (i * 31) % 50,
                    (start + dt.timedelta(days=(i * 13) % 1461)).isoformat(),
                    "true" if i % 3 == 0 else "false",
                    "" if i % 5 == 0 else f'note {i % 101}, "quoted" {i % 7}',
                ]
            )
    partial.replace(path)
    return path


def seed_project(folder: Path, csv_path: Path, peer: bool) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "seeds").mkdir(parents=True)
    settings: dict = {
        "name": PROFILE,
        "version": "1.0",
        "config-version": 2,
        "profile": PROFILE,
        "seed-paths": ["seeds"],
    }
    if peer:
        settings["seeds"] = {PROFILE: {"+file_format": "iceberg"}}
    (folder / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    target = folder / "seeds" / f"{TABLE}.csv"
    try:
        os.link(csv_path, target)  # the CSV is never written to: a link spares the copy
    except OSError:
        shutil.copyfile(csv_path, target)
    return folder


def wait_gone(marker: str, limit: float = 30) -> None:
    """Wait (up to `limit` s) until no process names `marker` on its command line, so a
    stopped run's JVM is gone before the next contender starts."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        alive = False
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    alive = alive or marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
        if not alive:
            return
        time.sleep(0.5)


def measure(
    rows: int, args: argparse.Namespace, raw_script: Path, checks: list[str]
) -> list[tuple[str, Series, Series, str]]:
    """Every round of one seed size; the report's rows for it."""
    name = label(rows)
    work: Path = args.work / "seed"
    csv_path = write_csv(work / "data" / f"rows-{rows}.csv", rows)
    ours = Series(f"dbt-lakehouse {name}")
    peer = Series(f"dbt-spark session {name}")
    raw = Series(f"raw read+CTAS {name}")

    def check(side: str, round_no: int, warehouse: Path, sample: Sample) -> Sample:
        count, types = iceberg_table_facts(warehouse, TABLE)
        capped = "cap" in sample.note
        verdict = "ok" if count == rows else "stopped at the cap" if capped else "WRONG"
        checks.append(
            f"{name} round {round_no + 1} {side}: {count} rows of {rows} ({verdict}); {types}"
        )
        return sample

    def run_ours(round_no: int) -> Sample:
        project = seed_project(work / "ours", csv_path, peer=False)
        write_profiles(project, PROFILE, ours_target(SCHEMA))
        sample = run_timed(
            dbt_command("seed", project=project), project, log=work / f"ours-{rows}-{round_no}.log"
        )
        return check("ours", round_no, project / "lakehouse_warehouse", sample)

    def run_peer(round_no: int) -> Sample:
        project = seed_project(work / "peer", csv_path, peer=True)
        warehouse = work / "peer-warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)  # the hadoop catalog cannot list a missing folder
        write_profiles(
            project,
            PROFILE,
            peer_target(SCHEMA, warehouse, spark_defaults=args.peer_spark_defaults),
        )
        sample = run_timed(
            dbt_command("seed", project=project),
            project,
            timeout=args.peer_cap,
            log=work / f"peer-{rows}-{round_no}.log",
        )
        if sample.note.startswith("stopped at"):
            wait_gone(str(warehouse))  # its JVM outlives the killed dbt for a moment
            # It takes at least the cap: counting the cap makes ours/peer an upper bound.
            sample = Sample(
                sample.seconds,
                sample.peak_rss_mb,
                True,
                f"peer stopped at the {args.peer_cap:.0f} s cap and counted as the cap: "
                "the ratio is an upper bound",
            )
        return check("peer", round_no, warehouse, sample)

    def run_raw(round_no: int) -> Sample:
        warehouse = work / "raw-warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)
        settings = {
            "csv": str(csv_path),
            "schema": RAW_SCHEMA,
            "schema_name": SCHEMA,
            "table": TABLE,
            "conf": raw_spark_conf(warehouse),
        }
        sample = run_timed(
            [sys.executable, str(raw_script), json.dumps(settings)],
            work,
            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},  # as the adapter sets it
            log=work / f"raw-{rows}-{round_no}.log",
        )
        return check("raw", round_no, warehouse, sample)

    with_peer = rows <= args.skip_peer_above
    if not with_peer:
        print(f"  {name}: the peer is not run above {args.skip_peer_above} rows", file=sys.stderr)
    alternate(
        args.rounds,
        [(ours, run_ours), *([(peer, run_peer)] if with_peer else []), (raw, run_raw)],
    )
    goal = "<=1.50x" if rows >= 1_000_000 else "-"
    return [
        *([(f"seed {name} vs peer", ours, peer, "<peer")] if with_peer else []),
        (f"seed {name} vs raw read+CTAS", ours, raw, goal),
    ]


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", default="100000,1000000", help="seed sizes, comma-separated (default %(default)s)"
    )
    parser.add_argument(
        "--peer-cap",
        type=float,
        default=300,
        help="seconds after which the peer's `dbt seed` is stopped (default %(default)s)",
    )
    parser.add_argument(
        "--skip-peer-above",
        type=int,
        default=100_000,
        help="do not run the peer on seeds with more rows than this (default %(default)s)",
    )
    args = parser.parse_args()
    raw_script = args.work / "seed" / "raw_load.py"
    raw_script.parent.mkdir(parents=True, exist_ok=True)
    raw_script.write_text(RAW_SCRIPT)
    checks: list[str] = []
    rows_out: list[tuple[str, Series, Series, str]] = []
    for rows in [int(value) for value in args.rows.split(",") if value.strip()]:
        rows_out += measure(rows, args, raw_script, checks)

    report(
        "seed: `dbt seed` of a generated 8-column CSV, cold, fresh process each"
        + peer_settings(args),
        rows_out,
    )
    print("\nrow counts and column types (from each table's Iceberg metadata):")
    for line in checks:
        print(f"  {line}")


if __name__ == "__main__":
    main()
