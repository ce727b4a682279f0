"""A Spark standalone cluster runs the work (profile `cluster`): the application holds both
workers' cores per the master's JSON status, each worker's executor ran tasks (its stderr in
the worker's work dir says so), and the rows are right. A master that does not answer fails
the start in bounded time with an error naming it: a standalone, YARN or Kubernetes one whose
port is closed at once (before any JVM starts), one whose port accepts but never answers
after `executor_timeout_seconds` (the SparkContext's creation is given up and its JVM killed),
one that grants no executor after `executor_timeout_seconds` too. Each prints its elapsed
time (`report_elapsed`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.engine.jars.lines import COMET_LINES, installed_line
from dbt.adapters.lakehouse.engine.native import platform_problem, this_platform
from functional.infra.processes import free_port
from functional.lakehouse.shared.tables import rows, table

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


BY_K_SQL = """
{{ config(materialized='table') }}
select k, count(*) as n, sum(id) as s from {{ ref('spread') }} group by k
"""
COMET_PLUGIN_STARTED = "Initialized executor component for plugin org.apache.spark.CometPlugin"


@pytest.mark.only_profile("cluster")
@pytest.mark.skipif(
    installed_line().spark not in COMET_LINES or platform_problem(this_platform()) is not None,
    reason="Comet runs on the 4.1 line, on a machine its native library loads on",
)
class TestCometOnCluster:
    """`engine: {native: comet}` on a standalone cluster: each worker's executor starts Comet's
    plugin (its jar is on the executors' classpath, engine/native.py), the plan of an aggregate
    is Comet's, and its rows are the ones computed here."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        return {**dbt_profile_target, "engine": {"native": "comet"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"spread.sql": SPREAD_SQL, "by_k.sql": BY_K_SQL}

    def test_executors_run_comet(self, project, spark_cluster):
        run_dbt(["run"])
        expected = {}
        for i in range(20000):
            n, s = expected.get(i % 7, (0, 0))
            expected[i % 7] = (n + 1, s + i)
        assert rows(project, "by_k") == sorted((k, n, s) for k, (n, s) in expected.items())
        plan = project.run_sql(
            f"explain select k, count(*) from {table(project, 'spread')} group by k", fetch="all"
        )
        assert "CometHashAggregate" in str(plan), plan
        started = {
            worker
            for worker, files in spark_cluster.executor_logs().items()
            for f in files
            if COMET_PLUGIN_STARTED in f.read_text(errors="replace")
        }
        assert len(started) == 2, spark_cluster.executor_logs()


def _failed_start(
    tmp_path: Path, spark: dict, env: dict[str, str] | None = None
) -> tuple[str, float]:
    """A fresh `dbt run` of a one-model project on the given `spark:` profile section (and
    extra environment variables): its output and wall time; the run must fail. The process
    must also end: a JVM left waiting on a cluster manager would keep it alive until the
    timeout below."""
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
        env={**os.environ, **(env or {})},
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    return output, time.monotonic() - started


@pytest.fixture
def report_elapsed(
    request: pytest.FixtureRequest, record_property: Any, tmp_path: Path
) -> Callable[[str, float], None]:
    """Report how long a failing start took, on pass too: on the terminal (past output
    capture), in the JUnit XML (`record_property`) and in `elapsed.txt` in the test's tmp dir."""

    def report(what: str, seconds: float) -> None:
        line = f"{what}: failed after {seconds:.1f}s"
        record_property(f"{what} seconds", f"{seconds:.1f}")
        (tmp_path / "elapsed.txt").write_text(line + "\n")
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None or capture is None:
            print(line)
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\n{line}")

    return report


# The local-folder warning, given before Spark starts: shown whatever the master does next.
LOCAL_FOLDER_WARNING = "whose tables are in a folder on this machine: executors on other hosts"


@pytest.mark.only_profile("cluster")
def test_unreachable_master_fails_at_once(
    tmp_path: Path, report_elapsed: Callable[[str, float], None]
) -> None:
    master = f"spark://127.0.0.1:{free_port()}"  # nothing listens there
    output, seconds = _failed_start(tmp_path, {"master": master, "driver_host": "127.0.0.1"})
    assert f"The Spark master {master} is unreachable from this machine" in output
    assert f"Spark master {master} with depot " in output and LOCAL_FOLDER_WARNING in output
    # Spark's own registration retries would take a minute and end in "LiveListenerBus is
    # stopped"; the check fails before Spark starts.
    assert "LiveListenerBus" not in output
    assert seconds < 30, seconds
    report_elapsed("unreachable master", seconds)


@pytest.mark.only_profile("cluster")
def test_master_granting_no_executor_fails_in_bounded_time(
    tmp_path: Path, spark_cluster, report_elapsed: Callable[[str, float], None]
) -> None:
    # Each worker offers 2 GB (cluster.py, worker_memory); an executor asking 4 GB is never
    # granted.
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
    assert f"Spark master {spark_cluster.master_url} with depot " in output
    assert LOCAL_FOLDER_WARNING in output
    assert seconds < 90, seconds
    report_elapsed("no executor granted", seconds)


def _yarn_conf_dir(tmp_path: Path, rm_port: int) -> dict[str, str]:
    """A Hadoop conf folder whose yarn-site.xml puts the ResourceManager on 127.0.0.1:rm_port,
    as the environment variables that point Spark (and the adapter) at it."""
    conf_dir = tmp_path / "hadoop-conf"
    conf_dir.mkdir()
    (conf_dir / "yarn-site.xml").write_text(
        '<?xml version="1.0"?>\n<configuration>\n'
        "  <property><name>yarn.resourcemanager.address</name>"
        f"<value>127.0.0.1:{rm_port}</value></property>\n"
        "</configuration>\n"
    )
    return {"YARN_CONF_DIR": str(conf_dir), "HADOOP_CONF_DIR": str(conf_dir)}


@pytest.mark.only_profile("cluster")
def test_yarn_without_a_resourcemanager_fails_at_once(
    tmp_path: Path, report_elapsed: Callable[[str, float], None]
) -> None:
    rm_port = free_port()  # nothing listens there
    output, seconds = _failed_start(tmp_path, {"master": "yarn"}, _yarn_conf_dir(tmp_path, rm_port))
    assert (
        f"The Spark master yarn is unreachable from this machine (ResourceManager "
        f"127.0.0.1:{rm_port}: Connection refused)" in output
    ), output
    # dbt's own start is most of it (10-25 s on a loaded 2-core machine); no JVM starts.
    assert seconds < 60, seconds
    report_elapsed("yarn, ResourceManager port closed", seconds)


# YARN's client: a Kubernetes master blocks the start the same way and is given up by the same
# wait (its line naming the API server: tests/unit/engine/test_lifecycle.py; CI time).
@pytest.mark.only_profile("cluster")
def test_cluster_manager_that_never_answers_is_given_up(
    tmp_path: Path, report_elapsed: Callable[[str, float], None]
) -> None:
    """The ResourceManager's port accepts connections (the kernel completes them for a
    listening socket) but nothing answers, so the TCP check passes and creating the
    SparkContext blocks (the YARN client would retry for 15 minutes). The start gives up after
    executor_timeout_seconds naming the master and the address, kills the JVM, and dbt exits."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        spark = {"master": "yarn", "driver_host": "127.0.0.1", "executor_timeout_seconds": 10}
        output, seconds = _failed_start(tmp_path, spark, _yarn_conf_dir(tmp_path, port))
    assert (
        f"The Spark master yarn (the ResourceManager at 127.0.0.1:{port}) did not accept this "
        "application within 10s" in output
    ), output
    assert seconds < 90, seconds
    report_elapsed("yarn, cluster manager silent", seconds)


@pytest.mark.only_profile("cluster")
def test_k8s_api_server_unreachable_fails_at_once(
    tmp_path: Path, report_elapsed: Callable[[str, float], None]
) -> None:
    port = free_port()  # nothing listens there
    master = f"k8s://https://127.0.0.1:{port}"
    output, seconds = _failed_start(tmp_path, {"master": master, "driver_host": "127.0.0.1"})
    assert (
        f"The Spark master {master} is unreachable from this machine (Kubernetes API server "
        f"127.0.0.1:{port}: Connection refused)" in output
    ), output
    assert seconds < 60, seconds
    report_elapsed("k8s, API server port closed", seconds)
