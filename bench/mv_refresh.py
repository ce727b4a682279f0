"""Materialized views: a refresh after a --percent append to a --rows upstream, against a full
rebuild of the same view and against a hand-written incremental model of the same query.

One dbt project on the embedded lakehouse, on the warm engine. `events` is an append-only
incremental model (--rows rows first; each round appends --percent more, ids after every earlier
one) and `dim` a 100-row table. Three query shapes, each as a materialized view (mv_<shape>)
and as the incremental model a dbt user writes by hand for it (inc_<shape>):

- filter: a filter and projections over events (inc_: append where id > max(id));
- agg: group by k (1,000 groups) with sum, count, min and max (inc_: the new rows' aggregate
  merged into the old groups by unique key k: sums and counts added, least/greatest);
- join: events joined to dim (inc_: append where id > max(id)).

Each round appends to events (untimed), then per shape, in turn: the view's refresh (`dbt run
-s mv_<shape>`; what the refresh did, from its log line: append, merge, rebuild or noop), the
hand-written model's run, the full rebuild (`dbt run -s mv_<shape> --full-refresh`), and the
view's run again with nothing moved (a no-op: what a refresh costs before it writes). The
figure is the node's execution time (target/run_results.json); the ratios are against the
full rebuild (goal: the refresh <= 0.2x). At the end every view and model is compared with its
query over the current events (EXCEPT ALL both ways): a mismatch is printed as a warning.

    .venv/bin/python bench/mv_refresh.py --rounds 3
    .venv/bin/python bench/mv_refresh.py --rows 200000 --rounds 1   # quick look
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from changes import node_seconds  # noqa: E402
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

PROFILE = "mv_bench"
SCHEMA = "bench"
SHAPES = ("filter", "agg", "join")
# Each shape's query, also what the check compares the view and the hand-written model with.
QUERIES = {
    "filter": "select id, k, v * 2 as v2 from {{ ref('events') }} where v > 100",
    "agg": (
        "select k, sum(v) as s, count(*) as n, min(v) as mn, max(v) as mx "
        "from {{ ref('events') }} group by k"
    ),
    "join": (
        "select e.id, e.v, d.name from {{ ref('events') }} e "
        "join {{ ref('dim') }} d on e.dim_id = d.id"
    ),
}
HAND_WRITTEN = {
    "filter": """{{ config(materialized='incremental', incremental_strategy='append') }}
select id, k, v * 2 as v2 from {{ ref('events') }} where v > 100
{% if is_incremental() %} and id > (select max(id) from {{ this }}) {% endif %}
""",
    # The view's columns plus last_id, the watermark a hand-written aggregate has to keep.
    "agg": """{{ config(materialized='incremental', unique_key='k') }}
{% if is_incremental() %}
with new as (
  select k, sum(v) as s, count(*) as n, min(v) as mn, max(v) as mx, max(id) as last_id
  from {{ ref('events') }} where id > (select max(last_id) from {{ this }}) group by k
)
select new.k, coalesce(old.s, 0) + new.s as s, coalesce(old.n, 0) + new.n as n,
       least(old.mn, new.mn) as mn, greatest(old.mx, new.mx) as mx,
       greatest(old.last_id, new.last_id) as last_id
from new left join {{ this }} old on old.k = new.k
{% else %}
select k, sum(v) as s, count(*) as n, min(v) as mn, max(v) as mx, max(id) as last_id
from {{ ref('events') }} group by k
{% endif %}
""",
    "join": """{{ config(materialized='incremental', incremental_strategy='append') }}
select e.id, e.v, d.name from {{ ref('events') }} e join {{ ref('dim') }} d on e.dim_id = d.id
{% if is_incremental() %} where e.id > (select max(id) from {{ this }}) {% endif %}
""",
}


def events_sql(rows: int, batch: int) -> str:
    # v a bigint: a sum over float or double is never merged (its rounding depends on the order
    # of additions), so the aggregate shape would always rebuild.
    columns = "id, id % 1000 as k, id % 997 as v, id % 100 as dim_id"
    return f"""{{{{ config(materialized='incremental', incremental_strategy='append') }}}}
{{% set r = var('round', 0) | int %}}
{{% if is_incremental() %}}
select {columns} from range({rows} + ({{{{ r }}}} - 1) * {batch}, {rows} + {{{{ r }}}} * {batch})
{{% else %}}
select {columns} from range(0, {rows})
{{% endif %}}
"""


def write_project(project: Path, rows: int, batch: int) -> None:
    shutil.rmtree(project, ignore_errors=True)
    models = project / "models"
    models.mkdir(parents=True)
    settings = {
        "name": PROFILE,
        "version": "1.0",
        "config-version": 2,
        "profile": PROFILE,
        "model-paths": ["models"],
    }
    (project / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (models / "events.sql").write_text(events_sql(rows, batch))
    (models / "dim.sql").write_text(
        "{{ config(materialized='table') }}\nselect id, concat('d', id) as name from range(100)\n"
    )
    for shape in SHAPES:
        (models / f"mv_{shape}.sql").write_text(
            "{{ config(materialized='materialized_view') }}\n" + QUERIES[shape] + "\n"
        )
        (models / f"inc_{shape}.sql").write_text(HAND_WRITTEN[shape])
    write_profiles(project, PROFILE, ours_target(SCHEMA))


def refresh_action(project: Path, model: str) -> str:
    """What the model's last refresh did, from its line in the project's dbt.log (debug level)."""
    pattern = re.compile(rf"materialized view \S+\.{model}(?: is fresh|: (\w+) \()")
    found = pattern.findall((project / "logs" / "dbt.log").read_text(errors="replace"))
    return (found[-1] or "noop") if found else "?"


def check_sql(shapes: list[str]) -> str:
    """Rows of each view and model not in its query's, and the other way round."""
    parts = []
    for shape in shapes:
        columns = "k, s, n, mn, mx" if shape == "agg" else "*"
        for model in (f"mv_{shape}", f"inc_{shape}"):
            mine = f"select {columns} from {{{{ ref('{model}') }}}}"
            parts.append(
                f"select '{model}' as m, "
                f"(select count(*) from ({mine} except all {QUERIES[shape]})) + "
                f"(select count(*) from ({QUERIES[shape]} except all {mine})) as wrong"
            )
    return " union all ".join(parts)


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=3)
    parser.add_argument("--rows", type=int, default=10_000_000, help="upstream rows")
    parser.add_argument("--percent", type=float, default=1.0, help="appended per round (%%)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="which shapes (comma list)")
    args = parser.parse_args()
    shapes = [shape for shape in SHAPES if shape in args.shapes.split(",")]
    work = args.work / "mv_refresh"
    project = work / "project"
    batch = max(int(args.rows * args.percent / 100), 1)
    shutil.rmtree(work, ignore_errors=True)
    write_project(project, args.rows, batch)
    env = {**os.environ, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(work / "engines")}

    def dbt(*command: str, name: str) -> Sample:
        return run_timed(
            dbt_command(*command, project=project), project, env=env, log=work / f"{name}.log"
        )

    print(f"building events ({args.rows} rows), dim and every model, untimed", file=sys.stderr)
    done = dbt(
        "run",
        "-s",
        "events",
        "dim",
        *(f"+{k}_{s}" for s in shapes for k in ("mv", "inc")),
        name="setup",
    )
    if not done.ok:
        sys.exit(f"setup failed: {done.note}")

    node = {
        f"{kind}_{shape}": Series(f"{kind} {shape}")
        for kind in ("mv", "inc", "full", "noop")
        for shape in SHAPES
    }
    actions: dict[str, list[str]] = {shape: [] for shape in SHAPES}
    appended = {"round": -1}

    def timed(model: str, *extra: str, key: str, shape: str | None = None):
        def run(round_no: int) -> Sample:
            if appended["round"] != round_no:
                appended["round"] = round_no
                vars_ = json.dumps({"round": round_no + 1})
                upstream = dbt("run", "-s", "events", "--vars", vars_, name="events")
                if not upstream.ok:
                    return Sample(0.0, 0.0, False, f"append: {upstream.note}")
            sample = dbt("run", "-s", model, *extra, name=key)
            seconds = node_seconds(project) if sample.ok else None
            if shape is not None:
                actions[shape].append(refresh_action(project, model))
            if seconds is None:
                return Sample(0.0, sample.peak_rss_mb, False, sample.note or "no node time")
            node[key].samples.append(Sample(seconds, sample.peak_rss_mb, True))
            return sample

        return run

    contenders = []
    for shape in shapes:
        contenders += [
            (Series(f"refresh {shape}"), timed(f"mv_{shape}", key=f"mv_{shape}", shape=shape)),
            (Series(f"hand-written {shape}"), timed(f"inc_{shape}", key=f"inc_{shape}")),
            (
                Series(f"rebuild {shape}"),
                timed(f"mv_{shape}", "--full-refresh", key=f"full_{shape}"),
            ),
            # Nothing moved since the rebuild: what a refresh costs before any write.
            (Series(f"no-op {shape}"), timed(f"mv_{shape}", key=f"noop_{shape}", shape=shape)),
        ]
    alternate(args.rounds, contenders)
    title = (
        f"materialized view refresh after a {args.percent}% append ({batch} rows) to "
        f"{args.rows} rows, node execution time, {args.rounds} rounds, warm engine"
    )
    rows = []
    for shape in shapes:
        rows.append(
            (
                f"{shape}: refresh vs full rebuild",
                node[f"mv_{shape}"],
                node[f"full_{shape}"],
                "<= 0.2x",
            )
        )
        rows.append(
            (f"{shape}: refresh vs hand-written", node[f"mv_{shape}"], node[f"inc_{shape}"], "-")
        )
        rows.append(
            (f"{shape}: no-op vs full rebuild", node[f"noop_{shape}"], node[f"full_{shape}"], "-")
        )
    report(title, rows)
    for shape in shapes:
        # Per round: the refresh, then the run after the rebuild (a no-op).
        print(f"what each run of mv_{shape} did: {', '.join(actions[shape])}")

    shown = dbt(
        "--quiet",
        "show",
        "--inline",
        check_sql(shapes),
        "--output",
        "json",
        "--limit",
        "100",
        name="check",
    )
    text = (work / "check.log").read_text()
    if not shown.ok:
        print(f"!!! WARNING: could not check the tables: {shown.note}")
        return
    wrong = {r["m"]: r["wrong"] for r in json.loads(text[text.index("{") :])["show"]}
    bad = {model: n for model, n in wrong.items() if n}
    print(
        "check ok: every view and model holds its query's rows"
        if not bad
        else f"!!! WARNING: MISMATCH (rows wrong per model): {bad}"
    )


if __name__ == "__main__":
    main()
