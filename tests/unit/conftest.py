"""Shared unit-test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def jar_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Jar overrides pointing at files that exist, so no fetch and no wheel lookup happens."""
    env = {}
    for variable, name in (
        ("LAKEHOUSE_ICEBERG_JAR", "iceberg.jar"),
        ("LAKEHOUSE_H2_JAR", "h2.jar"),
        ("LAKEHOUSE_SQLITE_JAR", "sqlite.jar"),
        ("LAKEHOUSE_HADOOP_AWS_JAR", "hadoop-aws.jar"),
        ("LAKEHOUSE_AWS_SDK_JAR", "aws-sdk.jar"),
    ):
        (tmp_path / name).write_bytes(b"jar")
        env[variable] = str(tmp_path / name)
        monkeypatch.setenv(variable, env[variable])
    return env
