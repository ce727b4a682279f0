"""What every benchmark here shares: fresh-process timing with peak memory, the peer's profile,
and the table of ratios each script prints.

A round runs each contender once, in a fresh process and (by default) on a fresh warehouse, so
every figure is a cold start, the way a scheduled `dbt build` runs. Contenders alternate within
a round, so a slow moment of the machine hits both sides. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
DBT = str(VENV_BIN / "dbt")
# One engine setting for both sides, so a ratio measures the adapter rather than the tuning:
# the adapter's own local defaults, given to the peer as well.
SHARED_SPARK_CONF = {
    "spark.master": "local[*]",
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
}


@dataclass
class Sample:
    seconds: float
    peak_rss_mb: float
    ok: bool
    note: str = ""


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def times(self) -> list[float]:
        return [s.seconds for s in self.samples if s.ok]

    @property
    def min(self) -> float | None:
        return min(self.times) if self.times else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def peak_rss_mb(self) -> float | None:
        peaks = [s.peak_rss_mb for s in self.samples if s.ok]
        return max(peaks) if peaks else None


def _tree(root: int) -> dict[int, tuple[int, int]]:
    """A process and all its descendants (the JVM is a child of dbt): pid -> (RSS kB, session)."""
    children: dict[int, list[int]] = {}
    facts: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ppid, session = int(fields[1]), int(fields[3])
            rss = 0
            with open(f"/proc/{entry}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
                        break
        except (OSError, IndexError, ValueError):
            continue
        facts[int(entry)] = (rss, session)
        children.setdefault(ppid, []).append(int(entry))
    tree, stack = {}, [root]
    while stack:
        pid = stack.pop()
        if pid in facts:
            tree[pid] = facts[pid]
        stack.extend(children.get(pid, []))
    return tree


def _await_gone(pids: set[int], cap_seconds: float = 30.0) -> None:
    """Until `pids` have exited (untimed): a cold command's JVM outlives dbt by a second or
    two, and its exit must not run into the next contender's timing."""
    deadline = time.monotonic() + cap_seconds
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if os.path.exists(f"/proc/{pid}")}
        time.sleep(0.1)


def engine_state(home: Path) -> tuple[int | None, float | None]:
    """The warm engine's JVM pid and its RSS in MB, when one engine runs in `home`."""
    from dbt.adapters.lakehouse.engine.warm import server
    from dbt.adapters.lakehouse.engine.warm.folder import (
        engine_folders,
        read_private_json,
        supervisor_alive,
    )

    live = [f for f in engine_folders(home) if supervisor_alive(f)]
    if len(live) != 1:
        return None, None
    pid = read_private_json(live[0] / server.STATE_FILE).get("jvm_pid")
    if not isinstance(pid, int):
        return None, None
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return pid, int(line.split()[1]) / 1024
    except OSError:
        pass
    return pid, None


def watch_engine(home: Path, jvm: int, rss: list[float]) -> Callable[[Sample], None]:
    """A check for each warm command's Sample: the engine's RSS into `rss`, and a note when the
    engine in `home` is no longer the JVM `jvm` (restarted: the command paid a cold start)."""

    def check(sample: Sample) -> None:
        pid, megabytes = engine_state(home)
        if megabytes is not None:
            rss.append(megabytes)
        if sample.ok and pid != jvm:
            sample.note = "the engine was restarted"

    return check


def stop_engines(*homes: Path) -> int:
    from dbt.adapters.lakehouse.engine.warm import folder

    return sum(len(folder.stop_engines(home)) for home in homes)


@functools.cache
def _bytecode_as_installed() -> None:
    """Byte-compile this checkout's package, as pip does when it installs a wheel.

    The peers come from wheels, compiled at install. This checkout is installed editable, and
    with PYTHONDONTWRITEBYTECODE set (CI, the machines the figures come from) Python would
    compile the adapter's modules again in every timed process: ~0.3 s a command that no user
    of an installed dbt-lakehouse pays.
    """
    compileall.compile_dir(REPO / "dbt", quiet=1)


def cold_env() -> dict[str, str]:  # else the next command attaches to the last one's engine
    return {**os.environ, "LAKEHOUSE_ENGINE": "cold"}  # (kept warm 15 min, any warehouse)


def run_timed(
    command: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    log: Path | None = None,
) -> Sample:
    """Run one command in a fresh process; wall time and the peak RSS of its process tree."""
    _bytecode_as_installed()
    peak = 0
    out = log.open("wb") if log else subprocess.DEVNULL
    start = time.perf_counter()
    process = subprocess.Popen(
        list(command), cwd=cwd, env=dict(env or os.environ), stdout=out, stderr=subprocess.STDOUT
    )
    done = threading.Event()

    # The command's own processes, which end with it; those in a session of their own (the warm
    # engine, the embedded catalog's holder) are meant to outlive it.
    own: set[int] = set()
    session = os.getsid(0)

    def sample_memory() -> None:
        nonlocal peak
        while not done.is_set():
            tree = _tree(process.pid)
            peak = max(peak, sum(rss for rss, _ in tree.values()))
            own.update(pid for pid, (_, sid) in tree.items() if sid == session)
            done.wait(0.2)

    sampler = threading.Thread(target=sample_memory, daemon=True)
    sampler.start()
    note = ""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code, note = -1, f"stopped at the {timeout:.0f} s cap"
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    _await_gone(own)
    if log:
        out.close()  # type: ignore[union-attr]
    if code != 0 and not note:
        note = f"exit {code}" + (f", see {log}" if log else "")
    return Sample(seconds, peak / 1024, code == 0, note)


# --- profiles --------------------------------------------------------------------------------


def ours_target(schema: str, threads: int = 4, **spark: str) -> dict:
    """dbt-lakehouse on its embedded lakehouse (warehouse folder beside the project)."""
    return {
        "type": "lakehouse",
        "schema": schema,
        "threads": threads,
        "spark": {
            "master": SHARED_SPARK_CONF["spark.master"],
            "driver_memory": SHARED_SPARK_CONF["spark.driver.memory"],
            **spark,
        },
    }


def duckdb_target(schema: str, path: Path, threads: int = 4) -> dict:
    """dbt-duckdb on one DuckDB file."""
    return {"type": "duckdb", "path": str(path), "schema": schema, "threads": threads}


def iceberg_jar() -> str:
    from dbt.adapters.lakehouse.engine.jars import iceberg_runtime_jar

    return str(iceberg_runtime_jar())


# What a dbt-spark user sets to run locally at all: Spark's own defaults for everything else.
PEER_OUT_OF_THE_BOX_CONF = {
    key: SHARED_SPARK_CONF[key]
    for key in ("spark.master", "spark.driver.memory", "spark.sql.session.timeZone")
}


def peer_target(
    schema: str, warehouse: Path, threads: int = 4, spark_defaults: bool = False
) -> dict:
    """dbt-spark `method: session` with the same Iceberg runtime jar, a hadoop catalog as the
    session's default catalog (the peer has no catalog of its own to name).

    The peer gets our engine settings (SHARED_SPARK_CONF), unless `spark_defaults`: then
    Spark's own defaults, as a dbt-spark user gets them (200 shuffle partitions, the UI on)."""
    return {
        "type": "spark",
        "method": "session",
        "host": "NA",
        "schema": schema,
        "threads": threads,
        "server_side_parameters": {
            **(PEER_OUT_OF_THE_BOX_CONF if spark_defaults else SHARED_SPARK_CONF),
            "spark.jars": iceberg_jar(),
            "spark.sql.extensions": (
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            ),
            "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.spark_catalog.type": "hadoop",
            "spark.sql.catalog.spark_catalog.warehouse": str(warehouse),
            # dbt-spark enables Hive support; an in-memory catalog spares it a Derby metastore.
            "spark.sql.catalogImplementation": "in-memory",
        },
    }


def raw_spark_conf(warehouse: Path) -> dict[str, str]:
    """A raw PySpark session's settings: the shared engine settings, the adapter's local
    settings that are not tuning (loopback, no progress bar, no Hive), the same Iceberg jar,
    and a hadoop catalog named `raw` on `warehouse`."""
    return {
        **SHARED_SPARK_CONF,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.catalogImplementation": "in-memory",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.jars": iceberg_jar(),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.raw": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.raw.type": "hadoop",
        "spark.sql.catalog.raw.warehouse": str(warehouse),
    }


def write_profiles(folder: Path, profile: str, target: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles.yml").write_text(
        yaml.safe_dump({profile: {"target": "bench", "outputs": {"bench": target}}})
    )


def dbt_command(*args: str, project: Path) -> list[str]:
    return [DBT, *args, "--profiles-dir", str(project), "--project-dir", str(project)]


def fresh_copy(source: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("target", "logs", "lakehouse_*"))
    return target


def _version(path: Path) -> int:
    """Metadata file order: `v3.metadata.json` (hadoop), `00003-<uuid>.metadata.json` (others)."""
    match = re.match(r"v?(\d+)", path.name)
    return int(match.group(1)) if match else -1


def iceberg_table_facts(warehouse: Path, table: str) -> tuple[int | None, str]:
    """Rows and column types of the table's current snapshot, from its Iceberg metadata."""
    files = [p for p in warehouse.rglob("*.metadata.json") if p.parent.parent.name == table]
    if not files:
        return None, "no table"
    metadata = json.loads(max(files, key=_version).read_text())
    schema_id = metadata.get("current-schema-id")
    schema: dict = next(
        (s for s in metadata.get("schemas", []) if s.get("schema-id") == schema_id), {}
    )
    types = ", ".join(f"{f['name']} {f['type']}" for f in schema.get("fields", []))
    current = metadata.get("current-snapshot-id")
    for snapshot in metadata.get("snapshots", []):
        if snapshot.get("snapshot-id") == current:
            return int(snapshot.get("summary", {}).get("total-records", 0)), types
    return 0, types  # a table with no snapshot yet holds no rows


# --- reporting -------------------------------------------------------------------------------


def fmt(value: float | None, unit: str = "s") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def ratio(ours: Series, other: Series) -> tuple[float | None, float | None]:
    if not ours.times or not other.times:
        return None, None
    return ours.min / other.min, ours.median / other.median  # type: ignore[operator]


def report(title: str, rows: list[tuple[str, Series, Series, str]]) -> None:
    """One line per case: ours vs the other side, min and median, the ratio and its goal."""
    print(f"\n## {title}")
    machine = f"{platform.machine()}, {os.cpu_count()} cores"
    print(f"machine: {machine}, python {platform.python_version()}")
    header = (
        f"{'case':<40} {'ours min/med':>15} {'other min/med':>15} "
        f"{'ratio min/med':>15} {'goal':>8} {'ours RSS':>9}"
    )
    print(header)
    print("-" * len(header))
    for case, ours, other, goal in rows:
        r_min, r_med = ratio(ours, other)
        ratios = "-" if r_min is None else f"{r_min:.2f}x/{r_med:.2f}x"
        notes = {s.note for s in ours.samples + other.samples if s.note}
        print(
            f"{case:<40} {fmt(ours.min)}/{fmt(ours.median):>7} "
            f"{fmt(other.min)}/{fmt(other.median):>7} {ratios:>15} {goal:>8} "
            f"{fmt(ours.peak_rss_mb, 'MB'):>9}"
            + (f"   ({'; '.join(sorted(notes))})" if notes else "")
        )


def peer_settings(args: argparse.Namespace) -> str:
    """For a report's title: how the peer was set up, when not on our engine settings."""
    return ", the peer on Spark's defaults" if args.peer_spark_defaults else ""


def common_args(description: str, rounds: int = 3) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=rounds, help="rounds (default %(default)s)")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get("BENCH_WORK", "/tmp/dbt-lakehouse-bench")),
        help="scratch folder for projects and warehouses (default %(default)s)",
    )
    parser.add_argument(
        "--peer-spark-defaults",
        action="store_true",
        help="run the peer on Spark's own defaults, as dbt-spark users get them, instead of "
        "our engine settings (shuffle partitions, UI)",
    )
    return parser


def alternate(rounds: int, contenders: Sequence[tuple[Series, Callable[[int], Sample]]]) -> None:
    """Each round runs every contender once, in turn; progress goes to stderr."""
    for round_no in range(rounds):
        for series, run in contenders:
            sample = run(round_no)
            series.samples.append(sample)
            status = "ok" if sample.ok else sample.note
            print(
                f"  round {round_no + 1}/{rounds} {series.name}: {sample.seconds:.1f}s "
                f"rss {sample.peak_rss_mb:.0f}MB {status}",
                file=sys.stderr,
            )
