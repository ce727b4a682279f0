"""A file depot as most people first write one: a folder that does not exist yet and a hadoop
catalog, as the profile's depot and as a mounted one. Its first `dbt debug` creates both
folders, and a build, a rerun and a `--full-refresh` leave the same rows in each. A read-only
mount's missing folder is named, not created.

Each command is its own `dbt` process, as a user runs them: the test process's shared session
belongs to the profile under test."""

from __future__ import annotations

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


def write_project(root: Path, depots: str) -> Path:
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
        f"    spec: {{storageType: file, file: {{path: {root / 'new' / 'lake'}}}}}\n"
        "    catalog: {type: hadoop}\n"
        "  rawlake:\n    type: lakehouse\n"
        f"    spec: {{storageType: file, file: {{path: {root / 'new' / 'raw'}}}}}\n"
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


def test_a_fresh_file_depot_and_mount_work_from_the_first_command(tmp_path: Path) -> None:
    project = write_project(tmp_path, "{raw: dataos://rawlake}")
    debug = dbt(project, "debug")
    output = debug.stdout + debug.stderr
    assert debug.returncode == 0, output[-3000:]
    assert "Namespace does not exist" not in output
    assert (tmp_path / "new" / "lake").is_dir() and (tmp_path / "new" / "raw").is_dir()
    for args in (["build"], ["build"], ["build", "--full-refresh"]):
        built = dbt(project, *args)
        output = built.stdout + built.stderr
        # PASS=4: two models and the two data tests that fail on any other rows.
        assert built.returncode == 0 and "PASS=4" in output, f"{args}: {output[-3000:]}"
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
