"""A Spark standalone cluster runs the work (profile `cluster`): the application holds both
workers' cores per the master's JSON status, each worker's executor ran tasks (its stderr in
the worker's work dir says so), and the rows are right. A master that does not answer fails
the start in bounded time with an error naming it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dbt.tests.util import run_dbt

from functional.infra.servers import free_port
from functional.lakehouse.tables import rows

# Eight input partitions, so both one-core executors get tasks.
SPREAD_SQL = """
{{ config(materialized='table', partition_by=['bucket(4, id)']) }}
select id, id % 7 as k from range(0, 20000, 1, 8)
"""


@pytest.mark.only_profile("cluster")
class TestCluster:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"spread.sql": SPREAD_SQL}

    def test_tasks_run_on_both_workers(self, project, spark_cluster):
        run_dbt(["run"])
        assert rows(project, "spread", "count(*), sum(id), count(distinct k)") == [
            (20000, 199990000, 7)
        ]
        status = spark_cluster.status()
        ours = [a for a in status["activeapps"] if a["name"] == "dbt-lakehouse"]
        assert len(ours) == 1, status["activeapps"]
        assert ours[0]["cores"] == 2
        assert sorted(w["coresused"] for w in status["workers"]) == [1, 1]
        logs = spark_cluster.executor_logs()
        for worker, files in logs.items():
            ran = [f for f in files if ours[0]["id"] in str(f)]
            assert ran, f"worker {worker} ran no executor of {ours[0]['id']}: {files}"
            assert any("Running task" in f.read_text(errors="replace") for f in ran), worker


def _failed_start(tmp_path: Path, spark: dict) -> tuple[str, float]:
    """A fresh `dbt run` of a one-model project on the given `spark:` profile section: its
    output and wall time; the run must fail."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "one.sql").write_text("select 1 as id")
    (tmp_path / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "nostart", "version": "1.0", "profile": "nostart"})
    )
    target = {"type": "lakehouse", "schema": "s", "warehouse": str(tmp_path / "wh"), "spark": spark}
    (tmp_path / "profiles.yml").write_text(
        yaml.safe_dump({"nostart": {"target": "t", "outputs": {"t": target}}})
    )
    started = time.monotonic()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "run", "--profiles-dir", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    return output, time.monotonic() - started


@pytest.mark.only_profile("cluster")
def test_unreachable_master_fails_at_once(tmp_path: Path) -> None:
    master = f"spark://127.0.0.1:{free_port()}"  # nothing listens there
    output, seconds = _failed_start(tmp_path, {"master": master, "driver_host": "127.0.0.1"})
    assert f"The Spark master {master} is unreachable from this machine" in output
    # Spark's own registration retries would take a minute and end in "LiveListenerBus is
    # stopped"; the check fails before Spark starts.
    assert "LiveListenerBus" not in output
    assert seconds < 30, seconds
    print(f"unreachable master: failed after {seconds:.1f}s")


@pytest.mark.only_profile("cluster")
def test_master_granting_no_executor_fails_in_bounded_time(tmp_path: Path, spark_cluster) -> None:
    # Each worker offers 1 GB; an executor asking 4 GB is never granted.
    spark = {
        "master": spark_cluster.master_url,
        "driver_host": "127.0.0.1",
        "executor_timeout_seconds": 10,
        "conf": {"spark.executor.memory": "4g"},
    }
    output, seconds = _failed_start(tmp_path, spark)
    assert (
        f"The Spark master {spark_cluster.master_url} gave this application no executor within "
        "10s" in output
    )
    assert seconds < 90, seconds
    print(f"no executor granted: failed after {seconds:.1f}s")
