"""Every feature leaves the same rows on a warm engine as on a JVM of the command's own.

One project, built twice in separate warehouses: with LAKEHOUSE_ENGINE=cold (each command starts
its JVM) and warm (the commands attach to one engine). It has the sample's seeds, views, tables,
snapshot and tests, plus every incremental strategy, a dual-format (Iceberg + Delta) model, a
Python model, a time-travel read and a model reading upstream changes. Each mode runs a first
`dbt build`, then the warm side a rerun as an audited run (`write_audit_publish`) and a
`--full-refresh`. Every Iceberg table's rows (read with pyiceberg from its current metadata)
and the Delta table's rows (deltalake) must be the same in both warehouses after the first
build, and the same as then after each later step."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from dbt.version import __version__ as dbt_version

from functional.lakehouse.shared.warm import dbt_started, statuses

pytestmark = pytest.mark.only_profile("local")

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "jaffle_lakehouse"
# The dbt line the whole suite runs on (docs/dbt-versions.md); CI's other line runs a subset.
DEFAULT_DBT_LINE = "1.12"

EXTRA_MODELS = {
    "inc_append.sql": """
{{ config(materialized='incremental', incremental_strategy='append') }}
select order_id, customer_id, status from {{ ref('stg_orders') }}
{% if is_incremental() %}
where order_id > (select coalesce(max(order_id), 0) from {{ this }})
{% endif %}
""",
    "inc_merge.sql": """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id',
          partition_by=['status']) }}
select order_id, customer_id, status from {{ ref('stg_orders') }}
""",
    "inc_delete_insert.sql": """
{{ config(materialized='incremental', incremental_strategy='delete+insert',
          unique_key='order_id') }}
select order_id, status from {{ ref('stg_orders') }}
""",
    "inc_overwrite.sql": """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['status']) }}
select order_id, status from {{ ref('stg_orders') }}
""",
    "inc_replace.sql": """
{{ config(materialized='incremental', incremental_strategy='replace') }}
select customer_id, count(*) as n from {{ ref('stg_orders') }} group by customer_id
""",
    "events.sql": """
{{ config(materialized='table', event_time='ts') }}
select * from values (1, timestamp'2024-03-01 10:00:00'), (2, timestamp'2025-06-02 10:00:00')
  as t(id, ts)
""",
    "inc_microbatch.sql": """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='year', begin=modules.datetime.datetime(2024, 1, 1)) }}
select id, ts from {{ ref('events') }}
""",
    "dual_format.sql": """
{{ config(materialized='table', table_formats=['iceberg', 'delta']) }}
select customer_id, first_name from {{ ref('stg_customers') }}
""",
    # A Python UDF sees the profile's `spark.executorEnv.*` in its worker's environment: what
    # PySpark reads from the context's conf as it wraps the engine's context (warm) or its own.
    "py_customers.py": """
import os

from pyspark.sql.functions import udf


def model(dbt, session):
    dbt.config(materialized="table")
    worker_env = udf(lambda _: os.environ.get("LH_WORKER_PROBE", "unset"))
    customers = dbt.ref("stg_customers").selectExpr("customer_id", "upper(first_name) as name")
    return customers.withColumn("worker_env", worker_env("customer_id"))
""",
    "orders_changes.sql": """
{{ config(materialized='incremental', unique_key='order_id') }}
select * from {{ lakehouse.changes(ref('orders')) }}
""",
    "orders_as_of_main.sql": """
{{ config(materialized='table') }}
select * from {{ lakehouse.as_of(ref('orders'), ref_name='main') }}
""",
}
# Columns a run sets from the clock, not from the input (snapshot validity times).
CLOCK_COLUMNS = {"dbt_valid_from", "dbt_valid_to", "dbt_updated_at", "dbt_scd_id"}


def make_project(folder: Path) -> Path:
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("target", "logs", "*_warehouse"))
    for name, text in EXTRA_MODELS.items():
        (folder / "models" / "extra" / name).parent.mkdir(exist_ok=True)
        (folder / "models" / "extra" / name).write_text(text)
    output_yaml = (
        f"      type: lakehouse\n      schema: jaffle\n      threads: 2\n"
        f"      warehouse: {folder / 'warehouse'}\n"
        "      spark: {master: 'local[2]', driver_memory: 2g,\n"
        "              conf: {spark.executorEnv.LH_WORKER_PROBE: from-profile}}\n"
    )
    (folder / "profiles.yml").write_text(
        "jaffle_lakehouse:\n  target: dev\n  outputs:\n"
        f"    dev:\n{output_yaml}"
        f"    audited:\n{output_yaml}      write_audit_publish: true\n"
    )
    return folder


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def table_rows(warehouse: Path) -> dict[str, Any]:
    """Every table's rows, sorted, without the clock columns; the Delta log's rows beside."""
    import deltalake
    from pyiceberg.table import StaticTable

    found: dict[str, Any] = {}
    for metadata_dir in sorted(warehouse.glob("*/*/metadata")):
        files = sorted(metadata_dir.glob("*.metadata.json"), key=lambda p: p.name.split("-")[0])
        if not files or "view-uuid" in json.loads(_read(files[-1])):
            continue
        if metadata_dir.parent.parent.name == "lakehouse_system":
            continue  # the adapter's store of test results (docs/reuse.md): rows per invocation
        rows = StaticTable.from_metadata(str(files[-1])).scan().to_arrow().to_pylist()
        name = f"{metadata_dir.parent.parent.name}.{metadata_dir.parent.name}"
        found[name] = sorted(
            repr(sorted((k, v) for k, v in row.items() if k not in CLOCK_COLUMNS)) for row in rows
        )
        if (metadata_dir.parent / "_delta_log").is_dir():
            delta = deltalake.DeltaTable(str(metadata_dir.parent)).to_pyarrow_table().to_pylist()
            found[f"{name} (delta)"] = sorted(repr(sorted(row.items())) for row in delta)
    return found


def test_cold_and_warm_leave_the_same_rows_first_run_rerun_and_full_refresh(
    engine_home: Path,
    tmp_path: Path,
) -> None:
    home = engine_home
    projects = {mode: make_project(tmp_path / mode) for mode in ("cold", "warm")}
    # The audited rerun and the full refresh on the warm side only (CI time): the cold side's
    # JVM start is most of a step, every step's rows must equal the first build's, and a
    # command's own JVM runs audited builds in test_audit.py (in the test process).
    steps = (
        (("build",), ("cold", "warm")),
        (("build", "--target", "audited"), ("warm",)),
        (("build", "--full-refresh"), ("warm",)),
    )
    first: dict[str, Any] | None = None
    for step, modes in steps:
        # Both sides at once (separate warehouses): the warm build runs while the cold one
        # starts its JVM. --warn-error: no warning of ours (a deprecation our macros trigger,
        # under dbt 1.12's require_all_warnings_handled_by_warn_error among others) passes
        # unseen.
        started = {
            mode: dbt_started(projects[mode], home, "--warn-error", *step, LAKEHOUSE_ENGINE=mode)
            for mode in modes
        }
        rows = {}
        for mode, process in started.items():
            text, _ = process.communicate(timeout=900)
            assert process.returncode == 0, f"{mode} {step}:\n{text[-3000:]}"
            rows[mode] = table_rows(projects[mode] / "warehouse")
        if "cold" in rows:
            assert rows["warm"] == rows["cold"], step
        # Tables for every feature: the sample's, each strategy's, the Python and Delta ones.
        assert len(rows["warm"]) >= 17 and "jaffle.dual_format (delta)" in rows["warm"]
        assert rows["warm"]["jaffle.inc_microbatch"] and rows["warm"]["jaffle.py_customers"]
        probe = "('worker_env', 'from-profile')"
        assert all(probe in row for row in rows["warm"]["jaffle.py_customers"])
        first = first or rows["warm"]
        assert rows["warm"] == first, f"rows after {step} differ from the first build's"
    # The warm side ran on one engine, still up; the cold side started none.
    [engine] = statuses(home)
    assert engine["clients"] == [] and engine["uptime_seconds"] > 0


@pytest.mark.skipif(
    dbt_version.startswith(DEFAULT_DBT_LINE + "."),
    reason="on the default dbt line the test above builds this project under --warn-error",
)
def test_the_feature_project_builds_under_warn_error_on_this_dbt_line(
    engine_home: Path, tmp_path: Path
) -> None:
    """What differs from one dbt line to another is the warnings dbt raises on the adapter's
    macros (behaviour flags, deprecations): the feature project's first build under
    --warn-error, on a JVM of the command's own. Its rows are the test above's claim."""
    project = make_project(tmp_path / "cold")
    process = dbt_started(project, engine_home, "--warn-error", "build", LAKEHOUSE_ENGINE="cold")
    text, _ = process.communicate(timeout=900)
    assert process.returncode == 0, text[-3000:]
    assert "ERROR=0" in text and "WARN=0" in text, text[-3000:]
