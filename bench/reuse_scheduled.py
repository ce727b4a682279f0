"""Reused tables on a scheduled run's shape: 100 `table` models over 10 source tables, one
source appended, against the same build with reuse off.

One dbt project on the embedded lakehouse and the warm engine. Ten sources `src_0..9` (--rows
rows each) are Iceberg tables written by plain SQL (a `run-operation`, as another engine would
write them); 100 table models read them: 50 aggregate or filter one source each (5 a source),
50 read one of those (so each source has 10 models downstream). Each round, in turn:

1. `dbt build` with LAKEHOUSE_REUSE=off (the full build, every model; no record written);
2. after an append to every source, the build with reuse on (nothing can be reused: what reuse
   costs a build, goal <= 1.03x the full build; it records every model);
3. after an append to src_3 only, the build with reuse on (only src_3's 10 models should be
   built: goal Spark task seconds <= 0.15x the full build's, from each node's `spark_seconds`).

Each is a fresh `dbt` process; the figure is its wall time, and the task seconds summed over the
nodes of target/run_results.json. At the end every model is compared with its query (EXCEPT ALL
both ways) and the models built in step 3 are named: anything else is printed as a warning.

    .venv/bin/python bench/reuse_scheduled.py --rounds 3
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

PROFILE = "reuse_bench"
SCHEMA = "bench"
SOURCES = 10
APPENDED = 3  # the source step 3 appends to

APPEND_MACRO = """
{% macro append_rows(sources, rows) %}
  {% for i in sources %}
    {% call statement('append_' ~ i) %}
      insert into {{ target.database }}.{{ target.schema }}.src_{{ i }}
      select id, id % 97 as k, id % 1013 as v from range({{ rows }})
    {% endcall %}
  {% endfor %}
{% endmacro %}

{% macro create_sources(sources, rows) %}
  {% set namespace = api.Relation.create(database=target.database, schema=target.schema) %}
  {% do adapter.create_schema(namespace) %}
  {% for i in sources %}
    {% call statement('create_' ~ i) %}
      create or replace table {{ target.database }}.{{ target.schema }}.src_{{ i }}
      using iceberg as select id, id % 97 as k, id % 1013 as v from range({{ rows }})
    {% endcall %}
  {% endfor %}
{% endmacro %}
"""


def first_layer(j: int) -> str:
    source = f"{{{{ source('raw', 'src_{j % SOURCES}') }}}}"
    if j % 2:
        return f"select k, sum(v) as s, count(*) as n from {source} group by k"
    return f"select id, k, v * {j} as w from {source} where v > {j}"


def second_layer(j: int) -> str:
    upstream = f"{{{{ ref('m_{j - 50}') }}}}"
    return f"select k, count(*) as c from {upstream} group by k"


def model_query(j: int) -> str:
    return first_layer(j) if j < 50 else second_layer(j)


def write_project(project: Path) -> None:
    shutil.rmtree(project, ignore_errors=True)
    (project / "models").mkdir(parents=True)
    (project / "macros").mkdir()
    settings = {"name": PROFILE, "version": "1.0", "config-version": 2, "profile": PROFILE,
                "model-paths": ["models"], "macro-paths": ["macros"],
                "models": {PROFILE: {"+materialized": "table"}}}  # fmt: skip
    (project / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (project / "macros" / "bench.sql").write_text(APPEND_MACRO)
    tables = [{"name": f"src_{i}"} for i in range(SOURCES)]
    sources = {"version": 2, "sources": [{"name": "raw", "schema": SCHEMA, "tables": tables}]}
    (project / "models" / "sources.yml").write_text(yaml.safe_dump(sources))
    for j in range(100):
        (project / "models" / f"m_{j}.sql").write_text(model_query(j) + "\n")
    write_profiles(project, PROFILE, {**ours_target(SCHEMA), "reuse": True})


def task_seconds(project: Path) -> tuple[float, list[str]]:
    """Spark task seconds over the run's nodes, and the models it built (not reused)."""
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    seconds = sum(float(r["adapter_response"].get("spark_seconds") or 0) for r in results)
    built = [r["unique_id"].split(".")[-1] for r in results if r["status"] != "reused"]
    return seconds, sorted(built, key=lambda name: int(name.split("_")[1]))


def check_sql() -> str:
    """Rows of any model not in its query's, and the other way round, summed: 0 when all agree."""
    parts = []
    for j in range(100):
        mine = f"select * from {{{{ ref('m_{j}') }}}}"
        query = model_query(j)
        parts.append(
            f"select (select count(*) from ({mine} except all {query})) + "
            f"(select count(*) from ({query} except all {mine})) as wrong"
        )
    return "select sum(wrong) as wrong_total from (" + " union all ".join(parts) + ")"


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--rows", type=int, default=200_000, help="rows per source")
    args = parser.parse_args()
    work = args.work / "reuse_scheduled"
    project = work / "project"
    shutil.rmtree(work, ignore_errors=True)
    write_project(project)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(work / "engines")}

    def dbt(*command: str, name: str, reuse: str = "on") -> Sample:
        return run_timed(
            dbt_command(*command, project=project),
            project,
            env={**env, "LAKEHOUSE_REUSE": reuse},
            log=work / f"{name}.log",
        )

    def operation(macro: str, sources: list[int]) -> None:
        given = json.dumps({"sources": sources, "rows": args.rows // 100})
        found = dbt("run-operation", macro, "--args", given, name=macro)
        if not found.ok:
            sys.exit(f"{macro} failed: {found.note}")

    print(f"creating {SOURCES} sources of {args.rows} rows, untimed", file=sys.stderr)
    given = json.dumps({"sources": list(range(SOURCES)), "rows": args.rows})
    found = dbt("run-operation", "create_sources", "--args", given, name="setup")
    if not found.ok:
        sys.exit(f"setup failed: {found.note}")
    full, fresh, scheduled = Series("reuse off"), Series("reuse on, all moved"), Series("one moved")
    tasks: dict[str, list[float]] = {"full": [], "fresh": [], "scheduled": []}
    built_last: list[str] = []

    def step(series_key: str, reuse: str, appended: list[int]):
        def run(round_no: int) -> Sample:
            if appended:
                operation("append_rows", appended)
            sample = dbt("build", name=f"{series_key}-{round_no}", reuse=reuse)
            seconds, built = task_seconds(project)
            tasks[series_key].append(seconds)
            built_last[:] = built
            return sample

        return run

    alternate(args.rounds, [
        (full, step("full", "off", [])),
        (fresh, step("fresh", "on", list(range(SOURCES)))),
        (scheduled, step("scheduled", "on", [APPENDED])),
    ])  # fmt: skip
    report(
        f"reused tables, 100 models over {SOURCES} sources of {args.rows:,} rows (warm engine)",
        [
            ("reuse on, nothing reusable vs off", fresh, full, "<= 1.03x"),
            ("one source appended vs reuse off", scheduled, full, "report"),
        ],
    )
    med = {k: sorted(v)[len(v) // 2] for k, v in tasks.items() if v}
    print(f"\nSpark task seconds (median): full {med['full']:.1f}, nothing reusable "
          f"{med['fresh']:.1f}, one source appended {med['scheduled']:.1f}: "
          f"{med['scheduled'] / med['full']:.3f}x the full build (goal <= 0.15x)")  # fmt: skip
    # The first layer's models of that source, and the second layer's over them.
    expected = [f"m_{j}" for j in range(100) if j % SOURCES == APPENDED]
    print(f"built after one append: {len(built_last)} of 100 ({', '.join(built_last)})")
    if built_last != expected:
        print(f"WARNING: expected exactly {', '.join(expected)}", file=sys.stderr)
    (project / "analyses").mkdir(exist_ok=True)
    (project / "analyses" / "check.sql").write_text(check_sql())
    shown = dbt("show", "-s", "check", "--output", "json", name="check")
    text = (work / "check.log").read_text(errors="replace")
    ok = shown.ok and '"wrong_total": 0' in text
    print("check ok" if ok else f"WARNING: check failed, see {work / 'check.log'}")


if __name__ == "__main__":
    main()
