"""Two profiles with other credentials on one warm engine: the catalog's token is part of each
command's own session, so a command with a wrong token is refused by the REST catalog even
right after one with the right token ran on the same engine, and never gets its token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from functional.lakehouse.shared.warm import (
    dbt,
    output,
    statuses,
    write_project,
)

pytestmark = pytest.mark.only_profile("s3_rest")

MODELS = {"base.sql": "{{ config(materialized='table') }}\nselect * from range(3)"}


def test_a_wrong_token_is_refused_on_the_engine_a_right_one_used(
    engine_home: Path, tmp_path: Path, s3_rest_depots_file: Path, rest_catalog: Any
) -> None:
    home = engine_home
    project = write_project(
        tmp_path / "p",
        MODELS,
        "type: lakehouse\nschema: warm_credentials\nthreads: 1\n"
        f"depot: dataos://test-s3-rest\ndepots_file: {s3_rest_depots_file}\n"
        "spark: {master: 'local[1]', driver_memory: 1g}",
    )
    done = dbt(project, home, "run")
    assert done.returncode == 0, output(done)
    [engine] = statuses(home)
    refused_before = rest_catalog.status_counts().get(401, 0)
    # Same profile, same engine; only the depot's apikey differs.
    wrong = dbt(project, home, "run", LAKEHOUSE_TEST_REST_TOKEN="not-the-token")
    assert wrong.returncode != 0, output(wrong)
    assert rest_catalog.status_counts().get(401, 0) > refused_before
    assert "not-the-token" not in output(wrong) and rest_catalog.token not in output(wrong)
    [same] = statuses(home)
    assert same["jvm_pid"] == engine["jvm_pid"]
    done = dbt(project, home, "run")
    assert done.returncode == 0, output(done)
