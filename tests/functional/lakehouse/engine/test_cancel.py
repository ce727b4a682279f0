"""Cancelling a dbt connection stops its Spark work (what dbt does on Ctrl-C): a job group in
process, an operation tag under Spark Connect (engine.py). A query that would run for hours
ends within seconds of the cancel, with an error, and the session keeps serving. The same
connections answer long results without Nagle's 40 ms wait (engine/py4j_nodelay.py)."""

from __future__ import annotations

import socket
import statistics
import threading
import time

import pytest

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.engine.py4j_nodelay import serving_connection

# Cancelling is the engine's (a job group, or a Connect tag), whatever the storage and catalog.
pytestmark = pytest.mark.only_profile("local", "connect")

# Far more rows than the test waits for: only a cancel ends it in time.
ENDLESS = "select sum(id * 7 % 13) as s from range(0, 500000000000, 1, 4)"


def test_cancel_stops_the_connections_running_query(project):
    adapter = project.adapter
    outcome: dict[str, object] = {}

    def run() -> None:
        with adapter.connection_named("cancel-me"):
            connection = adapter.connections.get_thread_connection()
            outcome["connection"] = connection
            cursor = connection.handle.cursor()
            started = time.monotonic()
            try:
                cursor.execute(ENDLESS)
                outcome["rows"] = cursor.fetchall()
            except Exception as exc:
                outcome["error"] = exc
            outcome["seconds"] = time.monotonic() - started

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    time.sleep(8)  # the query's job is running by now
    assert worker.is_alive(), outcome
    asked = time.monotonic()
    adapter.connections.cancel(outcome["connection"])
    worker.join(timeout=60)
    assert not worker.is_alive(), "the query kept running after the cancel"
    assert "rows" not in outcome, outcome
    assert "error" in outcome
    assert time.monotonic() - asked < 60
    # The shared session still answers.
    assert project.run_sql("select 41 + 1", fetch="one")[0] == 42


@pytest.mark.only_profile("local")
def test_py4j_connections_answer_without_nagles_delay(project):
    """engine/py4j_nodelay.py: a thread's py4j connection has TCP_NODELAY on both ends once it
    carried a call, so an answer longer than py4j's 8 KiB buffer is not held 40 ms for an ACK."""
    project.run_sql("select 1", fetch="one")
    spark = ENGINE.active
    jvm = spark.sparkContext._jvm
    client = spark.sparkContext._gateway._gateway_client

    def nodelay() -> tuple[bool, bool]:
        jvm_side = serving_connection(jvm, jvm.java.lang.Thread.currentThread()).getSocket()
        own = client.get_thread_connection().socket
        return jvm_side.getTcpNoDelay(), bool(
            own.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        )

    assert nodelay() == (True, True)
    seen: list[tuple[bool, bool]] = []
    worker = threading.Thread(target=lambda: seen.append(nodelay()))  # a connection of its own
    worker.start()
    worker.join(timeout=60)
    assert seen == [(True, True)]
    repeat = jvm.org.apache.commons.lang3.StringUtils.repeat  # commons-lang3 ships with Spark
    took = []
    for _ in range(5):
        started = time.perf_counter()
        assert len(repeat("x", 65536)) == 65536
        took.append(time.perf_counter() - started)
    assert statistics.median(took) < 0.025, took
