"""Which warm engine a profile may use: what takes part in its identity, and when it is on."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.engine.warm.identity import (
    DEFAULT_KEEP_WARM_MINUTES,
    DEFAULT_WARM_UP_SECONDS,
    engine_conf,
    engine_key,
    engines_home,
    keep_warm_minutes,
    session_conf,
    warm_up_seconds,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError

SPEC = EngineSpec(
    master="local[2]",
    app_name="dbt-lakehouse",
    conf=(
        ("spark.driver.extraJavaOptions", "-Dx=1"),
        ("spark.driver.memory", "2g"),
        ("spark.jars", "/jars/iceberg.jar"),
        ("spark.sql.catalog.lakehouse", "org.apache.iceberg.spark.SparkCatalog"),
        ("spark.sql.catalog.lakehouse.uri", "http://127.0.0.1:8181"),
        ("spark.sql.defaultCatalog", "lakehouse"),
        ("spark.sql.shuffle.partitions", "8"),
    ),
    secret_catalog_conf=(("spark.sql.catalog.lakehouse.token", "t0k3n"),),
    secret_hadoop_conf=(),
    jars=("/jars/iceberg.jar",),
    depot_label="lake (profile)",
)
JAVA = "/usr/bin/java"
CATALOG = "spark.sql.catalog.lakehouse"


def key(spec: EngineSpec = SPEC, env: dict[str, str] | None = None) -> str:
    return engine_key(spec, JAVA, env={} if env is None else env, salt=b"salt")


@pytest.mark.parametrize(
    ("master", "configured", "env", "expected"),
    [
        ("local[*]", None, {}, DEFAULT_KEEP_WARM_MINUTES),
        ("local[2]", 5, {}, 5.0),
        ("local[2]", 0, {}, 0.0),
        ("local[2]", None, {"LAKEHOUSE_ENGINE": "cold"}, 0.0),
        ("local[2]", 30, {"LAKEHOUSE_ENGINE": "COLD"}, 0.0),
        ("spark://h:7077", None, {}, 0.0),
        ("spark://h:7077", 10, {}, 10.0),
        ("spark://h:7077", None, {"LAKEHOUSE_ENGINE": "warm"}, DEFAULT_KEEP_WARM_MINUTES),
        ("sc://127.0.0.1:15002", 10, {"LAKEHOUSE_ENGINE": "warm"}, 0.0),
    ],
)
def test_keep_warm_minutes(master: str, configured: float | None, env: dict, expected: float):
    assert keep_warm_minutes(master, configured, env) == expected


def test_an_unknown_engine_mode_is_refused_naming_the_accepted_ones():
    with pytest.raises(EngineSetupError, match="LAKEHOUSE_ENGINE must be one of warm, cold"):
        keep_warm_minutes("local[2]", None, {"LAKEHOUSE_ENGINE": "hot"})


@pytest.mark.parametrize(
    ("master", "configured", "env", "expected"),
    [
        ("local[*]", None, {}, DEFAULT_WARM_UP_SECONDS),
        ("local[2]", 15, {}, 15.0),
        ("local[2]", 0, {}, 0.0),
        ("local[2]", 15, {"LAKEHOUSE_ENGINE_WARM_UP_SECONDS": "0"}, 0.0),
        ("local[2]", None, {"LAKEHOUSE_ENGINE_WARM_UP_SECONDS": " 2.5 "}, 2.5),
        # a cluster's executors are not the warm-up's to take, unless asked
        ("spark://h:7077", None, {}, 0.0),
        ("spark://h:7077", 30, {}, 30.0),
    ],
)
def test_warm_up_seconds(master: str, configured: float | None, env: dict, expected: float):
    assert warm_up_seconds(master, configured, env) == expected


@pytest.mark.parametrize("raw", ["soon", "-1", "nan"])
def test_a_wrong_warm_up_setting_is_refused_naming_the_variable(raw: str):
    with pytest.raises(EngineSetupError, match="LAKEHOUSE_ENGINE_WARM_UP_SECONDS must be"):
        warm_up_seconds("local[2]", None, {"LAKEHOUSE_ENGINE_WARM_UP_SECONDS": raw})


def test_catalogs_are_the_sessions_and_the_rest_the_engines():
    launched = dict(engine_conf(SPEC))
    assert not any(k.startswith("spark.sql.catalog") for k in launched)
    assert "spark.sql.defaultCatalog" not in launched
    assert launched["spark.driver.memory"] == "2g"
    assert launched["spark.driver.extraJavaOptions"] == "-Dx=1 -XX:+ExitOnOutOfMemoryError"
    assert dict(session_conf(SPEC)) == {
        "spark.sql.catalog.lakehouse": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lakehouse.uri": "http://127.0.0.1:8181",
        "spark.sql.defaultCatalog": "lakehouse",
    }


def _with_conf(**changes: str) -> EngineSpec:
    conf = dict(SPEC.conf)
    conf.update(changes)
    return dataclasses.replace(SPEC, conf=tuple(sorted(conf.items())))


def test_a_session_setting_or_token_shares_the_engine():
    other_catalog = _with_conf(**{"spark.sql.catalog.lakehouse.uri": "http://127.0.0.1:9999"})
    other_token = dataclasses.replace(
        SPEC, secret_catalog_conf=(("spark.sql.catalog.lakehouse.token", "other"),)
    )
    assert key(other_catalog) == key(other_token) == key()
    assert key(dataclasses.replace(SPEC, keep_warm_minutes=3)) == key()


@pytest.mark.parametrize(
    "other",
    [
        _with_conf(**{"spark.driver.memory": "4g"}),
        _with_conf(**{"spark.jars": "/jars/iceberg.jar,/jars/aws.jar"}),
        _with_conf(**{"spark.sql.shuffle.partitions": "4"}),
        dataclasses.replace(SPEC, master="local[4]"),
        # JVM-wide: Hadoop's conf and FileSystem cache, the glue catalog's system properties.
        dataclasses.replace(SPEC, secret_hadoop_conf=(("fs.s3a.access.key", "AKIA1"),)),
        dataclasses.replace(SPEC, secret_system_properties=(("aws.accessKeyId", "AKIA1"),)),
        _with_conf(**{"spark.sql.catalog.lakehouse.hadoop.fs.s3a.endpoint": "http://x"}),
        dataclasses.replace(
            SPEC,
            secret_catalog_conf=(("spark.sql.catalog.lakehouse.hadoop.fs.s3a.access.key", "A"),),
        ),
    ],
)
def test_what_a_session_cannot_change_chooses_another_engine(other: EngineSpec):
    assert key(other) != key()


def test_credentials_in_the_environment_choose_another_engine():
    assert key(env={"AWS_ACCESS_KEY_ID": "AKIA1"}) != key(env={"AWS_ACCESS_KEY_ID": "AKIA2"})
    assert key(env={"HOME": "/a", "LAKEHOUSE_TEST": "x"}) == key(env={"HOME": "/b"})


def test_what_pyspark_sets_in_the_process_keeps_the_engine():
    # A started SparkContext sets these in os.environ: the process's next spec still shares.
    started = {"SPARK_AUTH_SOCKET_TIMEOUT": "15", "SPARK_BUFFER_SIZE": "65536"}
    assert key(env={"HOME": "/a", **started}) == key(env={"HOME": "/a"})


def test_the_key_reveals_no_secret_and_depends_on_the_users_salt():
    secret = dataclasses.replace(SPEC, secret_hadoop_conf=(("fs.s3a.secret.key", "s3cr3t"),))
    assert "s3cr3t" not in key(secret)
    assert engine_key(secret, JAVA, env={}, salt=b"a") != engine_key(
        secret, JAVA, env={}, salt=b"b"
    )


def test_a_relative_engines_home_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The supervisor runs in its engine's folder and is given that folder's path.
    monkeypatch.chdir(tmp_path)
    assert engines_home({"LAKEHOUSE_ENGINE_HOME": "engines"}) == tmp_path / "engines"
