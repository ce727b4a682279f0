"""Where a run's time went: the table a live run logs (from dbt's events) and
`dbt-lakehouse report` prints from run_results.json, and its HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from google.protobuf.struct_pb2 import Struct

from dbt.adapters.lakehouse.cli.main import main
from dbt.adapters.lakehouse.report import summary
from dbt.adapters.lakehouse.report.html import render_html
from dbt.adapters.lakehouse.report.summary import from_run_results, heaviest, render

RESULTS = {
    "metadata": {"invocation_id": "inv-1"},
    "results": [
        {"unique_id": "model.p.small", "status": "success", "execution_time": 1.5,
         "adapter_response": {"_message": "INSERT 3", "rows_affected": 3, "spark_jobs": 1,
                              "spark_seconds": 0.4, "bytes_written": 900}},
        {"unique_id": "model.p.<big>", "status": "success", "execution_time": 9.0,
         "adapter_response": {"_message": "MERGE 1,234", "rows_affected": 1234,
                              "spark_jobs": 6, "spark_seconds": 12.5,
                              "bytes_written": 3 * 1048576, "planning_seconds": 5.0,
                              "jobs_seconds": 2.5, "catalog_seconds": 0.3}},
        {"unique_id": "test.p.not_null", "status": "pass", "execution_time": 0.7,
         "adapter_response": {"_message": "OK"}},
    ],
}  # fmt: skip


def test_nodes_by_spark_time_with_rows_and_bytes() -> None:
    ranked = heaviest(from_run_results(RESULTS))
    assert [c.name for c in ranked] == ["<big>", "small", "not_null"]
    text = render(ranked[:2], 3)
    lines = text.splitlines()
    assert lines[0] == "Where the time went (the 2 heaviest of 3 nodes, by Spark task time):"
    # wall, then dbt's own work (the rest of the wall time), planning, jobs, catalog
    big = ["<big>", "9.0", "1.2", "5.0", "2.5", "0.3", "12.5", "6", "-", "1,234", "3.0",
           "MiB", "MERGE", "1,234"]  # fmt: skip
    assert lines[2].split() == big
    # a response without the split (an older run, Spark Connect): dashes, not zeros
    assert lines[3].split()[:11] == [
        "small", "1.5", "-", "-", "-", "-", "0.4", "1", "-", "3", "900"
    ]  # fmt: skip
    assert len(lines) == 4  # native execution was off: nothing said of it


def test_the_page_draws_a_bar_per_node_and_escapes_names() -> None:
    page = render_html(heaviest(from_run_results(RESULTS)), "dbt run inv-1")
    assert page.count("<tr data-node=") == 3
    assert "&lt;big&gt;" in page and "<big>" not in page
    # The widest bar is the largest of all times (12.5 s of Spark time): 100%.
    assert 'class="bar spark" style="width:100.00%"' in page
    assert 'class="bar wall" style="width:72.00%"' in page  # 9.0 of 12.5
    # The wall time's split under them, for the node that has one: planning 5.0 of 12.5.
    assert page.count('class="bar split"') == 1
    assert 'class="planning" style="width:40.00%"' in page


def test_the_report_command_prints_and_writes_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "run_results.json"
    results.write_text(json.dumps(RESULTS))
    page = tmp_path / "report.html"
    assert main(["report", str(results), "--limit", "1", "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "the 1 heaviest of 3 nodes" in out and "<big>" in out
    assert page.read_text().count("<tr data-node=") == 1
    assert main(["report", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err


def _event(name: str, **data: object) -> SimpleNamespace:
    return SimpleNamespace(info=SimpleNamespace(name=name), data=SimpleNamespace(**data))


def test_a_live_run_logs_its_table_once_when_dbt_reports_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logged: list[str] = []
    monkeypatch.setattr(summary.logger, "info", logged.append)
    run = summary.begin_summary("build")
    assert run is not None and summary.begin_summary("show") is None
    run = summary.begin_summary("build")
    assert run is not None
    struct = Struct()
    struct.update({"_message": "CREATE 5", "rows_affected": 5, "spark_jobs": 2,
                   "spark_seconds": 1.25})  # fmt: skip
    finished = _event(
        "NodeFinished",
        node_info=SimpleNamespace(unique_id="model.p.t"),
        run_result=SimpleNamespace(status="success", execution_time=2.0, adapter_response=struct),
    )
    stale = summary.RunSummary()  # an earlier invocation's callback: ignored
    stale.observe(finished)
    run.observe(finished)
    run.observe(_event("FinishedRunningStats"))
    run.observe(_event("FinishedRunningStats"))
    assert len(logged) == 1 and "t  " in logged[0] and "CREATE 5" in logged[0]
    assert stale.costs == {}


def _with_native(operators: int, eligible: int, *fallbacks: str) -> dict:
    return {**RESULTS["results"][1]["adapter_response"],
            "native": {"operators": operators, "eligible": eligible,
                       "fallbacks": list(fallbacks)}}  # fmt: skip


def test_native_shares_and_a_run_that_never_ran_natively() -> None:
    ran = summary.node_cost("model.p.a", "success", 2.0, _with_native(4, 5, "Project: x"))
    fell = summary.node_cost("model.p.b", "success", 1.0, _with_native(0, 3, "Scan: no off-heap"))
    plain = from_run_results(RESULTS)[0]  # a node without Spark jobs' plans: no figure
    text = render([ran, fell, plain])
    assert text.splitlines()[2].split()[8] == "4/5"
    assert text.splitlines()[3].split()[8] == "0/3"
    assert "none of the" not in text  # one node ran natively
    # each node's fallbacks with Comet's reasons, under the table
    assert text.splitlines()[-3:] == [
        "Left on Spark's JVM (Comet's reasons):", "  a: Project: x", "  b: Scan: no off-heap"
    ]  # fmt: skip
    text = render([fell], 3, [fell, plain])
    assert text.splitlines()[-1] == (
        "Native execution was on, but none of the 1 nodes with Spark jobs ran an operator "
        "natively: they all ran on Spark's JVM. Comet said: Scan: no off-heap."
    )
    page = render_html([ran, plain], "run")
    assert '<td class="num" title="Project: x">4/5</td>' in page
    assert page.count('<td class="num">-</td>') == 1  # the node without a native figure
    # judged over the whole run, not the rows shown
    assert "none of the" not in render([fell], 2, [fell, ran])


def test_a_run_with_reuse_says_how_many_nodes_were_reused() -> None:
    reused = summary.node_cost("model.p.a", "reused", 0.1, {"_message": "REUSED", "reused": True})
    built = summary.node_cost(
        "model.p.b", "success", 2.0, {"_message": "CREATE 3", "reused": False}
    )
    plain = from_run_results(RESULTS)[0]
    assert render([reused, built, plain]).splitlines()[-1] == (
        "1 of 3 nodes reused (each one's reuse_reason in run_results.json)"
    )
    assert "reused" not in render([plain])  # reuse off: nothing said
