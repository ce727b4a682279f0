"""Changes: a downstream model reading `lakehouse.changes(ref('upstream'))` vs the same model
with a watermark column, on an upstream of --rows rows receiving --percent changes per round.

One dbt project on the embedded lakehouse. `upstream` is an incremental merge model (unique
key id, `updated_at` set by each round): its first build has --rows rows; round r merges a
batch of --percent of them, half updates of ids spread over the whole table, half new ids, with
`updated_at` later than every earlier one. No deletes, so both downstream models must end with
the upstream's rows (checked at the end); a delete reaches only the changes model. The two
downstream models, both `merge` on id:

- by_changes: `select * from {{ lakehouse.changes(ref('upstream')) }}`
- by_watermark: `select * from {{ ref('upstream') }}` and, when incremental,
  `where updated_at > (select max(updated_at) from {{ this }})`

Each round changes the upstream (untimed), then runs each downstream model in a fresh `dbt run`
process (`LAKEHOUSE_ENGINE=cold`, so each process has a JVM of its own and a Spark event log),
alternating. Per side: the node's execution time from target/run_results.json (compile, where
lakehouse.changes plans and reads the histories, and the merge), and the rows the process read
from storage (the input records of every task in its event log: the upstream scan, the
watermark's scan of its own table, the changelog's files). Figures are printed, not asserted.

    .venv/bin/python bench/changes.py --rounds 3
    .venv/bin/python bench/changes.py --rows 200000 --rounds 1   # quick look
    .venv/bin/python bench/changes.py --rounds 2 --write-mode merge-on-read
    .venv/bin/python bench/changes.py --rounds 3 --insert-only
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    common_args,
    dbt_command,
    ours_target,
    report,
    run_timed,
    write_profiles,
)

PROFILE = "changes_bench"
SCHEMA = "bench"
EPOCH = 1704067200  # 2024-01-01 00:00:00 UTC: the first build's updated_at


def upstream_sql(rows: int, percent: float, write_mode: str, insert_only: bool) -> str:
    """First build: ids 0..rows-1. Round r (var `round`): half the batch updates ids spread
    over the table (a different offset each round), half inserts ids after every earlier one;
    with `insert_only`, the whole batch inserts (an event table)."""
    batch = max(int(rows * percent / 100), 2)
    updates = 0 if insert_only else batch // 2
    inserts = batch - updates
    stride = max(rows // max(updates, 1), 1)
    return f"""{{{{ config(materialized='incremental', unique_key='id',
          table_properties={{'write.merge.mode': '{write_mode}',
                             'write.update.mode': '{write_mode}'}}) }}}}
{{% set r = var('round', 0) | int %}}
{{% if is_incremental() %}}
select id, cast(id % 1000 as double) / 10 + {{{{ r }}}} as amount,
       timestamp_seconds({EPOCH} + {{{{ r }}}} * 3600) as updated_at
from (
  select id * {stride} + {{{{ r }}}} % {stride} as id from range(0, {updates})
  union all
  select id from range({rows} + ({{{{ r }}}} - 1) * {inserts}, {rows} + {{{{ r }}}} * {inserts})
) as batch
{{% else %}}
select id, cast(id % 1000 as double) / 10 as amount, timestamp_seconds({EPOCH}) as updated_at
from range(0, {rows})
{{% endif %}}
"""


BY_CHANGES_SQL = """{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('upstream')) }}
"""
BY_WATERMARK_SQL = """{{ config(materialized='incremental', unique_key='id') }}
select * from {{ ref('upstream') }}
{% if is_incremental() %}
where updated_at > (select max(updated_at) from {{ this }})
{% endif %}
"""


def write_project(
    project: Path, rows: int, percent: float, write_mode: str, insert_only: bool, logs: Path
) -> None:
    shutil.rmtree(project, ignore_errors=True)
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        yaml.safe_dump(
            {
                "name": PROFILE,
                "version": "1.0",
                "config-version": 2,
                "profile": PROFILE,
                "model-paths": ["models"],
            },
            sort_keys=False,
        )
    )
    models = project / "models"
    (models / "upstream.sql").write_text(upstream_sql(rows, percent, write_mode, insert_only))
    (models / "by_changes.sql").write_text(BY_CHANGES_SQL)
    (models / "by_watermark.sql").write_text(BY_WATERMARK_SQL)
    logs.mkdir(parents=True, exist_ok=True)
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file:{logs}"}
    write_profiles(project, PROFILE, ours_target(SCHEMA, conf=conf))  # type: ignore[arg-type]


def records_read(log: Path) -> int:
    """Input records of every finished task in one Spark event log."""
    total = 0
    for line in log.read_text(errors="replace").splitlines():
        if '"SparkListenerTaskEnd"' not in line:
            continue
        event = json.loads(line)
        metrics = (event.get("Task Metrics") or {}).get("Input Metrics") or {}
        total += int(metrics.get("Records Read") or 0)
    return total


def node_seconds(project: Path) -> float | None:
    results = json.loads((project / "target" / "run_results.json").read_text())
    found = [r for r in results["results"] if r["status"] == "success"]
    return float(found[0]["execution_time"]) if found else None


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--rows", type=int, default=10_000_000, help="upstream rows")
    parser.add_argument("--percent", type=float, default=1.0, help="changed per round (%%)")
    parser.add_argument("--write-mode", default="copy-on-write", help="upstream's merge mode")
    parser.add_argument(
        "--insert-only", action="store_true", help="every change an insert (an event table)"
    )
    args = parser.parse_args()
    work = args.work / "changes"
    project, logs = work / "project", work / "eventlogs"
    shutil.rmtree(work, ignore_errors=True)
    write_project(project, args.rows, args.percent, args.write_mode, args.insert_only, logs)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE": "cold"}

    def dbt(*command: str, name: str) -> Sample:
        return run_timed(
            dbt_command(*command, project=project), project, env=env, log=work / f"{name}.log"
        )

    print(f"building the upstream ({args.rows} rows) and both models, untimed", file=sys.stderr)
    for step in (("run", "-s", "upstream"), ("run", "-s", "by_changes", "by_watermark")):
        done = dbt(*step, name="setup")
        if not done.ok:
            sys.exit(f"setup failed: {done.note}")

    node = {"by_changes": Series("by_changes"), "by_watermark": Series("by_watermark")}
    read: dict[str, list[int]] = {"by_changes": [], "by_watermark": []}
    changed = {"round": -1}

    def side(model: str):
        def run(round_no: int) -> Sample:
            if changed["round"] != round_no:
                changed["round"] = round_no
                vars_ = json.dumps({"round": round_no + 1})
                upstream = dbt("run", "-s", "upstream", "--vars", vars_, name="upstream")
                if not upstream.ok:
                    return Sample(0.0, 0.0, False, f"upstream: {upstream.note}")
            before = set(logs.iterdir())
            sample = dbt("run", "-s", model, name=model)
            new_logs = sorted(set(logs.iterdir()) - before)
            seconds = node_seconds(project) if sample.ok else None
            if seconds is None:
                return Sample(0.0, sample.peak_rss_mb, False, sample.note or "no node time")
            read[model].append(sum(records_read(p) for p in new_logs if p.is_file()))
            node[model].samples.append(Sample(seconds, sample.peak_rss_mb, True))
            return sample

        return run

    process = {"by_changes": Series("by_changes"), "by_watermark": Series("by_watermark")}
    alternate(
        args.rounds,
        [
            (process["by_changes"], side("by_changes")),
            (process["by_watermark"], side("by_watermark")),
        ],
    )
    batch = max(int(args.rows * args.percent / 100), 2)
    title = (
        f"lakehouse.changes vs a watermark column: {args.rows} upstream rows, {batch} changed "
        f"per round ({'inserts' if args.insert_only else 'half updates, half inserts'}), "
        f"upstream {args.write_mode}, "
        f"{args.rounds} rounds"
    )
    report(
        title,
        [
            ("node execution time", node["by_changes"], node["by_watermark"], "-"),
            ("process (dbt run)", process["by_changes"], process["by_watermark"], "-"),
        ],
    )
    for model in ("by_changes", "by_watermark"):
        print(f"rows read by {model} per round: {', '.join(f'{n:,}' for n in read[model])}")

    shown = dbt(
        "--quiet",
        "show",
        "--inline",
        "select 'upstream' as t, count(*) as n, sum(hash(id, amount, updated_at)) as s "
        "from {{ ref('upstream') }} union all "
        "select 'by_changes', count(*), sum(hash(id, amount, updated_at)) "
        "from {{ ref('by_changes') }} union all "
        "select 'by_watermark', count(*), sum(hash(id, amount, updated_at)) "
        "from {{ ref('by_watermark') }}",
        "--output",
        "json",
        name="check",
    )
    text = (work / "check.log").read_text()
    if not shown.ok:
        print(f"!!! WARNING: could not check the tables: {shown.note}")
        return
    found = {r["t"]: (r["n"], r["s"]) for r in json.loads(text[text.index("{") :])["show"]}
    same = found["by_changes"] == found["upstream"] == found["by_watermark"]
    print(
        ("check ok" if same else "!!! WARNING: MISMATCH") + f": (rows, sum of row hashes) {found}"
    )


if __name__ == "__main__":
    main()
