"""Merge: an incremental `merge` model's batch into a day-partitioned Iceberg table vs raw MERGE.

Each round builds, untimed and cold (a fresh project folder, so an empty embedded warehouse; a
fresh hadoop-catalog warehouse for the raw side), one target table of --rows rows per batch size,
partitioned by days(event_ts) over 30 days, on each side. Then, per batch size and in turn, a
fresh process applies the batch: dbt-lakehouse as `dbt run --select merge_<m>` (the model's
second run: incremental_strategy='merge', unique_key='id', and is_incremental() selects the
batch, so no --vars change forces dbt to parse the project again), the raw side as one PySpark
session (same Iceberg jar, same SHARED_SPARK_CONF) running `MERGE INTO ... USING (batch) ON
t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`. Half of a batch
updates existing ids spread over all 30 day-partitions, half inserts new ids. Two rows per
batch size: process vs process (wall time with dbt's startup vs PySpark's), and the node's own
execution time (target/run_results.json) vs the MERGE statement's time measured inside the raw
process. Peak RSS is that of each process tree. Goal: ours <= 1.0x raw. The last round's tables
are checked once at the end (row count = rows + inserted, updated rows = half a batch).
--write-mode sets `write.merge.mode` on both sides' tables: copy-on-write (Iceberg's default)
rewrites every data file a batch touches; merge-on-read writes position deletes and new files.
Our MERGE statement carries one planner setting (AQE's shuffled-hash-join threshold, 64 MB);
--raw-hash-join gives it to the raw session too, to show what it is worth on its own.
--engine picks how dbt-lakehouse runs: `cold` (a driver JVM started by every dbt process, as
the raw side's) or `warm` (the default for a local master: every dbt process, the untimed
setup's included, attaches to one engine in an engine home under the work folder, stopped at
the end; the raw side stays a fresh process). A warm row's RSS is the dbt process alone; the
engine's is printed apart.

    .venv/bin/python bench/merge.py --rounds 3
    .venv/bin/python bench/merge.py --rows 200000 --batches 20000,2000 --rounds 1   # quick look
    .venv/bin/python bench/merge.py --rounds 2 --write-mode merge-on-read
    .venv/bin/python bench/merge.py --rounds 3 --batches 1000000 --engine warm
    .venv/bin/python bench/merge.py --rounds 3 --batches 1000000 --native comet

--native comet runs dbt-lakehouse's session with Comet (its scans, joins and shuffles native;
Iceberg's writes stay on the JVM) against the same raw plain-Spark MERGE.
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
    engine_state,
    ours_target,
    report,
    run_timed,
    stop_engines,
    write_profiles,
)
from merge_raw import RAW_SCRIPT, raw_config  # noqa: E402

PROFILE = "merge_bench"
SCHEMA = "bench"
EPOCH = 1704067200  # 2024-01-01 00:00:00 UTC; the target spans 30 days from here
# A row's event time follows from its id alone, so an update stays in its day-partition.
EVENT_TS = f"timestamp_seconds({EPOCH} + (id % 30) * 86400 + id % 86400)"


def human(n: int) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:g}{suffix}"
    return str(n)


def target_sql(rows: int) -> str:
    """The target's rows: ids 0..rows-1 over 30 days."""
    return f"""select id,
       {EVENT_TS} as event_ts,
       cast(id % 1000 as double) / 10 as amount,
       case id % 3 when 0 then 'placed' when 1 then 'paid' else 'shipped' end as status,
       {EVENT_TS} as updated_at
from range(0, {rows})"""


def split(rows: int, batch: int) -> tuple[int, int]:
    """(updated, inserted) rows of a batch."""
    updates = min(batch // 2, rows)
    return updates, batch - updates


def batch_sql(rows: int, batch: int) -> str:
    """Half the batch updates existing ids (one per block of `stride` ids, offset within the
    block so the updates land in every day-partition), half inserts ids from `rows` up."""
    updates, inserts = split(rows, batch)
    stride = max(rows // max(updates, 1), 1)
    return f"""select id,
       {EVENT_TS} as event_ts,
       cast(id % 1000 as double) / 10 + 1 as amount,
       case when id < {rows} then 'updated' else 'inserted' end as status,
       timestamp_seconds({EPOCH} + 40 * 86400) as updated_at
from (
  select id * {stride} + id % {stride} as id from range(0, {updates})
  union all
  select id from range({rows}, {rows + inserts})
) as b"""


def model_sql(rows: int, batch: int, write_mode: str) -> str:
    return (
        "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',\n"
        f"          partition_by=['days(event_ts)'],\n"
        f"          table_properties={{'write.merge.mode': '{write_mode}'}}) }}}}\n"
        "{% if is_incremental() %}\n"
        f"{batch_sql(rows, batch)}\n"
        "{% else %}\n"
        f"{target_sql(rows)}\n"
        "{% endif %}\n"
    )


def ours_project(
    project: Path, rows: int, batches: list[int], write_mode: str, native: str | None
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
    for batch in batches:
        (project / "models" / f"merge_{batch}.sql").write_text(model_sql(rows, batch, write_mode))
    target = ours_target(SCHEMA)
    if native:
        target["engine"] = {"native": native}
    write_profiles(project, PROFILE, target)


def run_node(project: Path, model: str, env: dict[str, str], log: Path) -> tuple[Sample, Sample]:
    """`dbt run --select model` in a fresh process: (the process, the node's own execution time
    from that run's target/run_results.json)."""
    results = project / "target" / "run_results.json"
    results.unlink(missing_ok=True)
    command = dbt_command("run", "--select", model, project=project)
    process = run_timed(command, project, env=env, log=log)
    if not process.ok or not results.exists():
        return process, Sample(
            0.0, process.peak_rss_mb, False, process.note or "no run_results.json"
        )
    result = json.loads(results.read_text())["results"][0]
    ok = result["status"] == "success"
    node = Sample(result["execution_time"], process.peak_rss_mb, ok, "" if ok else result["status"])
    return process, node


# --- checks ------------------------------------------------------------------------------------


def ours_counts(
    project: Path, batches: list[int], log: Path, env: dict[str, str]
) -> dict[str, dict]:
    """Rows, updated rows and data files of each table, through `dbt show` on the project."""
    parts = [
        f"select '{t}' as t, count(*) as n, count_if(status = 'updated') as u, "
        f"(select count(*) from {{{{ ref('{t}') }}}}.files) as f from {{{{ ref('{t}') }}}}"
        for t in (f"merge_{b}" for b in batches)
    ]
    command = dbt_command(
        "--quiet",
        "show",
        "--inline",
        "\nunion all\n".join(parts),
        "--output",
        "json",
        "--limit",
        str(len(batches) + 1),
        project=project,
    )
    sample = run_timed(command, project, env=env, log=log)
    if not sample.ok:
        return {}
    text = log.read_text()
    try:
        shown = json.loads(text[text.index("{") : text.rindex("}") + 1])["show"]
    except (ValueError, KeyError):
        return {}
    return {r["t"]: {"rows": r["n"], "updated": r["u"], "files": r["f"]} for r in shown}


def check(side: str, found: dict[str, dict], rows: int, batches: list[int]) -> None:
    for batch in batches:
        updates, inserts = split(rows, batch)
        got = found.get(f"merge_{batch}")
        want = f"rows {rows + inserts}, updated {updates}"
        if not got:
            print(f"!!! WARNING: {side} merge_{batch}: could not count the table (want {want})")
            continue
        line = (
            f"{side} merge_{batch}: rows {got['rows']}, updated {got['updated']} "
            f"(want {want}), data files {got['files']}"
        )
        if got["rows"] != rows + inserts or got["updated"] != updates:
            print(f"!!! WARNING: MISMATCH {line}")
        else:
            print(f"check ok: {line}")


def main() -> None:
    parser = common_args(__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, default=10_000_000, help="target rows (default %(default)s)"
    )
    parser.add_argument(
        "--batches",
        default="1000000,100000",
        help="batch sizes, comma separated (default %(default)s)",
    )
    parser.add_argument(
        "--write-mode",
        choices=["copy-on-write", "merge-on-read"],
        default="copy-on-write",
        help="write.merge.mode of both sides' tables (default %(default)s, Iceberg's default)",
    )
    parser.add_argument(
        "--raw-hash-join",
        action="store_true",
        help="give the raw session the planner setting dbt-lakehouse's MERGE carries",
    )
    parser.add_argument(
        "--engine",
        choices=["cold", "warm"],
        default="cold",
        help="dbt-lakehouse's engine: a JVM per dbt process, or one warm engine "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--native",
        choices=["comet"],
        help="run dbt-lakehouse's session with native execution (engine: {native: comet}); "
        "the raw side stays plain Spark",
    )
    args = parser.parse_args()
    rows: int = args.rows
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    work: Path = args.work / "merge"
    work.mkdir(parents=True, exist_ok=True)
    project, warehouse = work / "ours", work / "raw-warehouse"
    script, config = work / "raw_merge.py", work / "raw_config.json"
    script.write_text(RAW_SCRIPT)
    raw = raw_config(
        warehouse,
        {f"merge_{b}": target_sql(rows) for b in batches},
        {f"merge_{b}": batch_sql(rows, b) for b in batches},
        args.write_mode,
        args.raw_hash_join,
    )
    config.write_text(json.dumps(raw, indent=1))
    raw_command = [sys.executable, str(script), str(config)]
    engine_home = work / "engines"
    stop_engines(engine_home)  # a run stopped half-way may have left one
    ours_env = {
        **os.environ,
        "LAKEHOUSE_ENGINE": args.engine,
        "LAKEHOUSE_ENGINE_HOME": str(engine_home),
    }
    engine_rss: list[float] = []

    series = {
        b: {
            "ours": Series(f"dbt-lakehouse {human(b)} (process)"),
            "raw": Series(f"raw MERGE {human(b)} (process)"),
            "node": Series(f"dbt-lakehouse {human(b)} (node)"),
            "statement": Series(f"raw MERGE {human(b)} (statement)"),
        }
        for b in batches
    }
    built: dict[str, tuple[int, Sample]] = {}

    def setup(side: str, round_no: int) -> Sample:
        """Untimed: the side's target tables for this round, cold."""
        if side in built and built[side][0] == round_no:
            return built[side][1]
        log = work / f"{side}-setup-{round_no}.log"
        if side == "ours":
            ours_project(project, rows, batches, args.write_mode, args.native)
            sample = run_timed(dbt_command("run", project=project), project, env=ours_env, log=log)
        else:
            shutil.rmtree(warehouse, ignore_errors=True)
            warehouse.mkdir(parents=True)  # the hadoop catalog cannot list a missing folder
            sample = run_timed([*raw_command, "setup"], work, log=log)
        print(
            f"  round {round_no + 1} setup {side}: {sample.seconds:.1f}s "
            f"rss {sample.peak_rss_mb:.0f}MB {'ok' if sample.ok else sample.note}",
            file=sys.stderr,
        )
        built[side] = (round_no, sample)
        return sample

    def failed_setup(side: str, sample: Sample) -> Sample:
        return Sample(0.0, 0.0, False, f"{side} setup failed: {sample.note}")

    def run_ours(batch: int):
        def run(round_no: int) -> Sample:
            ready = setup("ours", round_no)
            if not ready.ok:
                series[batch]["node"].samples.append(failed_setup("ours", ready))
                return failed_setup("ours", ready)
            log = work / f"ours-{batch}-{round_no}.log"
            sample, node = run_node(project, f"merge_{batch}", ours_env, log)
            if args.engine == "warm":
                _, rss = engine_state(engine_home)
                if rss is not None:
                    engine_rss.append(rss)
            series[batch]["node"].samples.append(node)
            return sample

        return run

    def run_raw(batch: int):
        def run(round_no: int) -> Sample:
            ready = setup("raw", round_no)
            if not ready.ok:
                series[batch]["statement"].samples.append(failed_setup("raw", ready))
                return failed_setup("raw", ready)
            out = work / f"raw-{batch}-{round_no}.json"
            out.unlink(missing_ok=True)
            command = [*raw_command, "merge", f"merge_{batch}", str(out)]
            sample = run_timed(command, work, log=work / f"raw-{batch}-{round_no}.log")
            statement = Sample(0.0, sample.peak_rss_mb, False, sample.note or f"no {out.name}")
            if sample.ok and out.exists():
                statement = Sample(json.loads(out.read_text())["seconds"], sample.peak_rss_mb, True)
            series[batch]["statement"].samples.append(statement)
            return sample

        return run

    contenders = []
    for batch in batches:
        contenders += [
            (series[batch]["ours"], run_ours(batch)),
            (series[batch]["raw"], run_raw(batch)),
        ]
    try:
        alternate(args.rounds, contenders)
        # Once, on the last round's tables.
        print(f"\n## checks (last round, target {rows} rows)")
        found = ours_counts(project, batches, work / "ours-check.log", ours_env)
    finally:
        stopped = stop_engines(engine_home)
    check("dbt-lakehouse", found, rows, batches)
    out = work / "raw-check.json"
    out.unlink(missing_ok=True)
    run_timed([*raw_command, "verify", str(out)], work, log=work / "raw-check.log")
    check("raw", json.loads(out.read_text()) if out.exists() else {}, rows, batches)

    table = []
    for batch in batches:
        case = f"merge {human(batch)} into {human(rows)}"
        s = series[batch]
        table += [
            (f"{case} (process)", s["ours"], s["raw"], "<=1.00x"),
            (f"{case} (node vs statement)", s["node"], s["statement"], "<=1.00x"),
        ]
    report(
        f"merge: dbt-lakehouse incremental merge vs raw MERGE, days(event_ts) x 30, "
        f"{args.write_mode}{', raw with the hash-join setting' if args.raw_hash_join else ''}, "
        f"dbt-lakehouse {args.engine}{' with ' + args.native if args.native else ''}, raw cold",
        table,
    )
    if args.engine == "warm":
        print(
            f"warm engine: JVM RSS up to {max(engine_rss, default=0):.0f}MB (not in the "
            f"dbt-lakehouse rows' RSS); {stopped} engine(s) stopped at the end"
        )
    for batch in batches:
        s = series[batch]
        ours_rss, raw_rss = s["ours"].peak_rss_mb, s["raw"].peak_rss_mb
        share = f"{ours_rss / raw_rss:.2f}x" if ours_rss and raw_rss else "-"
        print(
            f"peak RSS {human(batch)} (process tree): dbt-lakehouse "
            f"{ours_rss or 0:.0f}MB, raw {raw_rss or 0:.0f}MB, ratio {share}"
        )


if __name__ == "__main__":
    main()
