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
