"""Maintenance: what each `lakehouse_maintain` operation does to a table left by 20 small merges.

One incremental `merge` model (unique_key id, merge-on-read, partitioned by days(ts), --rows
rows over --days days) is built, then merged --merges times, each merge a fresh `dbt run`
process with `--vars {batch: n}`: half of the batch updates existing ids spread over every
day, half inserts new ids. Merge-on-read leaves, per merge and touched day, a small data file
and a position delete file. An old orphan (a file in the table's data folder no snapshot
names, its mtime 5 days back) is planted on the local warehouse. Then each operation runs on
its own through `dbt run-operation lakehouse_maintain` (fresh process): compaction,
snapshot_expiry (the model's config: retain_days 0, retain_last 1), orphan_cleanup (default
older_than_days 3), metadata_cleanup. Before the first and after each, a `dbt run-operation`
of the bench's own macro reads the table's Iceberg metadata tables (`files`, `snapshots`,
`manifests`) and an order-independent checksum of all rows (count and the sum of xxhash64 of
each row), and the bench sums the bytes of the table's folder on disk (data and metadata).
Printed per operation: each measure before → after, the seconds the operation's own line
reports and the process's wall time. The checksums must all be equal (exit 1 otherwise).
Figures are printed, never asserted.

    .venv/bin/python bench/maintenance.py
    .venv/bin/python bench/maintenance.py --rows 30000 --days 10 --batch 200 --merges 20
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import common_args, dbt_command, ours_target, run_timed, write_profiles  # noqa: E402

PROFILE = "maintenance_bench"
SCHEMA = "bench"
TABLE = "events"
EPOCH = 1704067200  # 2024-01-01 00:00:00 UTC
OPERATIONS = ("compaction", "snapshot_expiry", "orphan_cleanup", "metadata_cleanup")
ORPHAN_BYTES = 4096
ORPHAN_AGE_DAYS = 5  # older than orphan_cleanup's default older_than_days (3)


def model_sql(rows: int, days: int, batch: int) -> str:
    """A row's day follows from its id alone, so an update stays in its day-partition."""
    updates = batch // 2
    inserts = batch - updates
    stride = max(rows // max(updates, 1), 1)
    ts = f"timestamp_seconds({EPOCH} + (id % {days}) * 86400 + id % 86400)"
    return (
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',\n"
        "          partition_by=['days(ts)'],\n"
        "          table_properties={'write.merge.mode': 'merge-on-read',\n"
        "                            'write.update.mode': 'merge-on-read',\n"
        "                            'write.delete.mode': 'merge-on-read'},\n"
        "          maintenance={'snapshot_expiry': {'retain_days': 0, 'retain_last': 1}}) }}\n"
        "{% set batch = var('batch', 0) %}\n"
        "{% if is_incremental() and batch > 0 %}\n"
        f"select id, {ts} as ts, concat('b', '{{{{ batch }}}}') as v from (\n"
        f"  select id * {stride} + {{{{ batch }}}} % {stride} as id from range(0, {updates})\n"
        "  union all\n"
        f"  select {rows} + ({{{{ batch }}}} - 1) * {inserts} + id as id from range(0, {inserts})\n"
        ") as b\n"
        "{% else %}\n"
        f"select id, {ts} as ts, concat('v', cast(id as string)) as v from range(0, {rows})\n"
        "{% endif %}\n"
    )


# Reads the table's metadata tables and a checksum of its rows in one statement; the line is
# found in the run-operation's output by its prefix.
FACTS_MACRO = (
    """
{% macro bench_facts() %}
  {%- set t = adapter.get_relation(database=target.database, schema=target.schema,
                                    identifier='"""
    + TABLE
    + """') -%}
  {%- set sql -%}
    select concat_ws('|',
      cast((select count(*) from {{ t }}.files where content = 0) as string),
      cast((select count(*) from {{ t }}.files where content > 0) as string),
      cast((select coalesce(sum(file_size_in_bytes), 0) from {{ t }}.files) as string),
      cast((select count(*) from {{ t }}.snapshots) as string),
      cast((select count(*) from {{ t }}.manifests) as string),
      cast((select count(*) from {{ t }}) as string),
      cast((select sum(cast(xxhash64(id, ts, v) as decimal(38, 0))) from {{ t }}) as string)
    ) as facts
  {%- endset -%}
  {%- do log('BENCH_FACTS ' ~ run_query(sql).columns[0].values()[0], info=True) -%}
{% endmacro %}
"""
)
_FACTS = re.compile(r"BENCH_FACTS (\S+)")


@dataclass(frozen=True)
class Facts:
    data_files: int
    delete_files: int
    live_bytes: int  # data and delete files of the current snapshot
    folder_bytes: int  # everything under the table's folder: data, deletes, metadata, orphans
    snapshots: int
    manifests: int
    rows: int
    checksum: str


def write_project(project: Path, rows: int, days: int, batch: int) -> None:
    shutil.rmtree(project, ignore_errors=True)
    (project / "models").mkdir(parents=True)
    (project / "macros").mkdir()
    (project / "dbt_project.yml").write_text(
        yaml.safe_dump(
            {
                "name": PROFILE,
                "version": "1.0",
                "config-version": 2,
                "profile": PROFILE,
                "model-paths": ["models"],
                "macro-paths": ["macros"],
            },
            sort_keys=False,
        )
    )
    (project / "models" / f"{TABLE}.sql").write_text(model_sql(rows, days, batch))
    (project / "macros" / "bench_facts.sql").write_text(FACTS_MACRO)
    write_profiles(project, PROFILE, ours_target(SCHEMA, threads=1))


def table_folder(project: Path) -> Path:
    return project / "lakehouse_warehouse" / SCHEMA / TABLE


def folder_bytes(folder: Path) -> int:
    return sum(
        (Path(root) / name).stat().st_size for root, _, names in os.walk(folder) for name in names
    )


def dbt(project: Path, log: Path, *args: str) -> tuple[float, str]:
    """One dbt command in a fresh process: its wall time and its output; exits on failure."""
    sample = run_timed(dbt_command(*args, project=project), project, log=log)
    if not sample.ok:
        sys.exit(f"dbt {' '.join(args)} failed: {sample.note}")
    return sample.seconds, log.read_text(errors="replace")


def facts(project: Path, log: Path) -> Facts:
    _, out = dbt(project, log, "run-operation", "bench_facts")
    found = _FACTS.search(out)
    if found is None:
        sys.exit(f"no BENCH_FACTS line in {log}")
    data, deletes, live, snapshots, manifests, rows, checksum = found.group(1).split("|")
    return Facts(
        int(data),
        int(deletes),
        int(live),
        folder_bytes(table_folder(project)),
        int(snapshots),
        int(manifests),
        int(rows),
        checksum,
    )


def plant_orphan(project: Path) -> Path:
    orphan = table_folder(project) / "data" / "orphan-planted-by-bench.parquet"
    orphan.write_bytes(b"x" * ORPHAN_BYTES)
    old = time.time() - ORPHAN_AGE_DAYS * 86400
    os.utime(orphan, (old, old))
    return orphan


def kib(count: int) -> str:
    return f"{count / 1024:.1f} KiB" if count < 1024 * 1024 else f"{count / 1048576:.2f} MiB"


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=1)
    parser.add_argument("--rows", type=int, default=30000, help="rows built (%(default)s)")
    parser.add_argument("--days", type=int, default=10, help="day partitions (%(default)s)")
    parser.add_argument("--batch", type=int, default=200, help="rows per merge (%(default)s)")
    parser.add_argument("--merges", type=int, default=20, help="merges (%(default)s)")
    args = parser.parse_args()
    project = args.work / "maintenance"
    write_project(project, args.rows, args.days, args.batch)
    logs = project / "bench-logs"
    logs.mkdir()

    built, _ = dbt(project, logs / "build.log", "run")
    merge_seconds = []
    for batch in range(1, args.merges + 1):
        seconds, _ = dbt(
            project, logs / f"merge-{batch}.log", "run", "--vars", f"{{batch: {batch}}}"
        )
        merge_seconds.append(seconds)
    print(
        f"built {args.rows} rows over {args.days} days in {built:.1f}s; {args.merges} merges of "
        f"{args.batch} rows, {min(merge_seconds):.1f}-{max(merge_seconds):.1f}s each",
        file=sys.stderr,
    )
    orphan = plant_orphan(project)

    before = facts(project, logs / "facts-0.log")
    rows: list[tuple[str, Facts, Facts, str, float]] = []
    lines: list[str] = []
    for operation in OPERATIONS:
        arguments = json.dumps({"select": [TABLE], "operations": [operation]})
        wall, out = dbt(
            project,
            logs / f"{operation}.log",
            "run-operation",
            "lakehouse_maintain",
            "--args",
            arguments,
        )
        line = next(
            (x for x in out.splitlines() if f".{TABLE} {operation}" in x), f"{operation}: no line"
        )
        line = re.sub(r"^(?:\x1b\[0m)?\d\d:\d\d:\d\d\s+", "", line)
        lines.append(line)
        own = re.search(r"; ([\d.]+) s$", line)
        after = facts(project, logs / f"facts-{operation}.log")
        rows.append((operation, before, after, own.group(1) if own else "?", wall))
        before = after

    print(
        f"\n## maintenance: {args.rows} rows over {args.days} day partitions, {args.merges} "
        f"merge-on-read merges of {args.batch} rows, one planted {ORPHAN_AGE_DAYS}-day-old "
        f"orphan of {ORPHAN_BYTES} B; embedded lakehouse"
    )
    header = (
        f"{'operation':<17} {'data files':>11} {'delete files':>12} {'live bytes':>22} "
        f"{'table folder bytes':>22} {'snapshots':>10} {'manifests':>10} {'op s / process s':>17}"
    )
    print(header)
    print("-" * len(header))
    for operation, b, a, own, wall in rows:
        print(
            f"{operation:<17} {f'{b.data_files} → {a.data_files}':>11} "
            f"{f'{b.delete_files} → {a.delete_files}':>12} "
            f"{f'{kib(b.live_bytes)} → {kib(a.live_bytes)}':>22} "
            f"{f'{kib(b.folder_bytes)} → {kib(a.folder_bytes)}':>22} "
            f"{f'{b.snapshots} → {a.snapshots}':>10} {f'{b.manifests} → {a.manifests}':>10} "
            f"{f'{own} / {wall:.1f}':>17}"
        )
    checksums = {(f.rows, f.checksum) for _, b, a, _, _ in rows for f in (b, a)}
    first = rows[0][1]
    print(f"rows before and after every operation: {first.rows}, checksum {first.checksum}")
    print(f"planted orphan still there afterwards: {orphan.exists()}")
    print("lakehouse_maintain lines:")
    for line in lines:
        print(f"  {line}")
    if len(checksums) != 1:
        print(f"CHECKSUM MISMATCH: {sorted(checksums)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
