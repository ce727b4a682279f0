"""Several `dbt run` processes share one embedded lakehouse at once (docs/profiles-and-depots.md).

Each round starts four real dbt processes together, each building six tables in its own schema
on one warehouse folder: on a fresh warehouse, on the same warehouse again, and once more
with the process that started the catalog holder stopped while the others still build (with
H2's AUTO_SERVER alone, the process that opened the catalog first owned its server, and its exit
broke the rest). Every other run must succeed, every table must hold exactly its rows (read
back through the catalog with H2 and pyiceberg, not Spark), and the catalog holder must be gone
once the processes are (and the warm engine they shared, which keeps the holder up while it
runs).

A last case holds the catalog file from a foreign H2 process: dbt must give up after its bounded
wait with one line naming the file and the fix.
"""

from __future__ import annotations

import csv
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.embedded_catalog import (
    CONTENTION_MARKERS,
    EmbeddedCatalog,
    holder_alive,
    read_state,
)
from dbt.adapters.lakehouse.engine.jars import H2_JARS
from dbt.adapters.lakehouse.engine.warm.folder import stop_engines
from dbt.adapters.lakehouse.profile.depot import embedded_catalog_uri
from functional.infra.servers import dying_with_parent
from functional.lakehouse.dbt_output import output_text

pytestmark = pytest.mark.only_profile("local")

PROCESSES = 4
TABLES = 6
RUN_TIMEOUT_S = 600
# Each round's processes are independent dbt runs; they only meet in the catalog.
SPARK = {
    "master": "local[1]",
    "driver_memory": "768m",
    "conf": {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"},
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


def catalog_of(warehouse: Path) -> EmbeddedCatalog:
    jars = H2_JARS.locate()
    assert jars, "the H2 jar is missing: run `dbt-lakehouse install`"
    return EmbeddedCatalog(
        name="lakehouse", url=embedded_catalog_uri(warehouse), h2_jar=str(jars[0])
    )


def wait_for_holder_to_stop(catalog: EmbeddedCatalog, timeout: float = 15.0) -> float:
    """Seconds until the catalog holder is gone; fails if it outlives its users."""
    began = time.monotonic()
    while holder_alive(catalog.folder):
        assert time.monotonic() - began < timeout, "the catalog holder outlived every dbt process"
        time.sleep(0.2)
    return time.monotonic() - began


def table_rows(catalog: EmbeddedCatalog) -> dict[str, set[tuple[int, str, int, int]]]:
    """Every table's rows, found through the catalog's own pointer to its current metadata."""
    from pyiceberg.table import StaticTable

    listing = catalog.folder.parent / "listing.csv"
    query = "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables"
    java = shutil.which("java")
    assert java is not None
    subprocess.run(
        [java, "-cp", catalog.h2_jar, "org.h2.tools.Shell", "-url", catalog.url]
        + ["-user", "", "-password", "", "-sql", f"CALL CSVWRITE('{listing}', '{query}')"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    with listing.open(newline="") as handle:
        entries = [{k.lower(): v for k, v in row.items()} for row in csv.DictReader(handle)]
    listing.unlink()
    found = {}
    for entry in entries:
        table = StaticTable.from_metadata(entry["metadata_location"])
        rows = table.scan().to_arrow().to_pylist()
        key = f"{entry['table_namespace']}.{entry['table_name']}"
        found[key] = {(r["id"], r["who"], r["tbl"], r["tag"]) for r in rows}
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
    catalog = catalog_of(warehouse)
    stop_engines()  # the shared warm engine (own_engines) keeps the catalog holder up
    stopped = wait_for_holder_to_stop(catalog)
    print(f"{label}: catalog holder stopped {stopped:.1f}s after the last run and the engine")
    found = table_rows(catalog)
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
    def test_fresh_existing_and_the_holders_starter_stopped(
        self, tmp_path: Path, started: list[Run]
    ) -> None:
        warehouse = tmp_path / "warehouse"
        round_of_four(tmp_path, "fresh", warehouse, tag=0, started=started)
        # The same schemas again: each table is replaced by this round's rows.
        round_of_four(tmp_path, "existing", warehouse, tag=1, started=started)

        # Once more, one table at a time with a pause in each, so that work remains when a
        # process is stopped.
        began = time.monotonic()
        label = "existing again"
        runs = [
            six_tables(
                tmp_path / "again" / f"p{k}", f"p{k}", warehouse, tag=2, threads=1, pause_ms=2000
            )
            for k in range(PROCESSES)
        ]
        started.extend(runs)
        for run in runs:
            start(run, own_group=True)
        for run in runs:
            wait_until_built(run, 1, 300)
        # The process that started the catalog holder (under AUTO_SERVER alone, the one that
        # opened the catalog first owned H2's server). Ctrl-C: dbt cancels its work and exits
        # cleanly, stopping Spark; the owner's clean exit is what used to close H2's database
        # under the other processes.
        starter = holder_starter(catalog_of(warehouse), runs)
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
            f"\n{starter.name}, which started the holder, stopped; it and its JVM were gone "
            f"{time.monotonic() - signalled:.1f}s later; tables left to build: {left}"
        )
        assert all(n > 0 for n in left.values()), f"no overlap to test: {left}"
        for run in others:
            finish(run)
        check_round(f"{label}, {starter.name} stopped", others, warehouse, began)


def holder_starter(catalog: EmbeddedCatalog, runs: list[Run]) -> Run:
    """The run whose dbt process started the catalog holder (still the holder's parent)."""
    holder = read_state(catalog.folder).get("pid")
    assert isinstance(holder, int) and holder_alive(catalog.folder), "no catalog holder runs"
    parent = int(Path(f"/proc/{holder}/stat").read_text().rsplit(")", 1)[1].split()[1])
    starter = [run for run in runs if run.process is not None and run.process.pid == parent]
    assert starter, f"the holder's parent {parent} is none of the dbt runs"
    return starter[0]


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


class TestCatalogHeldByAnotherProgram:
    def test_one_line_with_the_fix(self, tmp_path: Path, started: list[Run]) -> None:
        warehouse = tmp_path / "warehouse"
        catalog = catalog_of(warehouse)
        catalog.database.parent.mkdir(parents=True)
        java = shutil.which("java")
        assert java is not None
        # An H2 console without AUTO_SERVER: it has the file and serves no one.
        foreign = subprocess.Popen(
            dying_with_parent(
                [java, "-cp", catalog.h2_jar, "org.h2.tools.Shell", "-url"]
                + [catalog.url.replace(";AUTO_SERVER=TRUE", ""), "-user", "", "-password", ""]
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            assert prompted(foreign, 60), "the foreign H2 process did not open the catalog"
            run = six_tables(tmp_path / "p0", "p0", warehouse, tag=0)
            started.append(run)
            start(run, env={"LAKEHOUSE_CATALOG_WAIT": "4"})
            code = finish(run)
        finally:
            assert foreign.stdin is not None
            foreign.stdin.close()
            foreign.wait(timeout=30)
        text = output_text(run.output)
        print(f"\nexit code {code}:\n{text[-1500:]}")
        assert code != 0
        line = next(
            (ln for ln in text.splitlines() if "stayed locked by another process" in ln), None
        )
        assert line is not None, text[-3000:]
        assert str(catalog.database_file) in line and str(catalog.lock_file) in line
        assert "Fix:" in line and any(f"(H2: {m})" in line for m in CONTENTION_MARKERS), line
        assert "\tat org." not in text
        stop_engines()  # the shared warm engine (own_engines) keeps the catalog holder up
        wait_for_holder_to_stop(catalog)


def prompted(shell: subprocess.Popen[bytes], timeout: float) -> bool:
    """True once H2's Shell prompts for input: it has the database open."""
    assert shell.stdout is not None
    output = b""
    began = time.monotonic()
    while b"sql> " not in output:
        if time.monotonic() - began > timeout or shell.poll() is not None:
            return False
        if select.select([shell.stdout], [], [], 0.2)[0]:
            output += os.read(shell.stdout.fileno(), 4096)
    return True


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
