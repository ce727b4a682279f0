"""Running a step's build and checking it, for the reuse property test (test_reuse_history.py).

- `build` runs `dbt build` in this process (the shared Spark session), `build_concurrently` two
  `dbt build` processes at once (each attaches to the test process's warm engine), both giving
  each node's outcome: status, reused or not, a test's failures, and the compiled SQL.
- `invariants` is one query that evaluates, over the current inputs, what a build from scratch
  would give and counts the differences: each table and incremental model against its compiled
  query (no model has an incremental branch), each view against its query, the seed against its
  CSV, the snapshot's current rows against the source's and its closed versions against those
  the history made, and each data test's failing rows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.tests.util import run_dbt

from functional.lakehouse.reuse.reuse_history_model import Node
from functional.lakehouse.reuse.reuse_history_project import (
    COMPARED_COLUMNS,
    NONDETERMINISTIC,
    SOURCE_COLUMNS,
    values,
)

BUILT = ("success", "pass", "warn", "fail")
SNAPSHOT_COLUMNS = SOURCE_COLUMNS


@dataclass(frozen=True)
class Outcome:
    uid: str
    name: str
    status: str
    reused: bool
    failures: int | None
    compiled: str | None
    reason: str | None


def _outcome(
    uid: str, name: str, status: str, response: dict, failures: Any, compiled: Any
) -> Outcome:
    response = response or {}
    reused = status == "reused" or response.get("reused") is True
    return Outcome(uid, name, status, reused, failures, compiled, response.get("reuse_reason"))


def build(vars_json: str, full_refresh: bool) -> dict[str, Outcome]:
    args = ["build", "--vars", vars_json, *(["--full-refresh"] if full_refresh else [])]
    results = run_dbt(args, expect_pass=None)  # each node is judged on its own
    return {
        r.node.unique_id: _outcome(
            r.node.unique_id,
            r.node.name,
            str(r.status),
            r.adapter_response,
            r.failures,
            getattr(r.node, "compiled_code", None),
        )
        for r in results.results
    }


def build_concurrently(project: Any, vars_json: str, step: int) -> list[dict[str, Outcome]]:
    """Two `dbt build` processes at once, each with its own target and log folders."""
    dbt = str(Path(sys.executable).with_name("dbt"))
    workdirs = [Path(project.project_root) / "concurrent" / f"{step}_{i}" for i in (0, 1)]
    processes = []
    parsed = Path(project.project_root, "target", "partial_parse.msgpack")
    for workdir in workdirs:
        (workdir / "target").mkdir(parents=True)
        if parsed.exists():  # the last build's parse: each process then parses what changed
            shutil.copy(parsed, workdir / "target")
        command = [
            dbt, "build", "--vars", vars_json,
            "--project-dir", str(project.project_root),
            "--profiles-dir", str(project.profiles_dir),
            "--target-path", str(workdir / "target"),
            "--log-path", str(workdir / "logs"),
        ]  # fmt: skip
        processes.append(
            subprocess.Popen(
                command,
                cwd=project.project_root,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = []
    try:
        for process in processes:
            outputs.append(process.communicate(timeout=900)[0])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    found = []
    for workdir, output in zip(workdirs, outputs, strict=True):
        path = workdir / "target" / "run_results.json"
        assert path.exists(), f"no run_results.json from a concurrent build:\n{output[-3000:]}"
        results = json.loads(path.read_text())["results"]
        found.append(
            {
                r["unique_id"]: _outcome(
                    r["unique_id"],
                    r["unique_id"],
                    r["status"],
                    r.get("adapter_response") or {},
                    r.get("failures"),
                    r.get("compiled_code"),
                )
                for r in results
            }
        )
    return found


def dag(manifest: dict) -> list[Node]:
    """The nodes of the built project and what each reads, from dbt's manifest."""
    nodes = [Node(uid, s["name"], "source") for uid, s in manifest["sources"].items()]
    for uid, n in manifest["nodes"].items():
        kind = n["resource_type"]
        if kind == "model":
            kind = n["config"]["materialized"]
        elif kind not in ("seed", "snapshot", "test"):
            continue
        parents = tuple(sorted(p for p in n["depends_on"].get("nodes", [])))
        nodes.append(Node(uid, n["name"], kind, parents, n["name"] != NONDETERMINISTIC))
    return nodes


def data_versions(run_sql, nodes: list[Node], relation, source_columns: int) -> dict[str, tuple]:
    """Each data node's state now: (its `main` snapshot id, its columns' version). Only the
    source's columns change without a snapshot (an ALTER), so only its version is counted."""
    data = [n for n in nodes if n.kind in ("source", "seed", "table", "incremental", "snapshot")]
    query = " union all ".join(
        f"select '{n.uid}' as uid, snapshot_id from {relation(n.name)}.refs where name = 'main'"
        for n in data
    )
    found = {str(r[0]): r[1] for r in run_sql(query, fetch="all")}
    return {n.uid: (found.get(n.uid), source_columns if n.kind == "source" else 0) for n in data}


def _difference(check: str, found: str, expected: str) -> str:
    return (
        f"select '{check}' as name, count(*) as n from ("
        f"(select * from ({found}) except all select * from ({expected}))"
        f" union all (select * from ({expected}) except all select * from ({found})))"
    )


def invariants(
    run_sql,
    nodes: list[Node],
    outcomes: dict[str, Outcome],
    relation,
    seed_rows: dict[str, tuple[str, int]],
    closed: list[tuple],
) -> list[str]:
    """What differs from a build from scratch: each differing relation with its count of
    differing rows, each test whose outcome is not its query's count of failing rows."""
    parts = []
    tests = {}
    for node in nodes:
        rel = relation(node.name)
        compiled = outcomes[node.uid].compiled if node.uid in outcomes else None
        if node.kind in ("table", "view", "incremental"):
            cols = COMPARED_COLUMNS.get(node.name, "*")
            query = f"select {cols} from (\n{compiled}\n)"
            parts.append(_difference(node.name, f"select {cols} from {rel}", query))
        elif node.kind == "seed":
            rows = values([(k, label, w) for k, (label, w) in seed_rows.items()])
            parts.append(
                _difference(node.name, f"select kind, label, weight from {rel}", f"values {rows}")
            )
        elif node.kind == "snapshot":
            source = relation("events")
            now = f"select {SNAPSHOT_COLUMNS} from {rel} where dbt_valid_to is null"
            parts.append(
                _difference(f"{node.name} current", now, f"select {SOURCE_COLUMNS} from {source}")
            )
            past = f"select {SNAPSHOT_COLUMNS} from {rel} where dbt_valid_to is not null"
            made = f"values {values(closed)}" if closed else f"{now} and false"
            parts.append(_difference(f"{node.name} closed", past, made))
        elif node.kind == "test":
            tests[node.uid] = node
            parts.append(f"select '{node.uid}' as name, count(*) as n from (\n{compiled}\n)")
    counted = {str(r[0]): int(r[1]) for r in run_sql(" union all ".join(parts), fetch="all")}
    wrong = []
    for name, n in counted.items():
        if name in tests:
            outcome = outcomes[name]
            status = "pass" if n == 0 else "warn"
            if outcome.failures != n or (not outcome.reused and outcome.status != status):
                wrong.append(
                    f"test {tests[name].name}: {outcome.status} with {outcome.failures} failures,"
                    f" its query finds {n} failing rows now"
                )
        elif n:
            wrong.append(f"{name}: {n} rows differ from a build from scratch")
    return wrong


def source_rows(run_sql, events: str) -> dict[int, tuple]:
    return {
        int(r[0]): tuple(r) for r in run_sql(f"select {SOURCE_COLUMNS} from {events}", fetch="all")
    }


def closed_versions(before: dict[int, tuple], now: dict[int, tuple]) -> list[tuple]:
    """The versions a snapshot run closes: every key whose row changed or went away."""
    return [row for key, row in before.items() if now.get(key) != row]
