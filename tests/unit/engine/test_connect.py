"""Spark Connect (`spark.master: sc://...`): the address a URL names, what the client session
sets and what only the server's launch can take, and the refusals that need no server."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.connect import session_conf, start_connect_session
from dbt.adapters.lakehouse.exceptions import ConnectUnsupportedError, EngineSetupError
from unit.engine.profile_specs import profile_spec


@pytest.mark.parametrize(
    ("master", "address"),
    [
        ("sc://127.0.0.1:15099", ("127.0.0.1", 15099)),
        ("sc://spark.example.com", ("spark.example.com", 15002)),
        ("sc://host:443/;token=abc;use_ssl=true", ("host", 443)),
        ("SC://Host:1", ("Host", 1)),
    ],
)
def test_connect_address(master: str, address: tuple[str, int]) -> None:
    assert runtime.is_connect_master(master)
    assert runtime.connect_address(master) == address


@pytest.mark.parametrize("master", ["local[*]", "spark://h:7077", "yarn", "k8s://https://h:6443"])
def test_other_masters_are_not_connect(master: str) -> None:
    assert not runtime.is_connect_master(master)


def _connect_creds(tmp_path: Path, master: str = "sc://127.0.0.1:1") -> LakehouseCredentials:
    depot = {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {"bucket": "b", "relativePath": "wh/", "region": "us-east-1"},
        },
        "catalog": {"type": "rest", "uri": "http://127.0.0.1:1/catalog"},
        "secrets": {"aws_access_key": "AKIAX", "aws_secret_key": "s3cret", "apikey": "tok"},
    }
    return LakehouseCredentials(schema="s", depot=depot, spark=SparkOptions(master=master))


def test_connect_spec_fetches_no_jars_and_sends_runtime_conf(tmp_path: Path) -> None:
    # No jar override and no fetch allowed: a Connect spec must not need any jar here.
    spec = profile_spec(_connect_creds(tmp_path), env={}, fetch_missing=False)
    assert spec.is_connect and spec.jars == ()
    sent, launch_only = session_conf(spec)
    assert sent["spark.sql.catalog.lakehouse"] == "org.apache.iceberg.spark.SparkCatalog"
    assert sent["spark.sql.catalog.lakehouse.uri"] == "http://127.0.0.1:1/catalog"
    # The secrets go in the session conf alone (never a launch argument).
    assert "s3cret" in sent.values() and "tok" in sent.values()
    assert not any("s3cret" in v or "tok" == v for _, v in spec.conf)
    # What Spark reads at launch is left to the server.
    assert "spark.jars" in launch_only and "spark.driver.extraJavaOptions" in launch_only
    assert not any(k.startswith("spark.hadoop.") for k in sent)


def test_unreachable_connect_server_is_named(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = profile_spec(_connect_creds(tmp_path, f"sc://127.0.0.1:{port}"), fetch_missing=False)
    with pytest.raises(EngineSetupError) as raised:
        start_connect_session(spec)
    message = str(raised.value)
    assert f"Spark Connect server sc://127.0.0.1:{port} is unreachable" in message
    assert "Fix:" in message


def test_glue_keys_are_refused_under_connect(tmp_path: Path) -> None:
    depot = {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": {"bucket": "b", "region": "eu-west-1"}},
        "catalog": {"type": "glue"},
        "secrets": {"aws_access_key": "AKIAX", "aws_secret_key": "s3cret"},
    }
    creds = LakehouseCredentials(
        schema="s", depot=depot, spark=SparkOptions(master="sc://127.0.0.1:1")
    )
    spec = profile_spec(creds, env={}, fetch_missing=False)
    assert spec.secret_system_properties
    with pytest.raises(ConnectUnsupportedError) as raised:
        start_connect_session(spec)
    assert "s3cret" not in str(raised.value)
    assert "give the server the keys" in str(raised.value)
