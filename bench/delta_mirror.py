"""The Delta mirror's cost: a merge sequence on a dual-format model beside the same model
Iceberg-only.

Two identical incremental `merge` models (unique_key id, partitioned by days(ts)) in one
project on the embedded lakehouse: `dual` with `table_formats: [iceberg, delta]`, `plain`
Iceberg-only. Both are built once (--rows rows), then each round merges a batch of --batch
rows into each (half updates spread over every partition, half new ids), each model in its own
fresh `dbt run --select <model> --vars '{step: N}'` process, the two in turn and which goes
first alternating by round (a process's first statement pays the JVM's warm-up). Per run: the
node's own execution time (target/run_results.json), and for `dual` the mirror's time as the
adapter logs it ("Delta log version V (...) mirrors Iceberg snapshot S: ..., X.XXs" in
logs/dbt.log: reading the snapshot's files from Iceberg metadata and the Delta commit), and
for both the MERGE statement's own time, the Iceberg commit the mirror follows (dbt's
"SQL status: OK in X seconds" after the statement holding `merge into`, in logs/dbt.log).
The node time of `dual` holds the mirror and the checks before the write, so dual - plain is
the whole cost of the second format. At the end, delta-rs reads `dual` and its rows are
checked against Spark's count.

    .venv/bin/python bench/delta_mirror.py --rounds 10
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import common_args, dbt_command, ours_target, run_timed, write_profiles  # noqa: E402

PROFILE = "delta_mirror_bench"
SCHEMA = "bench"
MODEL = """{{{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          partition_by=['days(ts)']{formats}) }}}}
{{% set step = var('step', 0) %}}
{{% if is_incremental() %}}
select id, timestamp_seconds(1704067200 + (id % 30) * 86400) as ts,
       cast(id % 1000 as decimal(12, 2)) + {{{{ step }}}} as amount, {{{{ step }}}} as step
from range(0, {rows}, {stride}) where id % 2 = 0
union all
select id, timestamp_seconds(1704067200 + (id % 30) * 86400) as ts,
       cast(id % 1000 as decimal(12, 2)) as amount, {{{{ step }}}} as step
from range({rows} + {{{{ step }}}} * {half}, {rows} + ({{{{ step }}}} + 1) * {half})
{{% else %}}
select id, timestamp_seconds(1704067200 + (id % 30) * 86400) as ts,
       cast(id % 1000 as decimal(12, 2)) as amount, 0 as step
from range(0, {rows})
{{% endif %}}
"""
_MIRRORED = re.compile(r"\.dual: Delta log version (\d+) \((\w+)\) mirrors .*, ([\d.]+)s")
# One dbt.log entry starts at each line opening with its time and level.
_ENTRY = re.compile(r"^(?:\x1b\[0m)?\d\d:\d\d:\d\d\.\d+ \[\s*\w+\s*\] \[[^\]]*\]: ", re.MULTILINE)
_STATUS = re.compile(r"^SQL status: \w+ in ([\d.]+) seconds")


def write_project(folder: Path, rows: int, batch: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "models").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "delta_mirror_bench", "version": "1.0", "profile": PROFILE})
    )
    half = batch // 2
    # Every second id of a `stride` walk over the table: half a batch of updates.
    stride = max(rows // batch, 1)
    for name, formats in (("dual", ", table_formats=['iceberg', 'delta']"), ("plain", "")):
        sql = MODEL.format(formats=formats, rows=rows, stride=stride, half=half)
        (folder / "models" / f"{name}.sql").write_text(sql)
    write_profiles(folder, PROFILE, ours_target(SCHEMA, threads=1))


def node_seconds(project: Path) -> dict[str, float]:
    results = json.loads((project / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[-1]: float(r["execution_time"]) for r in results["results"]}


def mirror_seconds(log_text: str) -> list[float]:
    return [float(m.group(3)) for m in _MIRRORED.finditer(log_text)]


def merge_seconds(log_text: str) -> list[float]:
    """The time of each MERGE statement the log segment holds, as dbt logged it."""
    starts = [m.end() for m in _ENTRY.finditer(log_text)]
    entries = [log_text[a:b] for a, b in zip(starts, [*starts[1:], len(log_text)], strict=True)]
    found: list[float] = []
    pending = False
    for entry in entries:
        status = _STATUS.match(entry)
        if status and pending:
            found.append(float(status.group(1)))
            pending = False
        elif entry.startswith("On model.") and "merge into" in entry.lower():
            pending = True
    return found


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=10)
    parser.add_argument("--rows", type=int, default=300_000, help="rows built (%(default)s)")
    parser.add_argument("--batch", type=int, default=4_000, help="rows per merge (%(default)s)")
    args = parser.parse_args()
    project = args.work / "delta_mirror"
    write_project(project, args.rows, args.batch)
    built = run_timed(dbt_command("run", project=project), project, log=project / "build.out")
    if not built.ok:
        sys.exit(f"the build failed: {built.note}")

    times: dict[str, list[float]] = {"dual": [], "plain": []}
    mirrors: list[float] = []
    merges: dict[str, list[float]] = {"dual": [], "plain": []}
    log = project / "logs" / "dbt.log"
    for step in range(1, args.rounds + 1):
        order = ("dual", "plain") if step % 2 else ("plain", "dual")
        for model in order:
            offset = log.stat().st_size
            command = dbt_command(
                "run", "--select", model, "--vars", f"{{step: {step}}}", project=project
            )
            sample = run_timed(command, project, log=project / f"round{step}-{model}.out")
            if not sample.ok:
                sys.exit(f"round {step} {model} failed: {sample.note}")
            times[model].append(node_seconds(project)[model])
            with log.open(errors="replace") as handle:
                handle.seek(offset)
                segment = handle.read()
            found = mirror_seconds(segment)
            if len(found) != (model == "dual"):
                sys.exit(f"round {step} {model}: Delta commits in the log: {found}")
            mirrors.extend(found)
            merged = merge_seconds(segment)
            if len(merged) != 1:
                sys.exit(f"round {step} {model}: MERGE statements timed in the log: {merged}")
            merges[model].extend(merged)
        print(
            f"  round {step}/{args.rounds} ({order[0]} first): dual {times['dual'][-1]:.2f}s "
            f"(MERGE {merges['dual'][-1]:.2f}s, mirror {mirrors[-1]:.2f}s), "
            f"plain {times['plain'][-1]:.2f}s (MERGE {merges['plain'][-1]:.2f}s)",
            file=sys.stderr,
        )
    dual, plain = times["dual"], times["plain"]

    from deltalake import DeltaTable

    root = next((project / "lakehouse_warehouse").rglob("dual/_delta_log")).parent
    delta_rows = DeltaTable(str(root)).to_pyarrow_table(columns=["id"]).num_rows
    expected = args.rows + args.rounds * (args.batch // 2)
    status = "equal" if delta_rows == expected else f"MISMATCH (expected {expected})"

    med_dual, med_plain, med_mirror = (statistics.median(x) for x in (dual, plain, mirrors))
    med_merge_dual, med_merge_plain = (statistics.median(merges[m]) for m in ("dual", "plain"))
    # Per commit, each mirror next to the MERGE (the Iceberg commit) it followed.
    per_commit = statistics.median(m / c for m, c in zip(mirrors, merges["dual"], strict=True))
    width = 52
    print(f"\n## Delta mirror: {args.rounds} merges of {args.batch} rows into {args.rows} rows")
    print(f"{'median MERGE statement (Iceberg commit), plain':<{width}} {med_merge_plain:>7.2f}s")
    print(f"{'median MERGE statement (Iceberg commit), dual':<{width}} {med_merge_dual:>7.2f}s")
    print(f"{'median mirror (files read + Delta commit, logged)':<{width}} {med_mirror:>7.2f}s")
    print(f"{'median mirror / its MERGE, per commit':<{width}} {per_commit:>7.2f}x")
    print(f"{'median node time, Iceberg only (plain)':<{width}} {med_plain:>7.2f}s")
    print(f"{'median node time, Iceberg + Delta (dual)':<{width}} {med_dual:>7.2f}s")
    print(f"{'dual / plain node time':<{width}} {med_dual / med_plain:>7.2f}x")
    print(f"{'mirror / Iceberg-only node time':<{width}} {med_mirror / med_plain:>7.2f}x")
    print(f"rows read by delta-rs from dual: {delta_rows} ({status})")


if __name__ == "__main__":
    main()
