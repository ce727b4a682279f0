"""Native execution (`engine: {native: comet}`): a dbt project built with Comet gives Spark's
rows, read back by Comet and by Spark's JVM alike, and Comet really ran.

One project, one schema, two targets: `comet` builds it (round 1, then round 2: merges with
deletes into merge-on-read tables, v2 position deletes and v3 deletion vectors, an INSERT
OVERWRITE, a schema change), `jvm` only reads; each is its own warm engine (the native setting
is part of an engine's identity). The models that must fail under ANSI mode fail under Comet
with Spark's error class. Then each engine reads every relation as text (tables, views it
computes itself, a VERSION AS OF, timestamps in two session time zones): both readings are
equal but for the known wrong results (native_project.KNOWN_DIFFERENCES), which must still be
wrong, the tables Comet computed (`_ctas`) hold the JVM's rows of their views, and a few values
are checked against numbers computed here, so the engines cannot agree on a wrong answer. The
Comet engine's plan of an aggregate over a merge-on-read table has Comet's native Iceberg scan
and aggregate in it, the JVM engine's none: the test fails if the plugin is silently off. Each
node's adapter_response says how much of its plans Comet ran, and why not where it fell back.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbt.adapters.lakehouse.engine.jars.lines import COMET_LINES, installed_line
from dbt.adapters.lakehouse.engine.native import platform_problem, this_platform
from functional.lakehouse.engine import native_project as p
from functional.lakehouse.shared.warm import dbt, output

pytestmark = [
    pytest.mark.only_profile("local"),
    pytest.mark.skipif(
        installed_line().spark not in COMET_LINES, reason="Comet runs on the 4.1 line only"
    ),
    pytest.mark.skipif(
        platform_problem(this_platform()) is not None,
        reason=f"Comet cannot run here: {platform_problem(this_platform())}",
    ),
]

ANSI_ERRORS = {
    "ansi_divide": "DIVIDE_BY_ZERO",
    "ansi_cast": "CAST_INVALID_INPUT",
    "ansi_overflow": "NUMERIC_VALUE_OUT_OF_RANGE",
}


def write_project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    for name, sql in p.MODELS.items():
        (root / "models" / name).write_text(sql)
    (root / "macros" / "dump_rows.sql").write_text(p.DUMP_MACRO)
    project = {"name": "native_rows", "version": "1.0", "profile": "native_rows"}
    (root / "dbt_project.yml").write_text(
        yaml.safe_dump({**project, "config-version": 2, "vars": {"round": 1}})
    )
    target = {
        "type": "lakehouse",
        "schema": "native_rows",
        "warehouse": str(root / "warehouse"),
        "threads": 2,
        "spark": {"master": "local[2]", "driver_memory": "2g"},
        # Each round's build must run on Comet to be compared: a reused node would be the
        # JVM's rows read back, not Comet's.
        "reuse": False,
    }
    outputs = {"comet": {**target, "engine": {"native": "comet"}}, "jvm": target}
    (root / "profiles.yml").write_text(
        yaml.safe_dump({"native_rows": {"target": "comet", "outputs": outputs}})
    )
    return root


def build(root: Path, home: Path, round_: int) -> dict[str, Any]:
    done = dbt(root, home, "build", "--target", "comet", "--vars", json.dumps({"round": round_}))
    results = json.loads((root / "target" / "run_results.json").read_text())
    statuses = {r["unique_id"].split(".")[-1]: r for r in results["results"]}
    failed = {name for name, r in statuses.items() if r["status"] != "success"}
    assert failed == (set(ANSI_ERRORS) if round_ == 1 else set()), output(done)
    for name in failed:
        assert ANSI_ERRORS[name] in (statuses[name]["message"] or ""), (name, output(done))
    return statuses


def native_shares_are_reported(statuses: dict[str, Any]) -> None:
    """Each node's adapter_response says how much of its plans Comet ran: a CTAS of an
    aggregate Comet runs, all but its write; and a function it cannot run, with the reason."""
    ran = statuses["distinct_aggs_ctas"]["adapter_response"]["native"]
    assert 2 <= ran["operators"] < ran["eligible"], ran  # the write stays on the JVM
    fell = statuses["jvm_fallback"]["adapter_response"]["native"]
    assert fell["operators"] < ran["operators"] and fell["operators"] < fell["eligible"] - 1, fell
    assert any("java_method is not supported" in r for r in fell["fallbacks"]), fell
    # A view runs no job: no plan of its own to count.
    assert "native" not in statuses["distinct_aggs"]["adapter_response"]


def dump(root: Path, home: Path, target: str) -> tuple[dict[str, list[str]], str]:
    """Every query's rows as the `target` engine reads them, and its plan of EXPLAINED."""
    args = {"tables": list(p.TABLES), "zones": list(p.ZONES), "explained": p.EXPLAINED}
    done = dbt(
        root, home, "run-operation", "dump_rows", "--target", target, "--args", json.dumps(args)
    )
    assert done.returncode == 0, output(done)
    found: dict[str, list[str]] = {}
    plan = ""
    for line in done.stdout.splitlines():
        if " ROWS {" in line:
            entry = json.loads(line.split(" ROWS ", 1)[1])
            found[entry["name"]] = sorted(entry["rows"])
        elif " PLAN {" in line:
            plan = json.loads(line.split(" PLAN ", 1)[1])["plan"]
    return found, plan


def cell(rows: list[str], **where: Any) -> dict[str, Any]:
    [row] = [r for r in map(json.loads, rows) if all(r.get(k) == v for k, v in where.items())]
    return row


def test_comet_gives_the_jvms_rows(engine_home: Path, tmp_path: Path) -> None:
    root = write_project(tmp_path / "project")
    for round_ in (1, 2):
        statuses = build(root, engine_home, round_)
        if round_ == 1:
            native_shares_are_reported(statuses)
    by_comet, comet_plan = dump(root, engine_home, "comet")
    by_jvm, jvm_plan = dump(root, engine_home, "jvm")

    queries = [*p.TABLES, "time_travel", *(f"zone {zone}" for zone in p.ZONES)]
    assert sorted(by_comet) == sorted(by_jvm) == sorted(queries)
    differing = {query for query in queries if by_comet[query] != by_jvm[query]}
    assert all(by_jvm[query] for query in queries)
    assert differing == set(p.KNOWN_DIFFERENCES), {
        query: (by_comet[query], by_jvm[query]) for query in differing
    }
    for view in ("distinct_aggs", "special_reads"):
        assert by_jvm[f"{view}_ctas"] == by_jvm[view], f"{view}: Comet's CTAS differs"

    bigs = [Decimal(f"{i + 1}{'9' * 33}.99") for i in range(30)]
    sums = by_jvm["decimal_sums"]
    assert Decimal(str(cell(sums, g=-1)["big_sum"])) == sum(bigs)
    assert Decimal(str(cell(sums, g=0)["big_sum"])) == sum(bigs[0::3])
    assert cell(sums, g=-1)["swing_sum"] == 0
    distinct = cell(by_jvm["distinct_aggs"], g=-1)
    assert (distinct["da"], distinct["sb"], distinct["dab"], distinct["n"]) == (4, 15, 12, 30)
    # Round 2: ids % 7 == 0 deleted (position deletes, deletion vectors), ids % 5 changed.
    for table in ("mor_v2", "mor_v3"):
        ids = {json.loads(r)["id"] for r in by_jvm[table]}
        assert ids == {i for i in range(35) if i % 7 != 0}, table
    assert len(by_jvm["time_travel"]) == 30
    overwritten = {(r["p"], r["r"]) for r in map(json.loads, by_jvm["overwritten"])}
    assert overwritten == {(0, "round1"), (1, "round2"), (2, "round1")}
    evolved = [json.loads(r) for r in by_jvm["evolved"]]
    assert len(evolved) == 25 and sum("extra" in r for r in evolved) == 15
    reads = [json.loads(r) for r in by_jvm["special_reads"]]
    assert [r["n"] for r in reads if r["q"] == "group_d" and r.get("k") == "NaN"] == [2]
    assert sorted(json.loads(r)["id"] for r in by_jvm["signed_zero_filter"]) == [1, 2, 3, 6]
    assert sorted(json.loads(r)["id"] for r in by_comet["signed_zero_filter"]) == [2, 6]

    assert "CometIcebergNativeScan" in comet_plan, comet_plan
    assert "CometHashAggregate" in comet_plan, comet_plan
    assert "Comet" not in jvm_plan, jvm_plan
