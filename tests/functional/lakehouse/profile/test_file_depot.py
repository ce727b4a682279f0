"""A file depot as most people first write one: a folder that does not exist yet and a hadoop
catalog, as the profile's depot and as a mounted one. Its first `dbt debug` creates both
folders, and a build and a `--full-refresh` leave the same rows in each (for a table, a
rerun without reuse runs the full refresh's statements, so it is not run here too). A read-only
mount's missing folder is named, not created. Each table takes its table defaults from the depot
it is in: the profile's depot sets `tableFormats: [iceberg, delta]`, the mounted one
`formatVersion: 3`.

Each command is its own `dbt` process, as a user runs them: the test process's shared session
belongs to the profile under test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.only_profile("local")

# Each model's rows, checked by a data test after every build: it fails on any other rows.
MODELS = {
    "orders.sql": (
        "{{ config(materialized='table') }}\nselect * from values (1, 'a'), (2, 'b') as t(id, v)"
    ),
    "raw_orders.sql": (
        "{{ config(materialized='table', database='raw') }}\n"
        "select id * 10 as id, v from {{ ref('orders') }}"
    ),
}
ROW_TESTS = {
    "orders_rows.sql": (
        "select * from (select count(*) as n, sum(id) as s, max(v) as v from {{ ref('orders') }})"
        " where not (n = 2 and s = 3 and v = 'b')"
    ),
    "raw_orders_rows.sql": (
        "select * from (select count(*) as n, sum(id) as s from {{ ref('raw_orders') }})"
        " where not (n = 2 and s = 30)"
    ),
}


def write_project(root: Path, depots: str, lake_spec: str = "", raw_spec: str = "") -> Path:
    project = root / "proj"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "dbt_project.yml").write_text(
        "name: file_depot\nversion: '1.0'\nconfig-version: 2\nprofile: file_depot\n"
    )
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    for name, sql in ROW_TESTS.items():
        (project / "tests" / name).write_text(sql)
    (project / "depots.yml").write_text(
        "depots:\n"
        "  filelake:\n    type: lakehouse\n"
        f"    spec: {{storageType: file, file: {{path: {root / 'new' / 'lake'}}}{lake_spec}}}\n"
        "    catalog: {type: hadoop}\n"
        "  rawlake:\n    type: lakehouse\n"
        f"    spec: {{storageType: file, file: {{path: {root / 'new' / 'raw'}}}{raw_spec}}}\n"
        "    catalog: {type: hadoop}\n"
    )
    (project / "profiles.yml").write_text(
        "file_depot:\n  target: dev\n  outputs:\n    dev:\n      type: lakehouse\n"
        "      schema: s\n      depot: dataos://filelake\n"
        f"      depots_file: {project / 'depots.yml'}\n      depots: {depots}\n"
    )
    return project


def dbt(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *args, "--profiles-dir", str(project)],
        cwd=str(project),
        capture_output=True,
        text=True,
        timeout=600,
    )


def format_version(table: Path) -> int:
    """The table's format version in its current metadata (the hadoop catalog's newest vN)."""
    newest = max((table / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:-14]))
    return int(json.loads(newest.read_text())["format-version"])


def test_a_fresh_file_depot_and_mount_work_from_the_first_command(tmp_path: Path) -> None:
    project = write_project(
        tmp_path,
        "{raw: dataos://rawlake}",
        lake_spec=", tableFormats: [iceberg, delta]",
        raw_spec=", formatVersion: 3",
    )
    debug = dbt(project, "debug")
    output = debug.stdout + debug.stderr
    assert debug.returncode == 0, output[-3000:]
    assert "Namespace does not exist" not in output
    assert (tmp_path / "new" / "lake").is_dir() and (tmp_path / "new" / "raw").is_dir()
    for args in (["build"], ["build", "--full-refresh"]):
        built = dbt(project, *args)
        output = built.stdout + built.stderr
        # PASS=4: two models and the two data tests that fail on any other rows.
        assert built.returncode == 0 and "PASS=4" in output, f"{args}: {output[-3000:]}"
        # Table defaults are the depot's the table is in, never the profile's depot's for all.
        orders, raw_orders = tmp_path / "new/lake/s/orders", tmp_path / "new/raw/s/raw_orders"
        assert (orders / "_delta_log").is_dir() and not (raw_orders / "_delta_log").exists()
        assert (format_version(orders), format_version(raw_orders)) == (2, 3), args
    # Each table lives in its own depot's folder, as the hadoop catalog lays it out.
    assert list((tmp_path / "new" / "lake" / "s" / "orders" / "metadata").glob("*.json"))
    assert list((tmp_path / "new" / "raw" / "s" / "raw_orders" / "metadata").glob("*.json"))
    assert not (tmp_path / "new" / "lake" / "s" / "raw_orders").exists()


def test_a_read_only_mounts_missing_folder_is_named(tmp_path: Path) -> None:
    project = write_project(tmp_path, "{raw: {depot: dataos://rawlake, read_only: true}}")
    debug = dbt(project, "debug")
    output = debug.stdout + debug.stderr
    assert debug.returncode != 0
    assert f"its folder {tmp_path / 'new' / 'raw'} does not exist" in output
    assert "mounted read_only" in output and "not created" in output
    assert not (tmp_path / "new" / "raw").exists()
