"""What every benchmark here shares: fresh-process timing with peak memory, the peer's profile,
and the table of ratios each script prints.

A round runs each contender once, in a fresh process and (by default) on a fresh warehouse, so
every figure is a cold start, the way a scheduled `dbt build` runs. Contenders alternate within
a round, so a slow moment of the machine hits both sides. Figures are printed, never asserted.
The timing itself (processes, memory, rounds) is timed_runs.py's; the scripts import it from
here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
from pathlib import Path

import yaml
from timed_runs import (
    Sample,
    Series,
    alternate,
    cold_env,
    engine_state,
    run_timed,
    stop_engines,
    wait_warm_up,
    watch_engine,
)

# The names the benchmark scripts import: this module's and timed_runs.py's.
__all__ = [
    "DBT",
    "REPO",
    "SHARED_SPARK_CONF",
    "WARM_UP_ENV",
    "Sample",
    "Series",
    "add_warm_up_argument",
    "alternate",
    "cold_env",
    "common_args",
    "dbt_command",
    "duckdb_target",
    "engine_state",
    "fmt",
    "fresh_copy",
    "iceberg_table_facts",
    "ours_target",
    "peer_settings",
    "peer_target",
    "raw_spark_conf",
    "report",
    "run_timed",
    "stop_engines",
    "wait_warm_up",
    "watch_engine",
    "write_profiles",
]

REPO = Path(__file__).resolve().parent.parent
# A warm engine's warm-up (engine/warm/warm_up.py) runs while no command of ours is attached,
# that is while the other side's command is timed: off unless a script turns it on for its
# side and waits it out (timed_runs.wait_warm_up) before its rounds.
WARM_UP_ENV = "LAKEHOUSE_ENGINE_WARM_UP_SECONDS"
os.environ.setdefault(WARM_UP_ENV, "0")
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


def add_warm_up_argument(parser: argparse.ArgumentParser) -> None:
    """--warm-up-seconds: our warm engine's warm-up as a user gets it (60 s on a local master);
    a script passing it to its side waits it out (wait_warm_up) before its timed rounds."""
    parser.add_argument(
        "--warm-up-seconds",
        type=float,
        default=60.0,
        help="our engine's warm-up budget (engine: {warm_up_seconds}; default %(default)s, the "
        "default of a local master; 0: none), waited out before the timed rounds",
    )
