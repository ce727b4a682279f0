"""The session's spec: what a profile turns into before any JVM starts, and the Java check."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dbt.adapters.lakehouse import connections
from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.session import (
    _Engine,
    check_master_reachable,
    engine_spec,
    master_addresses,
)


def creds(tmp_path: Path, **spark: object) -> LakehouseCredentials:
    return LakehouseCredentials(
        schema="analytics", warehouse=str(tmp_path / "wh"), spark=SparkOptions(**spark)
    )


def test_embedded_spec(tmp_path: Path, jar_env: dict[str, str]) -> None:
    spec = engine_spec(creds(tmp_path), env=jar_env)
    conf = dict(spec.conf)
    assert conf["spark.sql.extensions"].endswith("IcebergSparkSessionExtensions")
    assert conf["spark.sql.defaultCatalog"] == "lakehouse"
    assert conf["spark.sql.catalog.lakehouse.warehouse"] == f"file:{tmp_path / 'wh'}"
    assert conf["spark.sql.catalog.lakehouse.uri"].startswith("jdbc:h2:file:")
    assert conf["spark.jars"] == f"{jar_env['LAKEHOUSE_H2_JAR']},{jar_env['LAKEHOUSE_ICEBERG_JAR']}"
    # Local mode binds loopback only, and Spark's console goes to our log4j config.
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert "-Dh2.bindAddress=127.0.0.1" in conf["spark.driver.extraJavaOptions"]
    assert "log4j.configurationFile" in conf["spark.driver.extraJavaOptions"]
    assert (tmp_path / "wh").is_dir()


def test_same_profile_same_spec_so_one_session(tmp_path: Path, jar_env: dict[str, str]) -> None:
    first = engine_spec(creds(tmp_path), env=jar_env)
    assert engine_spec(creds(tmp_path), env=jar_env) == first
    changed = engine_spec(creds(tmp_path, master="local[1]"), env=jar_env)
    assert changed != first
    assert changed.fingerprint != first.fingerprint


def test_user_conf_wins_and_keeps_our_java_options(tmp_path: Path, jar_env: dict[str, str]) -> None:
    spec = engine_spec(
        creds(
            tmp_path,
            conf={"spark.sql.shuffle.partitions": "3", "spark.driver.extraJavaOptions": "-Dx=1"},
        ),
        env=jar_env,
    )
    conf = dict(spec.conf)
    assert conf["spark.sql.shuffle.partitions"] == "3"
    assert conf["spark.driver.extraJavaOptions"].endswith("-Dx=1")
    assert "log4j.configurationFile" in conf["spark.driver.extraJavaOptions"]


def test_missing_java_says_how_to_fix_it(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = engine_spec(creds(tmp_path), env=jar_env)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(EngineSetupError) as caught:
        _Engine()._start(spec)
    text = str(caught.value)
    assert "no `java` was found on PATH or in JAVA_HOME" in text
    assert "apt-get install openjdk-17-jre-headless" in text


def test_an_early_start_failure_is_raised_once_at_first_use(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM boots beside dbt's parsing; if that fails, the first connection gets the error
    without a second attempt (a second wait on a held catalog would double the delay)."""
    spec = engine_spec(creds(tmp_path), env=jar_env)
    engine = _Engine()
    starts: list[object] = []

    def failing_start(started_spec: object) -> None:
        starts.append(started_spec)
        raise EngineSetupError("no JVM here")

    monkeypatch.setattr(engine, "_start", failing_start)
    engine.start_early(spec)
    for thread in threading.enumerate():
        if thread.name == "lakehouse-engine-start":
            thread.join(timeout=10)
    with pytest.raises(EngineSetupError, match="no JVM here"):
        engine.get(spec)
    assert starts == [spec]
    with pytest.raises(EngineSetupError):  # a later connection tries again
        engine.get(spec)
    assert len(starts) == 2


def test_the_early_start_is_for_commands_that_run_sql(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(connections.ENGINE, "start_early", started.append)
    monkeypatch.setattr(connections, "resolve_profile", lambda c: type("R", (), {"spec": "s"}))
    profile = creds(tmp_path)
    for command, expected in [("build", True), ("parse", False), ("debug", False), (None, False)]:
        monkeypatch.setattr(connections, "invoked_command", lambda command=command: command)
        assert connections.start_engine_early(profile, {}) is expected
    monkeypatch.setattr(connections, "invoked_command", lambda: "run")
    assert connections.start_engine_early(profile, {"LAKEHOUSE_EARLY_START": "0"}) is False
    assert started == ["s"]


@pytest.mark.parametrize(
    ("master", "addresses"),
    [
        ("spark://10.0.0.5:7077", [("10.0.0.5", 7077)]),
        ("spark://a:7077,b:7078", [("a", 7077), ("b", 7078)]),
        ("spark://host", [("host", 7077)]),
        ("k8s://https://api.example:6443", [("api.example", 6443)]),
        ("k8s://https://api.example", [("api.example", 443)]),
        ("yarn", []),
        ("local[*]", []),
    ],
)
def test_master_addresses(master: str, addresses: list[tuple[str, int]]) -> None:
    assert master_addresses(master) == addresses


def test_unreachable_master_is_named() -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EngineSetupError, match=rf"spark://127.0.0.1:{port} is unreachable"):
        check_master_reachable(f"spark://127.0.0.1:{port}", timeout=2)


def test_cluster_profile_keys(tmp_path: Path, jar_env: dict[str, str]) -> None:
    creds = LakehouseCredentials(
        schema="s",
        warehouse=str(tmp_path),
        spark=SparkOptions(master="spark://h:7077", driver_host="10.1.2.3"),
    )
    spec = engine_spec(creds, env=jar_env, fetch_missing=False)
    conf = dict(spec.conf)
    assert conf["spark.driver.host"] == "10.1.2.3"
    assert "spark.driver.bindAddress" not in conf
    assert spec.local_storage and spec.executor_timeout_seconds == 120
