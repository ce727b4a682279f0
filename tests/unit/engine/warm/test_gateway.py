"""PySpark's attach sees the JVM's port and secret; the process environment never does
(engine/warm/gateway.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pyspark import java_gateway

from dbt.adapters.lakehouse.engine.warm.gateway import attach_gateway


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stands in for PySpark's attach, recording what it and the process each see."""
    seen: dict[str, Any] = {}

    def launch_gateway() -> str:
        seen["pyspark"] = {
            name: java_gateway.os.environ.get(name)
            for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "HOME")
        }
        seen["process"] = sorted(name for name in os.environ if name.startswith("PYSPARK_GATEWAY"))
        seen["path_join"] = java_gateway.os.path.join("a", "b")
        return "gateway"

    monkeypatch.setattr(java_gateway, "launch_gateway", launch_gateway)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_SECRET", raising=False)
    return seen


def test_pyspark_sees_the_port_and_secret_and_the_rest_of_the_environment(seen):
    assert attach_gateway(41234, "s3cr3t") == "gateway"
    assert seen["pyspark"] == {
        "PYSPARK_GATEWAY_PORT": "41234",
        "PYSPARK_GATEWAY_SECRET": "s3cr3t",
        "HOME": os.environ.get("HOME"),
    }
    assert seen["path_join"] == os.path.join("a", "b")


def test_the_process_environment_is_never_written(seen):
    attach_gateway(41234, "s3cr3t")
    assert seen["process"] == []
    assert "PYSPARK_GATEWAY_SECRET" not in os.environ


def test_pyspark_gets_its_os_module_back_even_when_the_attach_fails(
    monkeypatch: pytest.MonkeyPatch,
):
    def refused() -> None:
        raise ConnectionRefusedError("no JVM")

    monkeypatch.setattr(java_gateway, "launch_gateway", refused)
    with pytest.raises(ConnectionRefusedError):
        attach_gateway(1, "x")
    assert java_gateway.os is os


class RecordingClient:
    """A pinned-thread py4j client's surface as the release reads it: where it connects, its
    finalizer thread's queue, and the deletions it is told to send."""

    def __init__(self, port: int) -> None:
        from collections import deque

        self.address, self.port = "127.0.0.1", port
        self.finalizer_deque: Any = deque()
        self.sent: list[tuple[str, bool]] = []

    def garbage_collect_object(self, target_id: str, enqueue: bool = True) -> None:
        self.sent.append((target_id, enqueue))


def test_a_detach_sends_the_deletion_of_every_handle_it_still_holds_or_queued():
    from py4j.finalizer import ThreadSafeFinalizer

    from dbt.adapters.lakehouse.engine.warm.gateway import _release_java_objects

    ours, other = RecordingClient(40001), RecordingClient(40002)
    stop_signal = object()
    ours.finalizer_deque.extend([(ours, "o7"), stop_signal, (other, "o9")])
    keys = {"127.0.0.140001o1": None, "127.0.0.140001o2": None, "127.0.0.140002o3": None}
    ThreadSafeFinalizer.finalizers.update(keys)
    try:
        _release_java_objects(type("Gateway", (), {"_gateway_client": ours})())
        assert sorted(ours.sent) == [("o1", False), ("o2", False), ("o7", False)]
        assert other.sent == []
        # Another client's handle and queued deletion, and the worker's stop signal, stay.
        assert "127.0.0.140002o3" in ThreadSafeFinalizer.finalizers
        assert not any(key.startswith("127.0.0.140001") for key in ThreadSafeFinalizer.finalizers)
        left = list(ours.finalizer_deque)
        assert len(left) == 2 and stop_signal in left and (other, "o9") in left
    finally:
        for key in keys:
            ThreadSafeFinalizer.finalizers.pop(key, None)
