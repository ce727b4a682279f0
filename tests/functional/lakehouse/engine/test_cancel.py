"""Cancelling a dbt connection stops its Spark work (what dbt does on Ctrl-C): a job group in
process, an operation tag under Spark Connect (engine.py). A query that would run for hours
ends within seconds of the cancel, with an error, and the session keeps serving."""

from __future__ import annotations

import threading
import time

import pytest

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
