"""The session's spec: what a profile turns into before any JVM starts, and the Java check."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from dbt.adapters.lakehouse import command_setup
from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.engine.jars import ICEBERG_RUNTIME
from dbt.adapters.lakehouse.engine.jars.lines import LINES
from dbt.adapters.lakehouse.engine.launch import launch_settings
from dbt.adapters.lakehouse.engine.lifecycle import _Engine
from dbt.adapters.lakehouse.engine.masters import (
    check_master_reachable,
    local_storage_warning,
    master_addresses,
    master_addresses_of,
    start_timeout_message,
    yarn_resourcemanager_addresses,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from unit.engine.profile_specs import profile_spec


def creds(tmp_path: Path, **spark: object) -> LakehouseCredentials:
    return LakehouseCredentials(
        schema="analytics", warehouse=str(tmp_path / "wh"), spark=SparkOptions(**spark)
    )


def test_embedded_spec(tmp_path: Path, jar_env: dict[str, str]) -> None:
    spec = profile_spec(creds(tmp_path), env=jar_env)
    conf = dict(spec.conf)
    assert conf["spark.sql.extensions"].endswith("IcebergSparkSessionExtensions")
    assert conf["spark.sql.defaultCatalog"] == "lakehouse"
    assert conf["spark.sql.catalog.lakehouse.warehouse"] == f"file:{tmp_path / 'wh'}"
    assert conf["spark.sql.catalog.lakehouse.uri"] == (
        f"jdbc:sqlite:{tmp_path / 'wh'}/_catalog/iceberg.db?busy_timeout=120000"
    )
    jars = f"{jar_env['LAKEHOUSE_ICEBERG_JAR']},{jar_env['LAKEHOUSE_SQLITE_JAR']}"
    assert conf["spark.jars"] == jars
    assert spec.embedded_catalog is not None
    assert spec.embedded_catalog.database_file == tmp_path / "wh" / "_catalog" / "iceberg.db"
    # Local mode binds loopback only, and Spark's console goes to our log4j config.
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert "log4j.configurationFile" in conf["spark.driver.extraJavaOptions"]


def test_spark_jars_packages_replace_the_sets_they_name(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    iceberg = f"org.apache.iceberg:{ICEBERG_RUNTIME}:1.10.2"
    spec = profile_spec(creds(tmp_path, conf={"spark.jars.packages": iceberg}), env=jar_env)
    conf = dict(spec.conf)
    # Spark resolves the runtime from the coordinates; our jar would be a second copy.
    assert conf["spark.jars"] == jar_env["LAKEHOUSE_SQLITE_JAR"]
    assert conf["spark.jars.packages"] == iceberg


def test_launch_settings_tell_when_the_jvm_must_be_relaunched(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    first = profile_spec(creds(tmp_path), env=jar_env)
    same_jvm = profile_spec(
        creds(tmp_path, conf={"spark.sql.shuffle.partitions": "3"}), env=jar_env
    )
    assert same_jvm.fingerprint != first.fingerprint  # a new session...
    assert launch_settings(same_jvm.conf) == launch_settings(first.conf)  # ...in the same JVM
    extra = tmp_path / "extra.jar"
    extra.write_bytes(b"jar")
    more_jars = profile_spec(creds(tmp_path, jars=[str(extra)]), env=jar_env)
    assert launch_settings(more_jars.conf) != launch_settings(first.conf)
    bigger = profile_spec(creds(tmp_path, driver_memory="3g"), env=jar_env)
    assert launch_settings(bigger.conf) != launch_settings(first.conf)
    assert dict(launch_settings(first.conf))["spark.jars"] == dict(first.conf)["spark.jars"]


def test_same_profile_same_spec_so_one_session(tmp_path: Path, jar_env: dict[str, str]) -> None:
    first = profile_spec(creds(tmp_path), env=jar_env)
    assert profile_spec(creds(tmp_path), env=jar_env) == first
    changed = profile_spec(creds(tmp_path, master="local[1]"), env=jar_env)
    assert changed != first
    assert changed.fingerprint != first.fingerprint


def test_user_conf_wins_and_keeps_our_java_options(tmp_path: Path, jar_env: dict[str, str]) -> None:
    spec = profile_spec(
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
    spec = profile_spec(creds(tmp_path), env=jar_env)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(EngineSetupError) as caught:
        _Engine()._start(spec)
    text = str(caught.value)
    assert "no `java` was found on PATH or in JAVA_HOME" in text
    assert "apt-get install openjdk-17-jre-headless" in text


@pytest.mark.parametrize(
    ("version", "said"),
    [("1.8.0_392", "needs Java 17 or newer"), ("25.0.3", "does not start on Java 25")],
)
def test_a_java_the_line_cannot_run_on_is_refused_naming_the_fix(
    tmp_path: Path,
    jar_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    said: str,
) -> None:
    """Before any JVM starts: Java 25 (installed beside 17 on many machines) would otherwise
    fail inside Spark's launcher with a gateway error and a Hadoop stack trace."""
    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    (jdk / "bin" / "java").write_text("")
    (jdk / "release").write_text(f'JAVA_VERSION="{version}"\n')
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    monkeypatch.setattr(
        "dbt.adapters.lakehouse.engine.jars.lines.check_supported", lambda: LINES["4.1"]
    )
    with pytest.raises(EngineSetupError) as caught:
        _Engine()._start(profile_spec(creds(tmp_path), env=jar_env))
    text = str(caught.value)
    assert said in text and str(jdk / "bin" / "java") in text
    assert "point JAVA_HOME at a JDK 17" in text


def test_an_early_start_failure_is_raised_once_at_first_use(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM boots beside dbt's parsing; if that fails, the first connection gets the error
    without a second attempt (a second wait on a held catalog would double the delay)."""
    spec = profile_spec(creds(tmp_path), env=jar_env)
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


def test_the_exit_does_not_wait_for_an_early_start_nobody_needed(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command whose nodes never asked for the engine ends without waiting for the start it
    made beside the parse; once the session is up and free, the exit ends it as before."""
    spec = profile_spec(creds(tmp_path), env=jar_env)
    engine = _Engine()
    release, ended = threading.Event(), []
    monkeypatch.setattr(engine, "_start", lambda _spec: release.wait(10) and "session")
    monkeypatch.setattr(engine, "_end", lambda spark, _spec: ended.append(spark))
    engine.start_early(spec)
    while not engine._lock.locked():  # the start holds the lock while the JVM comes up
        threading.Event().wait(0.01)
    engine.stop_at_exit()  # returns at once: no wait, nothing ended
    assert ended == [] and engine._lock.locked()
    release.set()
    assert engine.get(spec) == "session"
    engine.stop_at_exit()
    assert ended == ["session"]


def test_the_early_start_is_for_commands_that_run_sql(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(command_setup.ENGINE, "start_early", started.append)
    monkeypatch.setattr(command_setup, "resolve_profile", lambda c: type("R", (), {"spec": "s"}))
    profile = creds(tmp_path)
    for command, expected in [("build", True), ("parse", False), ("debug", False), (None, False)]:
        monkeypatch.setattr(command_setup, "invoked_command", lambda command=command: command)
        assert command_setup.start_engine_early(profile, {}) is expected
    monkeypatch.setattr(command_setup, "invoked_command", lambda: "run")
    assert command_setup.start_engine_early(profile, {"LAKEHOUSE_EARLY_START": "0"}) is False
    assert started == ["s"]


def test_the_early_start_waits_for_the_run_where_decisions_are_remembered(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the embedded lakehouse with a warm engine up and a memo in the target folder, the
    attach is held back until the run's nodes are known (reuse/memo.py); otherwise not."""
    started: list[object] = []
    spec = SimpleNamespace(embedded_catalog=object())
    monkeypatch.setattr(command_setup.ENGINE, "start_early", started.append)
    monkeypatch.setattr(command_setup.ENGINE, "attach_is_quick", lambda s: True)
    monkeypatch.setattr(command_setup, "resolve_profile", lambda c: SimpleNamespace(spec=spec))
    monkeypatch.setattr(command_setup, "invoked_command", lambda: "build")
    profile, target = creds(tmp_path), tmp_path / "target"
    assert command_setup.start_engine_early(profile, {}, target_path=str(target)) is True
    target.mkdir()
    (target / command_setup.MEMO_FILE).write_text("{}")
    try:
        assert command_setup.start_engine_early(profile, {}, target_path=str(target)) is False
        assert started == [spec] and command_setup.ENGINE.has_deferred()
        assert command_setup.ENGINE.start_deferred() and started == [spec, spec]
        assert not command_setup.ENGINE.has_deferred()
        # a project file changed since the memo's last run: the attach begins beside the parse
        edited = tmp_path / "stg.sql"
        edited.write_text("select 2")
        stamp = edited.stat().st_mtime - 30
        os.utime(target / command_setup.MEMO_FILE, (stamp, stamp))
        assert not command_setup.start_engine_early(
            profile, {}, str(tmp_path), None, str(target), [edited]
        )
        for thread in threading.enumerate():
            if thread.name == "lakehouse-edits":
                thread.join(5)
        assert started == [spec] * 3 and not command_setup.ENGINE.has_deferred()
        monkeypatch.setattr(command_setup, "invoked_command", lambda: "show")
        assert command_setup.start_engine_early(profile, {}, target_path=str(target)) is True
    finally:
        command_setup.ENGINE.defer_start(None)  # type: ignore[arg-type]


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
    spec = profile_spec(creds, env=jar_env, fetch_missing=False)
    conf = dict(spec.conf)
    assert conf["spark.driver.host"] == "10.1.2.3"
    assert "spark.driver.bindAddress" not in conf
    assert spec.local_storage and spec.executor_timeout_seconds == 120


def _yarn_site(folder: Path, **properties: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    entries = "".join(
        f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items()
    )
    (folder / "yarn-site.xml").write_text(
        f'<?xml version="1.0"?><configuration>{entries}</configuration>'
    )
    return folder


def test_yarn_resourcemanager_from_hadoop_conf(tmp_path: Path) -> None:
    yarn_dir = _yarn_site(tmp_path / "yarn", **{"yarn.resourcemanager.address": "rm.a:9032"})
    hadoop_dir = _yarn_site(
        tmp_path / "hadoop", **{"yarn.resourcemanager.address": "rm.hadoop:1", "x": "y"}
    )
    env = {"YARN_CONF_DIR": str(yarn_dir), "HADOOP_CONF_DIR": str(hadoop_dir)}
    # YARN_CONF_DIR comes first on Spark's classpath, so its file wins.
    assert yarn_resourcemanager_addresses({}, env) == [("rm.a", 9032)]
    # The profile's spark.hadoop.* conf wins over both.
    overridden = {"spark.hadoop.yarn.resourcemanager.address": "rm.b:7"}
    assert yarn_resourcemanager_addresses(overridden, env) == [("rm.b", 7)]
    # Only a hostname: the default port, through Hadoop's ${} substitution.
    only_host = _yarn_site(tmp_path / "host", **{"yarn.resourcemanager.hostname": "rm.c"})
    assert yarn_resourcemanager_addresses({}, {"HADOOP_CONF_DIR": str(only_host)}) == [
        ("rm.c", 8032)
    ]
    ha = _yarn_site(
        tmp_path / "ha",
        **{
            "yarn.resourcemanager.ha.enabled": "true",
            "yarn.resourcemanager.ha.rm-ids": "rm1, rm2",
            "yarn.resourcemanager.address.rm1": "${yarn.resourcemanager.hostname.rm1}:8050",
            "yarn.resourcemanager.hostname.rm1": "one",
            "yarn.resourcemanager.hostname.rm2": "two",
        },
    )
    assert yarn_resourcemanager_addresses({}, {"YARN_CONF_DIR": str(ha)}) == [
        ("one", 8050),
        ("two", 8032),
    ]


def test_yarn_without_hadoop_conf_says_which_variables(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    spec = profile_spec(creds(tmp_path, master="yarn"), env=jar_env, fetch_missing=False)
    with pytest.raises(EngineSetupError) as caught:
        master_addresses_of(spec, env={})
    text = str(caught.value)
    assert "The Spark master yarn needs Hadoop's conf" in text
    assert "neither YARN_CONF_DIR nor HADOOP_CONF_DIR is set" in text


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_resourcemanager_is_named(tmp_path: Path, jar_env: dict[str, str]) -> None:
    port = _closed_port()
    conf_dir = _yarn_site(
        tmp_path / "conf", **{"yarn.resourcemanager.address": f"127.0.0.1:{port}"}
    )
    spec = profile_spec(creds(tmp_path, master="yarn"), env=jar_env, fetch_missing=False)
    addresses = master_addresses_of(spec, env={"YARN_CONF_DIR": str(conf_dir)})
    assert addresses == [("127.0.0.1", port)]
    with pytest.raises(EngineSetupError) as caught:
        check_master_reachable("yarn", timeout=2, addresses=addresses)
    assert f"master yarn is unreachable from this machine (ResourceManager 127.0.0.1:{port}" in (
        str(caught.value)
    )


def test_start_timeout_and_local_folder_messages_name_the_master(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    master = "k8s://https://api.example:6443"
    spec = profile_spec(
        creds(tmp_path, master=master, executor_timeout_seconds=15),
        env=jar_env,
        fetch_missing=False,
    )
    text = start_timeout_message(spec)
    assert text.startswith(
        f"The Spark master {master} (the Kubernetes API server at api.example:6443) did not "
        "accept this application within 15s"
    ), text
    assert "Raise spark.executor_timeout_seconds" in text
    warning = local_storage_warning(spec)
    assert f"Spark master {master} with depot " in warning
    assert "Use an S3 depot with a cluster" in warning
