"""`dbt-lakehouse serve` on the embedded lakehouse (`local`) and on S3 with the Iceberg REST
catalog (`s3_rest`), one server for the module: dbt-spark's
`method: thrift` (PyHive, the HiveServer2 protocol dbt v2's Spark adapter speaks) builds tables,
a view and an Iceberg merge there that dbt-lakehouse reads back, and the other way round;
beeline and Spark Connect clients with the token, refused without it; two Connect clients at
once, each with its own conf and schema; `serve stop` leaves no process and no port."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.engine.launch import process_running
from dbt.adapters.lakehouse.engine.serve.endpoints import listening
from functional.infra.processes import free_port
from functional.lakehouse.shared.warm import BIN, dbt, environment, output, write_project

pytestmark = pytest.mark.only_profile("local", "s3_rest")
# What the server itself does (its token checks, killed clients, `status` and `stop`) is the same
# whichever depot it serves: on `local` only. `s3_rest` runs what the depot changes: builds,
# merges and reads through its catalog and bucket.
SERVER_ONLY = pytest.mark.only_profile("local")

TOKEN = "serve-test-token-0123456789"  # noqa: S105 - the test server's own
LAKEHOUSE_MODELS = {
    "lh_orders.sql": "{{ config(materialized='table') }}\n"
    "select id, id * 10 as amount, concat('o', id) as name from range(1, 6)",
    # Reads what dbt-spark built through the Thrift endpoint (schema `served`).
    "lh_copy.sql": "{{ config(materialized='table') }}\nselect * from lakehouse.served.sp_merge",
}
# dbt-spark's own macros over Thrift: a table, a view, an incremental merge on Iceberg.
SPARK_MODELS = {
    "sp_table.sql": "{{ config(materialized='table', file_format='iceberg') }}\n"
    "select id, cast(id * 2 as bigint) as doubled from range(1, 4)",
    "sp_view.sql": "{{ config(materialized='view') }}\n"
    "select id, doubled + 1 as plus from {{ ref('sp_table') }}",
    "sp_merge.sql": "{{ config(materialized='incremental', incremental_strategy='merge',"
    " unique_key='id', file_format='iceberg') }}\n"
    "{% if is_incremental() %}select id, 'second' as run from range(3, 6)"
    "{% else %}select id, 'first' as run from range(1, 4){% endif %}",
}


@pytest.fixture(autouse=True)
def _process_left_local() -> Iterator[None]:
    """A remote session marks the whole process as a Spark Connect client for good
    (pyspark sets SPARK_CONNECT_MODE_ENABLED), after which a local session cannot start in it:
    the worker that ran this module goes on to run other modules in-process. And the test's
    sessions are finalized before the next test starts (below)."""
    before = {name: os.environ.get(name) for name in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    # A stopped Connect session is cyclic garbage whose __del__ closes its client: collected
    # inside a later gRPC call on this thread, that close waits for a reattach thread blocked on
    # the lock the call holds, and the worker hangs for good (seen in test_connect_refuses_...,
    # 2026-12-04). Collected here, between tests, it closes with no call in flight.
    gc.collect()


@dataclass
class Server:
    home: Path
    project: Path
    thrift_port: int
    connect_port: int
    storage: str  # where the served catalog keeps its tables (a Location's start)

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "dbt-lakehouse"), "serve", *args],
            cwd=self.project,
            env=environment(self.home, **env),
            capture_output=True,
            text=True,
            timeout=400,
        )

    def states(self) -> list[dict[str, Any]]:
        done = self.cli("status", "--json")
        assert done.returncode == 0, output(done)
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def hive(self, password: str = TOKEN) -> Any:
        from pyhive import hive

        return hive.connect(
            host="127.0.0.1",
            port=self.thrift_port,
            username="tester",
            password=password,
            auth="CUSTOM",
        )

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        connection = self.hive()
        try:
            cursor = connection.cursor()
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            connection.close()

    def connect(self, token: str | None = TOKEN) -> Any:
        from pyspark.sql import SparkSession

        url = f"sc://localhost:{self.connect_port}/" + (f";token={token}" if token else "")
        return SparkSession.builder.remote(f"{url};session_id={uuid.uuid4()}").create()


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    from dbt.adapters.lakehouse.engine.warm.folder import stop_engines

    home = Path(tempfile.mkdtemp(prefix="lh-serve-"))  # short: the control socket's path
    folder = tmp_path_factory.mktemp("serve")
    if request.config.getoption("--profile") == "s3_rest":  # the depot on the test servers
        depots_file = request.getfixturevalue("s3_rest_depots_file")
        request.getfixturevalue("rest_catalog")
        lakehouse = f"depot: dataos://test-s3-rest\ndepots_file: {depots_file}\n"
        storage = "s3"
    else:
        lakehouse = f"warehouse: {folder / 'warehouse'}\n"
        storage = "file:" + str(folder / "warehouse")
    project = write_project(
        folder / "lakehouse",
        LAKEHOUSE_MODELS,
        f"type: lakehouse\nschema: s\nthreads: 2\n{lakehouse}"
        "spark: {master: 'local[2]', driver_memory: 1g}",
    )
    running = Server(home, project, free_port(), free_port(), storage)
    started = running.cli(
        "--profiles-dir",
        str(project),
        "--thrift-port",
        str(running.thrift_port),
        "--connect-port",
        str(running.connect_port),
        LAKEHOUSE_SERVE_TOKEN=TOKEN,
    )
    assert started.returncode == 0, output(started) + (home / "serve.log").read_text()
    assert TOKEN not in output(started)  # a given token is never printed
    yield running
    running.cli("stop")
    stop_engines(home)
    shutil.rmtree(home, ignore_errors=True)


def spark_project(folder: Path, server: Server) -> Path:
    """A dbt-spark project whose profile reaches the lakehouse through the Thrift endpoint."""
    return write_project(
        folder,
        SPARK_MODELS,
        f"type: spark\nmethod: thrift\nhost: 127.0.0.1\nport: {server.thrift_port}\n"
        f"user: tester\npassword: {TOKEN}\nauth: CUSTOM\nschema: served\nthreads: 1",
    )


def test_dbt_spark_builds_over_thrift_and_dbt_lakehouse_reads_it_back(
    server: Server, tmp_path: Path
) -> None:
    project = spark_project(tmp_path / "spark_side", server)
    for run in ("first", "second"):  # the second run merges
        done = dbt(project, server.home, "run")
        assert done.returncode == 0, f"{run} run:\n{output(done)}"
    merged = sorted(server.rows("select id, run from served.sp_merge"))
    assert merged == [(1, "first"), (2, "first"), (3, "second"), (4, "second"), (5, "second")]
    assert sorted(server.rows("select * from served.sp_view")) == [(1, 3), (2, 5), (3, 7)]
    provider = server.rows("describe table extended served.sp_merge")
    assert any("iceberg" in str(value).lower() for row in provider for value in row)
    # In the profile's own lakehouse: the warehouse folder, or the depot's bucket.
    [location] = [str(row[1]) for row in provider if str(row[0]).strip() == "Location"]
    assert location.startswith(server.storage), (location, server.storage)
    # dbt-lakehouse, attached to the same engine, reads what dbt-spark committed: at once.
    done = dbt(server.project, server.home, "run", "-s", "lh_copy")
    assert done.returncode == 0, output(done)
    assert sorted(server.rows("select id, run from s.lh_copy")) == merged


def test_a_table_dbt_lakehouse_built_is_read_through_thrift(server: Server) -> None:
    done = dbt(server.project, server.home, "run", "-s", "lh_orders")
    assert done.returncode == 0, output(done)
    rows = sorted(server.rows("select id, amount, name from s.lh_orders"))
    assert rows == [(i, i * 10, f"o{i}") for i in range(1, 6)]


@SERVER_ONLY
def test_beeline_runs_a_query_with_the_token_and_is_refused_without_it(server: Server) -> None:
    import pyspark

    jars = str(Path(pyspark.__file__).parent / "jars" / "*")
    url = f"jdbc:hive2://127.0.0.1:{server.thrift_port}/default"

    def beeline(*credentials: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["java", "-cp", jars, "org.apache.hive.beeline.BeeLine", "-u", url, *credentials]
            + ["-e", "select 40 + 2 as answer"],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    good = beeline("-n", "tester", "-p", TOKEN)
    assert good.returncode == 0 and "42" in good.stdout, output(good)
    wrong = beeline("-n", "tester", "-p", "not-the-token-at-all")
    assert wrong.returncode != 0 and "Error validating the login" in output(wrong), output(wrong)
    # No password: beeline's SASL exchange ends before a query, with no connection made.
    missing = beeline("-n", "tester", "-p", "")
    assert missing.returncode != 0 and "No current connection" in output(missing), output(missing)
    assert TOKEN not in output(wrong) + output(missing)


def test_connect_clients_merge_at_once_each_in_a_session_of_its_own(server: Server) -> None:
    first, second = server.connect(), server.connect()
    try:
        first.sql("create namespace if not exists lakehouse.connected")
        for name in ("a", "b"):
            first.sql(
                f"create or replace table connected.{name} (id bigint, v string) using iceberg"
            )
            first.sql(f"insert into connected.{name} values (1, 'one'), (2, 'two')")
        failures: list[BaseException] = []

        def merge(spark: Any, table: str) -> None:
            try:
                spark.sql(
                    f"merge into connected.{table} t using (select 2 as id, 'TWO' as v union all "
                    "select 3, 'three') u on t.id = u.id when matched then update set * "
                    "when not matched then insert *"
                ).collect()
            except BaseException as exc:  # reported below, with the other client's
                failures.append(exc)

        threads = [
            threading.Thread(target=merge, args=(spark, table))
            for spark, table in ((first, "a"), (second, "b"))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures, failures
        for table in ("a", "b"):
            rows = sorted(
                tuple(r) for r in second.sql(f"select * from connected.{table}").collect()
            )
            assert rows == [(1, "one"), (2, "TWO"), (3, "three")]
            assert sorted(server.rows(f"select * from connected.{table}")) == rows  # Thrift too
        # One client's SET and USE stay its own.
        first.sql("set spark.sql.shuffle.partitions=3")
        first.sql("use connected")
        assert first.sql("select current_schema()").collect()[0][0] == "connected"
        assert second.sql("select current_schema()").collect()[0][0] != "connected"
        assert second.conf.get("spark.sql.shuffle.partitions") != "3"
    finally:
        first.stop()
        second.stop()


@SERVER_ONLY
@pytest.mark.parametrize("token", ["not-the-token-at-all", None])
def test_connect_refuses_a_wrong_or_missing_token(server: Server, token: str | None) -> None:
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    spark = server.connect(token)
    try:
        with pytest.raises(SparkConnectGrpcException) as refused:
            spark.sql("select 1").collect()
    finally:
        spark.stop()
    assert "authentication token" in str(refused.value)


def _killed_mid_query(server: Server, rows: int, run_async: bool) -> None:
    """A PyHive client started on a query of two tasks (every task slot of the engine's two
    cores) that sleep 3 s on each of `rows` rows, then killed while it runs. Sleeping, its
    length does not depend on the machine or the JIT (a count over 20 billion rows took 5 s
    with C2 and 18 minutes with C1 only)."""
    import sys
    import time

    sleeping = (
        f"select count(*) from range(0, {rows}, 1, 2)"
        " where reflect('java.lang.Thread', 'sleep', cast(3000 as bigint)) is null"
    )
    script = (
        "from pyhive import hive\n"
        f"c = hive.connect(host='127.0.0.1', port={server.thrift_port}, username='k', "
        f"password='{TOKEN}', auth='CUSTOM')\n"
        "cursor = c.cursor()\nprint('connected', flush=True)\n"
        f"cursor.execute({sleeping!r}, async_={run_async})\n"
        "import time; time.sleep(600)\n"
    )
    client = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout is not None and "connected" in client.stdout.readline()
        time.sleep(3)  # the query is running in the engine
    finally:
        client.kill()
        client.wait(30)


@SERVER_ONLY
def test_a_client_killed_mid_query_leaves_the_server_serving(server: Server) -> None:
    """A statement sent synchronously (PyHive's default) runs on to its end on its own thread
    when its client is killed (docs/serving.md): the next query with tasks waits for its slots
    (here 6 s from its start), then the server serves the next client."""
    _killed_mid_query(server, 4, run_async=False)
    assert server.rows("select 6 * 7") == [(42,)]
    assert server.rows("select count(*) from s.lh_orders") == [(5,)]


@SERVER_ONLY
def test_a_killed_clients_asynchronous_query_is_cancelled(server: Server) -> None:
    """dbt-spark sends its statements asynchronously and polls them: when such a client is
    killed, its session closes and its query is cancelled, so a query that would hold both
    task slots for 10 minutes frees them for the next client within seconds."""
    import time

    _killed_mid_query(server, 400, run_async=True)
    began = time.monotonic()
    assert server.rows("select count(*) from s.lh_orders") == [(5,)]
    assert time.monotonic() - began < 30, time.monotonic() - began


@SERVER_ONLY
def test_status_then_stop_leaves_no_process_and_no_port(server: Server) -> None:
    """Last in the module: serve started the engine, so stopping it stops the engine too."""
    [state] = server.states()
    assert state["started_engine"] and state["thrift_port"] == server.thrift_port
    assert TOKEN not in json.dumps(state)
    folder = Path(state["engine_folder"])
    assert TOKEN not in "".join(
        p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()
    )
    stopped = server.cli("stop")
    assert stopped.returncode == 0, output(stopped)
    assert not process_running(state["pid"]) and not process_running(state["jvm_pid"])
    assert not listening("127.0.0.1", server.thrift_port)
    assert not listening("127.0.0.1", server.connect_port)
    assert server.states() == []
    engines = subprocess.run(
        [str(BIN / "dbt-lakehouse"), "engine", "status", "--json"],
        env=environment(server.home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert engines.stdout.strip() == "", engines.stdout
    assert not os.path.exists(folder / "serve.json")
