"""Which operators of a query's physical plan Comet runs and which stay on Spark's JVM, and the
reasons Comet gives: for bench/tpch_native.py and bench/tpcds_native.py (`--fallbacks`).

After a native side's `dbt run`, one `dbt run-operation` on that project EXPLAINs each query
model's compiled SQL (target/compiled) on its own target, so the plans are those of the tables the
run built. The queries go into the macro's file rather than its arguments: a command line's single
argument is capped at 128 KiB, and TPC-DS's 99 queries are more. Comet's reasons come from its
extended explain provider (`org.apache.comet.ExtendedExplainInfo`, Spark 4's
`spark.sql.extendedExplainProviders`), which marks each operator it left to Spark `[COMET: why]`.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

from harness import cold_env, dbt_command

MACRO = """{%% macro explain_queries() %%}
{#- Written by bench/comet_plans.py: EXPLAIN each query on this target; one log line a plan. -#}
{%% set text %%}{%% raw %%}%s{%% endraw %%}{%% endset %%}
{%% do run_query("set spark.sql.extendedExplainProviders=org.apache.comet.ExtendedExplainInfo") %%}
{%% do run_query("set spark.sql.adaptive.enabled=%s") %%}
{%% for name, sql in fromjson(text).items() %%}
  {%% set plan = run_query("explain extended " ~ sql).columns[0].values()[0] %%}
  {%% do log("PLANJSON " ~ tojson({"name": name, "plan": plan}), info=True) %%}
{%% endfor %%}
{%% endmacro %%}
"""

# Nodes that do no work of their own: AQE's and codegen's wrappers, the row/column transitions,
# reuse markers and subquery holders (the subquery's own operators are counted where shown).
WRAPPERS = re.compile(
    r"^(AdaptiveSparkPlan|InputAdapter|WholeStageCodegen|ColumnarToRow|RowToColumnar"
    r"|CometColumnarToRow|CometNativeColumnarToRow|CometSparkRowToColumnar"
    r"|CometSparkColumnarToColumnar|AQEShuffleRead|\w*QueryStage|Reused\w*|Subquery\w*)$"
)
_NODE = re.compile(r"^[\s:|+\-]*(?:\*\(\d+\)\s*)?([A-Z]\w*)")
_REASON = re.compile(r"^[\s:|+\-]*(?:\*\(\d+\)\s*)?([A-Z]\w*).*?\[COMET: (.*)\]\s*$")


def explain_compiled(project: Path, folder: str, adaptive: bool = False) -> dict[str, str]:
    """{model: EXPLAIN EXTENDED text} for every compiled model of `folder`.

    AQE off (unless `adaptive`): an adaptive plan that has not run shows Spark's initial plan,
    before the columnar rules where Comet replaces operators, so it would show no Comet at all.
    """
    compiled = sorted(project.glob(f"target/compiled/*/models/{folder}/*.sql"))
    queries = {path.stem: path.read_text().strip().rstrip(";") for path in compiled}
    (project / "macros").mkdir(exist_ok=True)
    (project / "macros" / "explain_queries.sql").write_text(
        MACRO % (json.dumps(queries), str(adaptive).lower())
    )
    done = subprocess.run(
        dbt_command("run-operation", "explain_queries", project=project),
        cwd=project,
        env=cold_env(),
        capture_output=True,
        text=True,
    )
    plans = {}
    for line in done.stdout.splitlines():
        if "PLANJSON " in line:
            found = json.loads(line.split("PLANJSON ", 1)[1])
            plans[found["name"]] = found["plan"]
    (project / "plans.json").write_text(json.dumps(plans, indent=1))  # to read them whole
    if done.returncode != 0 or len(plans) != len(queries):
        (project / "explain.log").write_text(done.stdout + done.stderr)
        print(f"  run-operation: exit {done.returncode}, {len(plans)} of {len(queries)} plans; "
              f"see {project / 'explain.log'}")  # fmt: skip
    return plans


def operators(plan: str) -> tuple[list[str], dict[str, set[str]]]:
    """The physical plan's operators (wrappers left out) and, per operator Comet left to Spark,
    the reasons its extended explain gives."""
    physical = plan.split("== Physical Plan ==", 1)[-1]
    tree, _, extended = physical.partition("\n\n")
    names = [m[1] for m in map(_NODE.match, tree.strip().splitlines()) if m]
    reasons: dict[str, set[str]] = {}
    for line in extended.splitlines():
        match = _REASON.match(line)
        if match and not WRAPPERS.match(match[1]):
            # One bracket may hold several reasons, comma-separated by Comet.
            reasons.setdefault(match[1], set()).update(r.strip() for r in match[2].split("],"))
    return [n for n in names if not WRAPPERS.match(n)], reasons


def print_fallbacks(plans: dict[str, str]) -> None:
    """Per query: "native N of M operators; on the JVM: ...", then Comet's reasons."""
    total_native = total = 0
    for name, plan in sorted(plans.items()):
        names, reasons = operators(plan)
        native = sum(1 for n in names if n.startswith("Comet"))
        total_native, total = total_native + native, total + len(names)
        jvm = Counter(n for n in names if not n.startswith("Comet"))
        shown = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in sorted(jvm.items())) or "none"
        print(f"  {name}: native {native} of {len(names)} operators; on the JVM: {shown}")
        for operator, why in sorted(reasons.items()):
            print(f"      {operator}: {'; '.join(sorted(why))}")
    print(f"  all: native {total_native} of {total} operators")
