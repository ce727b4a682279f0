"""Two separate `dbt run` processes merge into one incremental table at the same time.

Each process has its own SparkSession and commits to the shared catalog (the REST catalog on
`s3_rest`, the embedded SQLite catalog on `local`). The writers touch disjoint keys, so the
right final table is known exactly: whichever commits second must either merge on top of the
first (the adapter retries a lost commit race with the table re-read) or fail with the commit
conflict message and change nothing. Nothing may be lost or doubled.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt

TARGET_SQL = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
{% set writer = var('writer', 'base') %}
{% if writer == 'base' %}
select id, 'base' as writer from range(1, 11)
{% elif writer == 'A' %}
select id, 'A' as writer from range(1, 6)
union all select id, 'A' as writer from range(101, 111)
{% else %}
select id, 'B' as writer from range(6, 11)
union all select id, 'B' as writer from range(201, 211)
{% endif %}
"""

BASE = {i: "base" for i in range(1, 11)}
# What each writer intends: updates to its half of the base keys, plus ten new keys.
INTENDED = {
    "A": {**{i: "A" for i in range(1, 6)}, **{i: "A" for i in range(101, 111)}},
    "B": {**{i: "B" for i in range(6, 11)}, **{i: "B" for i in range(201, 211)}},
}
CONFLICT_MESSAGE = "Commit conflict on table"


def dbt_executable() -> str:
    return str(Path(sys.executable).with_name("dbt"))


def start_writer(project: Any, writer: str, workdir: Path) -> subprocess.Popen[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    command = [
        dbt_executable(),
        "run",
        "--select",
        "target_tbl",
        "--vars",
        f"{{writer: {writer}}}",
        "--project-dir",
        str(project.project_root),
        "--profiles-dir",
        str(project.profiles_dir),
        # Separate target and log folders: two dbt processes must not share manifest files.
        "--target-path",
        str(workdir / "target"),
        "--log-path",
        str(workdir / "logs"),
    ]
    return subprocess.Popen(
        command,
        cwd=project.project_root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


class TestTwoProcessesMergeConcurrently:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"target_tbl.sql": TARGET_SQL}

    def test_nothing_lost_or_doubled(self, project: Any, request: pytest.FixtureRequest) -> None:
        run_dbt(["run", "--vars", "{writer: base}"])
        relation = f"`{project.database}`.`{project.test_schema}`.`target_tbl`"
        rest = None
        if request.config.getoption("--profile") == "s3_rest":
            rest = request.getfixturevalue("rest_catalog")
        conflicts_before = rest.status_counts().get(409, 0) if rest else 0

        workdirs = {w: Path(project.project_root) / f"writer_{w}" for w in ("A", "B")}
        started = time.monotonic()
        processes = {w: start_writer(project, w, workdirs[w]) for w in ("A", "B")}
        outputs: dict[str, str] = {}
        for writer, process in processes.items():
            try:
                outputs[writer], _ = process.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                for other in processes.values():
                    other.kill()
                raise
        elapsed = time.monotonic() - started
        codes = {w: p.returncode for w, p in processes.items()}
        retries = {
            w: (workdirs[w] / "logs" / "dbt.log")
            .read_text(errors="replace")
            .count("commit conflict, retry")
            for w in ("A", "B")
        }

        rows = project.run_sql(f"select id, writer from {relation}", fetch="all")
        final = {int(r[0]): r[1] for r in rows}
        succeeded = [w for w in ("A", "B") if codes[w] == 0]
        expected = dict(BASE)
        for writer in succeeded:
            expected.update(INTENDED[writer])

        print(
            f"\nconcurrent merge ({request.config.getoption('--profile')}): exit codes {codes}, "
            f"commit-conflict retries per writer {retries}, both done in {elapsed:.1f}s"
        )
        if rest:
            print(
                f"REST catalog 409 answers during the race: "
                f"{rest.status_counts().get(409, 0) - conflicts_before}"
            )
        by_writer = {w: sum(1 for v in final.values() if v == w) for w in ("base", "A", "B")}
        print(
            f"final rows {len(rows)} (distinct ids {len(final)}), expected {len(expected)}; "
            f"rows last written by {by_writer}"
        )

        for writer in ("A", "B"):
            if codes[writer] != 0:
                # A clean failure: the conflict explained, no JVM stack trace for the user.
                assert CONFLICT_MESSAGE in outputs[writer], outputs[writer][-3000:]
                assert "\tat org.apache" not in outputs[writer]
        assert succeeded, f"both failed:\nA: {outputs['A'][-2000:]}\nB: {outputs['B'][-2000:]}"
        assert len(rows) == len(final), "a key appears twice"
        assert final == expected
        if succeeded == ["A", "B"]:
            assert len(rows) == 30
