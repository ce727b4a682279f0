"""Several `dbt run` processes share one embedded lakehouse at once (docs/profiles-and-depots.md).

Each round starts four real dbt processes together, each building six tables in its own schema
on one warehouse folder: on a fresh warehouse, then on the same warehouse again (each table
replaced) with one process stopped (Ctrl-C) while the others still build. Every other run must
succeed, and
every table must hold exactly its rows (read back through the catalog's SQLite file and
pyiceberg, not Spark).

Each JVM opens the SQLite catalog file itself. A foreign program holding its write lock makes
dbt wait (the busy timeout), not fail; a dbt process killed with its JVM (SIGKILL) mid-build
loses no commit made and leaves the file whole, while another process keeps building.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.embedded import EmbeddedCatalog
from functional.infra.processes import dying_with_parent
from functional.lakehouse.shared.dbt_output import output_text

pytestmark = pytest.mark.only_profile("local")

PROCESSES = 4
TABLES = 6
RUN_TIMEOUT_S = 600
# Each round's processes are independent dbt runs; they only meet in the catalog.
SPARK = {
    "master": "local[1]",
    "driver_memory": "768m",
}


def dbt_executable() -> str:
    return str(Path(sys.executable).with_name("dbt"))


def rows_of(schema: str, table: int, tag: int) -> set[tuple[int, str, int, int]]:
    return {(i, schema, table, tag) for i in range(3 * (table + 1) + tag)}


@dataclass
class Run:
    """One dbt process: its project, and what it did."""

    name: str
    schema: str
    root: Path
    process: subprocess.Popen[str] | None = None
    own_group: bool = False
    output: str = ""
    tables: dict[str, set[tuple[int, str, int, int]]] = field(default_factory=dict)

    @property
    def log(self) -> str:
        path = self.root / "logs" / "dbt.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def built(self) -> int:
        return self.log.count(f"OK created sql table model {self.schema}.")


def write_project(
    root: Path,
    name: str,
    warehouse: Path,
    models: dict[str, str],
    threads: int = 4,
) -> Run:
    schema = f"{name}_schema"
    (root / "models").mkdir(parents=True, exist_ok=True)
    model_config = {"+materialized": "table"}
    project = {
        "name": name,
        "version": "1.0",
        "config-version": 2,
        "profile": name,
        "models": {name: model_config},
    }
    (root / "dbt_project.yml").write_text(json.dumps(project))
    target = {
        "type": "lakehouse",
        "schema": schema,
        "threads": threads,
        "warehouse": str(warehouse),
        "spark": SPARK,
    }
    profiles = {name: {"target": "dev", "outputs": {"dev": target}}}
    (root / "profiles.yml").write_text(json.dumps(profiles))
    for file_name, sql in models.items():
        (root / "models" / file_name).write_text(sql)
    return Run(name=name, schema=schema, root=root)


def six_tables(
    root: Path, name: str, warehouse: Path, tag: int, pause_ms: int = 0, **options: object
) -> Run:
    schema = f"{name}_schema"
    # The pause is a column so that Spark cannot prune it: it runs once per table build.
    pause = (
        f" cross join (select reflect('java.lang.Thread', 'sleep', cast({pause_ms} as bigint)) "
        "as pause) p"
        if pause_ms
        else ""
    )
    models = {
        f"t{i}.sql": (
            f"select cast(id as int) as id, '{schema}' as who, {i} as tbl, {tag} as tag"
            f"{', p.pause' if pause_ms else ''} "
            f"from range(0, {len(rows_of(schema, i, tag))}){pause}"
        )
        for i in range(TABLES)
    }
    run = write_project(root, name, warehouse, models, **options)  # type: ignore[arg-type]
    run.tables = {f"t{i}": rows_of(schema, i, tag) for i in range(TABLES)}
    return run


def start(run: Run, env: dict[str, str] | None = None, own_group: bool = False) -> None:
    command = [
        dbt_executable(),
        "run",
        "--project-dir",
        str(run.root),
        "--profiles-dir",
        str(run.root),
        # Separate target and log folders: dbt processes must not share manifest files.
        "--target-path",
        str(run.root / "target"),
        "--log-path",
        str(run.root / "logs"),
    ]
    run.own_group = own_group
    run.process = subprocess.Popen(
        # SIGINT at its default, so that the test's Ctrl-C reaches dbt: a shell's background
        # job without job control (`bash scripts/test.sh &` in a script, nohup) starts with
        # SIGINT ignored, and every exec passes that on.
        dying_with_parent(["env", "--default-signal=INT", *command]),
        cwd=run.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "LAKEHOUSE_SPARK_LOG": str(run.root / "spark.log"), **(env or {})},
        # Its own process group, so that cleanup can kill dbt and its Spark JVM in one go.
        start_new_session=own_group,
    )


def finish(run: Run) -> int:
    assert run.process is not None
    run.output, _ = run.process.communicate(timeout=RUN_TIMEOUT_S)
    return run.process.returncode


@pytest.fixture(autouse=True)
def own_engines(engine_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The warm engine the runs share (unless LAKEHOUSE_ENGINE=cold): the test's own."""
    monkeypatch.setenv("LAKEHOUSE_ENGINE_HOME", str(engine_home))
    return engine_home


@pytest.fixture
def started() -> Iterator[list[Run]]:
    """Every run a test starts; whatever is still running at the end is killed."""
    runs: list[Run] = []
    yield runs
    for run in runs:
        if run.process is not None and run.process.poll() is None:
            if run.own_group:
                os.killpg(run.process.pid, signal.SIGKILL)
            run.process.kill()
            run.process.wait(timeout=30)


def catalog_of(warehouse: Path) -> EmbeddedCatalog:  # the profile's `database`: the default
    return EmbeddedCatalog(name="lakehouse", warehouse=warehouse)


def table_rows(catalog: EmbeddedCatalog) -> dict[str, set[tuple[int, str, int, int]]]:
    """Every table's rows, found through the catalog's own pointer to its current metadata,
    read from the SQLite file itself (which must pass SQLite's integrity check)."""
    from pyiceberg.table import StaticTable

    with sqlite3.connect(catalog.database_file, timeout=60) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        entries = con.execute(
            "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables "
            "WHERE catalog_name = ? AND iceberg_type = 'TABLE'",
            (catalog.name,),
        ).fetchall()
    found = {}
    for namespace, name, location in entries:
        rows = StaticTable.from_metadata(location).scan().to_arrow().to_pylist()
        found[f"{namespace}.{name}"] = {(r["id"], r["who"], r["tbl"], r["tag"]) for r in rows}
    return found


def check_round(label: str, runs: list[Run], warehouse: Path, began: float) -> None:
    """Every run of the round (all finished) succeeded and wrote exactly its rows."""
    elapsed = time.monotonic() - began
    succeeded = sum(run.process is not None and run.process.returncode == 0 for run in runs)
    print(f"\n{label}: {succeeded}/{len(runs)} dbt runs succeeded in {elapsed:.0f}s")
    for run in runs:
        assert run.process is not None and run.process.returncode == 0, (
            f"{label}: {run.name} failed:\n{output_text(run.output)[-3000:]}"
        )
    found = table_rows(catalog_of(warehouse))
    for run in runs:
        for table, rows in run.tables.items():
            assert found.get(f"{run.schema}.{table}") == rows, f"{label}: {run.schema}.{table}"


def round_of_four(
    tmp_path: Path, label: str, warehouse: Path, tag: int, started: list[Run]
) -> None:
    began = time.monotonic()
    runs = [
        six_tables(tmp_path / label / f"p{k}", f"p{k}", warehouse, tag) for k in range(PROCESSES)
    ]
    started.extend(runs)
    for run in runs:
        start(run)
    for run in runs:
        finish(run)
    check_round(label, runs, warehouse, began)


class TestFourProcessesOneWarehouse:
    def test_fresh_then_existing_with_one_stopped(self, tmp_path: Path, started: list[Run]) -> None:
        warehouse = tmp_path / "warehouse"
        round_of_four(tmp_path, "fresh", warehouse, tag=0, started=started)
        # The same schemas again, each table replaced by this round's rows, one table at a
        # time with a pause in each, so that work remains when a process is stopped. (A round
        # of four on the existing warehouse with none stopped asserted nothing this one does
        # not: the three others replace their tables side by side.)
        began = time.monotonic()
        label = "existing"
        runs = [
            six_tables(
                tmp_path / "again" / f"p{k}", f"p{k}", warehouse, tag=1, threads=1, pause_ms=2000
            )
            for k in range(PROCESSES)
        ]
        started.extend(runs)
        for run in runs:
            start(run, own_group=True)
        for run in runs:
            wait_until_built(run, 1, 300)
        # Ctrl-C: dbt cancels its work and exits cleanly, stopping Spark; the others keep
        # building (no process owns the catalog, so none's exit can close it under the rest).
        starter = runs[0]
        assert starter.process is not None
        # Its own JVM when cold; on the warm engine (the default) the four share one JVM that
        # is no child of theirs, and the starter's ctrl-C must cancel only its own jobs.
        jvms = [pid for pid in children_of(starter.process.pid) if command_of(pid) == "java"]
        cold = os.environ.get("LAKEHOUSE_ENGINE") == "cold"
        assert bool(jvms) == cold, f"{starter.name}'s JVMs: {jvms}"
        signalled = time.monotonic()
        starter.process.send_signal(signal.SIGINT)
        starter.process.wait(timeout=60)
        wait_for(lambda: all(gone(pid) for pid in jvms), 60)
        others = [run for run in runs if run is not starter]
        left = {run.name: TABLES - run.built() for run in others}
        print(
            f"\n{starter.name} stopped; it and its JVM were gone "
            f"{time.monotonic() - signalled:.1f}s later; tables left to build: {left}"
        )
        assert all(n > 0 for n in left.values()), f"no overlap to test: {left}"
        for run in others:
            finish(run)
        check_round(f"{label}, {starter.name} stopped", others, warehouse, began)


def wait_until_built(run: Run, tables: int, timeout: float) -> None:
    """Until `run` has built `tables` tables; fails if it ends or the time is up first."""
    began = time.monotonic()
    while run.built() < tables:
        assert run.process is not None
        if run.process.poll() is not None:
            out = run.process.stdout.read() if run.process.stdout else ""
            pytest.fail(f"{run.name} ended early ({run.process.returncode}):\n{out[-3000:]}")
        assert time.monotonic() - began < timeout, f"{run.name}: timed out"
        time.sleep(0.25)


class TestCatalogLockedByAnotherProgram:
    def test_dbt_waits_for_the_lock_instead_of_failing(
        self, tmp_path: Path, started: list[Run]
    ) -> None:
        warehouse = tmp_path / "warehouse"
        run = six_tables(tmp_path / "p0", "p0", warehouse, tag=0)
        started.append(run)
        start(run)
        assert finish(run) == 0, output_text(run.output)[-3000:]
        # A foreign writer (any SQLite tool) holds the write lock while dbt replaces the
        # tables: each commit waits for it, and goes through once it is released.
        again = six_tables(tmp_path / "p0again", "p0", warehouse, tag=1)
        started.append(again)
        catalog = catalog_of(warehouse)
        foreign = sqlite3.connect(catalog.database_file, isolation_level=None)
        foreign.execute("BEGIN IMMEDIATE")
        try:
            start(again)
            wait_for(lambda: "START sql table model p0_schema." in again.log, 300)
            # Long enough for all six (a second or so each) had their commits not waited.
            time.sleep(8)
            built_while_held = again.built()
            assert again.process is not None and again.process.poll() is None
        finally:
            foreign.execute("ROLLBACK")
            foreign.close()
        print(f"\ntables built while the lock was held: {built_while_held}")
        assert built_while_held == 0
        assert finish(again) == 0, output_text(again.output)[-3000:]
        assert table_rows(catalog) == {f"p0_schema.{t}": r for t, r in again.tables.items()}


class TestKilledMidCommit:
    def test_nothing_committed_is_lost(self, tmp_path: Path, started: list[Run]) -> None:
        # Cold engines: each dbt process has its own JVM, killed with it.
        cold = {"LAKEHOUSE_ENGINE": "cold"}
        warehouse = tmp_path / "warehouse"
        began = time.monotonic()
        victim = six_tables(tmp_path / "victim", "victim", warehouse, tag=0, threads=2)
        survivor = six_tables(tmp_path / "survivor", "survivor", warehouse, tag=0, threads=1)
        started.extend([victim, survivor])
        start(victim, env=cold, own_group=True)
        start(survivor, env=cold)
        wait_until_built(victim, 2, 300)
        assert victim.process is not None
        # dbt and its JVM at once, another table mid-way: nothing runs to tidy up.
        os.killpg(victim.process.pid, signal.SIGKILL)
        victim.process.wait(timeout=30)
        built = sorted(
            line.rsplit(f"{victim.schema}.", 1)[1].split()[0]
            for line in victim.log.splitlines()
            if f"OK created sql table model {victim.schema}." in line
        )
        assert finish(survivor) == 0, output_text(survivor.output)[-3000:]
        catalog = catalog_of(warehouse)
        found = table_rows(catalog)  # the file passes integrity_check; every pointer reads
        print(
            f"\nkilled after {built}; catalog whole, {len(found)} tables readable; "
            f"{time.monotonic() - began:.0f}s"
        )
        for table in built:
            assert found[f"{victim.schema}.{table}"] == victim.tables[table], table
        for table, rows in survivor.tables.items():
            assert found[f"{survivor.schema}.{table}"] == rows, table
        # And the killed project builds again on the same file.
        rerun = six_tables(tmp_path / "victim2", "victim", warehouse, tag=1)
        started.append(rerun)
        start(rerun)
        assert finish(rerun) == 0, output_text(rerun.output)[-3000:]
        found = table_rows(catalog)
        for table, rows in rerun.tables.items():
            assert found[f"{rerun.schema}.{table}"] == rows, table


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in status


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout, "timed out"
        time.sleep(0.1)
