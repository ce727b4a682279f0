"""Native execution (Comet): the platform checks, the off-heap rule, the 3.5 refusal, the launch
settings, and what reaches the spec and the warm engine's identity."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.credentials import EngineOptions, LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.engine import native
from dbt.adapters.lakehouse.engine.jars.lines import COMET_LINES, installed_line
from dbt.adapters.lakehouse.engine.launch import launch_settings
from dbt.adapters.lakehouse.engine.native import (
    Platform,
    comet_conf,
    line_refusal,
    memory_mib,
    native_engine,
    off_heap_size,
    platform_problem,
)
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.engine.warm.identity import engine_key
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from unit.engine.profile_specs import profile_spec

GOOD = Platform("Linux", "x86_64", "2.36", frozenset({"sse4_2", "avx", "avx2"}))


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        (GOOD, None),
        (Platform("Linux", "aarch64", "2.31", frozenset()), None),  # no AVX2 asked on ARM
        (Platform("Linux", "arm64", "2.30", frozenset()), None),
        (Platform("Darwin", "arm64", "", frozenset()), "built for Linux amd64 and aarch64"),
        (Platform("Linux", "riscv64", "2.36", frozenset()), "this is Linux riscv64"),
        (Platform("Linux", "x86_64", "", frozenset({"avx2"})), "C library is not glibc"),
        (Platform("Linux", "x86_64", "2.28", frozenset({"avx2"})), "this system has 2.28"),
        (
            Platform("Linux", "x86_64", "2.36", frozenset({"avx", "sse4_2"})),
            "needs a CPU with AVX2",
        ),
    ],
)
def test_platform_checks(machine: Platform, expected: str | None) -> None:
    problem = platform_problem(machine)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_glibc_versions_compare_as_numbers() -> None:
    assert platform_problem(GOOD.__class__("Linux", "x86_64", "2.100", GOOD.cpu_flags)) is None
    assert platform_problem(GOOD.__class__("Linux", "x86_64", "1.99", GOOD.cpu_flags))


@pytest.mark.parametrize(
    ("size", "mib"), [("4g", 4096), ("512m", 512), ("2G", 2048), ("1t", 1 << 20), ("3072k", 3)]
)
def test_memory_sizes_read_as_spark_does(size: str, mib: int) -> None:
    assert memory_mib(size) == mib


def test_an_unreadable_memory_size_is_named() -> None:
    with pytest.raises(EngineSetupError, match="'lots'"):
        memory_mib("lots")


def test_off_heap_is_the_heap_of_the_jvm_running_tasks() -> None:
    # Local master: the driver runs the tasks; Spark's 1g when driver memory is unset.
    assert off_heap_size({"spark.driver.memory": "5g"}, local=True) == "5120m"
    assert off_heap_size({}, local=True) == "1024m"
    # Cluster: each executor's heap, not the driver's.
    conf = {"spark.driver.memory": "8g", "spark.executor.memory": "2g"}
    assert off_heap_size(conf, local=False) == "2048m"
    assert off_heap_size({"spark.driver.memory": "8g"}, local=False) == "1024m"


def test_the_35_line_is_refused_naming_the_41_line() -> None:
    error = line_refusal("comet", "3.5")
    assert error is not None
    first_line = error.msg.splitlines()[0]
    assert "Spark 4.1 line only" in first_line and "3.5 line" in first_line
    assert line_refusal("comet", "4.1") is None
    with pytest.raises(EngineSetupError, match="4.1 line only"):
        native_engine("comet", connect=False, line="3.5", machine=GOOD)


def test_a_failed_check_says_why_once_and_runs_on_the_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(native, "_said", set())
    monkeypatch.setattr(native.logger, "warning", said.append)
    old = Platform("Linux", "x86_64", "2.17", frozenset({"avx2"}))
    for _ in range(3):
        assert native_engine("comet", connect=False, line="4.1", machine=old) is None
    assert len(said) == 1
    assert "2.17" in said[0] and "running on Spark's JVM execution" in said[0]
    assert native_engine("comet", connect=False, line="4.1", machine=GOOD) == "comet"
    assert native_engine(None, connect=False, line="3.5", machine=old) is None


def test_comet_settings_keep_the_users_own() -> None:
    jar = Path("/cache/comet-spark-spark4.1_2.13-1.2.0.jar")
    given = {
        "spark.driver.memory": "4g",
        "spark.plugins": "com.example.Mine",
        "spark.executor.extraClassPath": "/opt/extra.jar",
        "spark.comet.scan.icebergNative.enabled": "false",
    }
    conf = comet_conf(given, jar, "local[2]")
    assert conf["spark.plugins"] == "org.apache.spark.CometPlugin,com.example.Mine"
    # Comet's account of each plan, which each node's adapter_response reads
    assert conf["spark.sql.extendedExplainProviders"] == "org.apache.comet.ExtendedExplainInfo"
    assert conf["spark.shuffle.manager"].endswith(".CometShuffleManager")
    assert conf["spark.memory.offHeap.enabled"] == "true"
    assert conf["spark.memory.offHeap.size"] == "4096m"
    assert conf["spark.comet.scan.icebergNative.enabled"] == "false"  # the user's wins
    assert conf["spark.driver.extraClassPath"] == str(jar)
    assert conf["spark.executor.extraClassPath"] == f"{jar}:/opt/extra.jar"
    # Comet named in spark.jars.packages: Spark puts it on the classpath, no path is made up.
    assert "spark.driver.extraClassPath" not in comet_conf({}, None, "local[2]")


def test_engine_native_is_validated() -> None:
    with pytest.raises(DbtRuntimeError, match="engine.native must be one of comet"):
        LakehouseCredentials.validate(
            {"type": "lakehouse", "schema": "s", "engine": {"native": "photon"}}
        )
    creds = LakehouseCredentials.from_dict({"schema": "s", "engine": {"native": "comet"}})
    assert creds.engine.native == "comet"


@pytest.mark.skipif(installed_line().spark not in COMET_LINES, reason="Comet: the 4.1 line only")
def test_the_spec_launches_with_comet_and_the_warm_engine_is_another(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "this_platform", lambda: GOOD)
    comet_jar = tmp_path / "comet.jar"
    comet_jar.write_bytes(b"jar")
    env = {**jar_env, "LAKEHOUSE_COMET_JAR": str(comet_jar)}

    def spec(engine: EngineOptions) -> EngineSpec:
        creds = LakehouseCredentials(
            schema="s",
            warehouse=str(tmp_path / "wh"),
            spark=SparkOptions(master="local[2]", driver_memory="3g"),
            engine=engine,
        )
        return profile_spec(creds, env=env)

    on, off = spec(EngineOptions(native="comet")), spec(EngineOptions())
    conf = dict(on.conf)
    assert str(comet_jar) in on.jars and str(comet_jar) not in off.jars
    assert conf["spark.plugins"] == "org.apache.spark.CometPlugin"
    assert conf["spark.memory.offHeap.size"] == "3072m"
    assert conf["spark.driver.extraClassPath"] == str(comet_jar)
    assert "spark.plugins" not in dict(off.conf)
    # The plugin is a launch setting: a warm engine started without it is never shared.
    assert ("spark.driver.extraClassPath", str(comet_jar)) in launch_settings(on.conf)
    assert engine_key(on, "java", env={}) != engine_key(off, "java", env={})
