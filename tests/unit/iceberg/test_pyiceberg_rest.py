"""A REST depot's pyiceberg properties (iceberg/pyiceberg_rest.py): derived from the resolved
depot as the Spark plan derives the JVM's, the depots pyiceberg is not given (the JVM path
stays), and no secret in a repr or an error."""

from __future__ import annotations

import socket
import time
from dataclasses import replace
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
from dbt.adapters.lakehouse.iceberg import pyiceberg_rest
from dbt.adapters.lakehouse.iceberg.pyiceberg_rest import (
    PyicebergUnsupported,
    rest_catalog_properties,
)
from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    CatalogSpec,
    Depot,
    DepotSecrets,
    GcsStorage,
    LocalStorage,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from unit.profile.depots import ACCESS_KEY, APIKEY, SECRET_KEY, SESSION_TOKEN

SECRETS = DepotSecrets(
    aws_access_key=Secret(ACCESS_KEY),
    aws_secret_key=Secret(SECRET_KEY),
    aws_session_token=Secret(SESSION_TOKEN),
    apikey=Secret(APIKEY),
)
MINIO = S3Storage("bkt", "wh/", "us-east-1", "http://127.0.0.1:9000")
REST = CatalogSpec("rest", "http://127.0.0.1:8181", None, {})


def rest_depot(
    catalog: CatalogSpec = REST,
    storage: S3Storage | LocalStorage | AbfssStorage | GcsStorage = MINIO,
    secrets: DepotSecrets = SECRETS,
    **fields: object,
) -> Depot:
    return Depot("lake", storage, catalog, secrets, "depots file", **fields)  # type: ignore[arg-type]


def revealed(depot: Depot) -> dict[str, str]:
    found = rest_catalog_properties(depot, "lh")
    return {**found.public, **{k: v.reveal() for k, v in found.secret.items()}}


def test_s3_depot_behind_rest_gives_uri_warehouse_token_endpoint_and_keys() -> None:
    assert revealed(rest_depot()) == {
        "uri": "http://127.0.0.1:8181",
        "warehouse": "s3://bkt/wh",
        "token": APIKEY,
        "s3.region": "us-east-1",
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.force-virtual-addressing": "false",
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.session-token": SESSION_TOKEN,
    }


def test_the_values_are_the_ones_the_spark_plan_gives_the_jvm() -> None:
    depot = rest_depot(storage=replace(MINIO, endpoint=None))
    plan = build_spark_conf_plan(depot, "lh")
    jvm = {**plan.conf, **plan.secret_catalog_conf}
    hadoop = plan.secret_hadoop_conf
    ours = revealed(depot)
    assert ours["uri"] == jvm["spark.sql.catalog.lh.uri"]
    assert ours["warehouse"] == jvm["spark.sql.catalog.lh.warehouse"]
    assert ours["token"] == jvm["spark.sql.catalog.lh.token"]
    assert ours["s3.region"] == jvm["spark.hadoop.fs.s3a.endpoint.region"]
    assert ours["s3.access-key-id"] == hadoop["fs.s3a.access.key"]
    assert ours["s3.secret-access-key"] == hadoop["fs.s3a.secret.key"]
    assert ours["s3.session-token"] == hadoop["fs.s3a.session.token"]
    # AWS itself: virtual-hosted buckets, pyiceberg's default, as s3a's without an endpoint.
    assert "s3.endpoint" not in ours and "s3.force-virtual-addressing" not in ours


def test_no_keys_no_token_leaves_the_default_chains() -> None:
    found = revealed(rest_depot(secrets=DepotSecrets()))
    assert not {"token", "s3.access-key-id", "s3.secret-access-key"} & found.keys()
    # A key without its secret is no credential (as s3_conf: both or neither).
    half = revealed(rest_depot(secrets=DepotSecrets(aws_access_key=Secret(ACCESS_KEY))))
    assert "s3.access-key-id" not in half


def test_catalog_properties_pass_through_and_win() -> None:
    catalog = CatalogSpec(
        "rest",
        "https://rest.example/api",
        "my-warehouse",
        {
            "token": "property-token-123",
            "header.X-Tenant": "t1",
            "s3.endpoint": "https://s3.other.example",
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "rest.client.socket-timeout-ms": "1000",
        },
    )
    found = rest_catalog_properties(rest_depot(catalog), "lh")
    assert found.public["warehouse"] == "my-warehouse"
    assert found.public["header.X-Tenant"] == "t1"
    assert found.public["s3.endpoint"] == "https://s3.other.example"
    assert found.secret["token"].reveal() == "property-token-123"
    # A Java class and the Java client's limits mean nothing to pyiceberg.
    assert not {"io-impl", "rest.client.socket-timeout-ms"} & found.public.keys()


def test_a_local_folder_behind_rest_needs_no_storage_settings(tmp_path: Path) -> None:
    found = rest_catalog_properties(rest_depot(storage=LocalStorage(tmp_path)), "lh")
    assert found.public == {"uri": "http://127.0.0.1:8181", "warehouse": f"file:{tmp_path}"}


@pytest.mark.parametrize(
    ("depot", "reason"),
    [
        (rest_depot(CatalogSpec("jdbc", "jdbc:sqlite:/x/c.db")), "has a jdbc catalog, not rest"),
        (rest_depot(CatalogSpec("glue")), "has a glue catalog, not rest"),
        (rest_depot(CatalogSpec("nessie", "http://n:19120/api/v2")), "nessie catalog"),
        (rest_depot(CatalogSpec("rest")), "names no catalog uri"),
        (
            rest_depot(CatalogSpec("rest", f"https://u:{SECRET_KEY}@rest.example")),
            "credentials in its catalog uri",
        ),
        (
            rest_depot(aws_role=AwsRole(arn="arn:aws:iam::123456789012:role/r")),
            "acts as an IAM role",
        ),
        (rest_depot(storage=GcsStorage("b", "wh")), "on GcsStorage"),
        (rest_depot(storage=AbfssStorage("acct", "c", "wh")), "on AbfssStorage"),
        (
            rest_depot(
                CatalogSpec(
                    "rest",
                    "https://rest.example",
                    None,
                    {"credential": f"client:{SECRET_KEY}", "oauth2-server-uri": "https://o"},
                )
            ),
            "catalog properties pyiceberg is not given: credential, oauth2-server-uri",
        ),
        (
            rest_depot(CatalogSpec("rest", "https://r", None, {"rest.sigv4-enabled": "true"})),
            "rest.sigv4-enabled",
        ),
    ],
)
def test_what_pyiceberg_is_not_given_keeps_the_jvm_path(depot: Depot, reason: str) -> None:
    with pytest.raises(PyicebergUnsupported) as raised:
        rest_catalog_properties(depot, "lh")
    assert reason in str(raised.value)
    assert SECRET_KEY not in str(raised.value) and APIKEY not in str(raised.value)


def test_repr_and_str_hide_every_secret() -> None:
    found = rest_catalog_properties(rest_depot(), "lh")
    shown = repr(found) + str(found) + f"{found}"
    for value in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, APIKEY):
        assert value not in shown
    assert "'token': '****'" in shown and "http://127.0.0.1:9000" in shown


def test_an_unreachable_catalog_fails_without_a_secret_in_the_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    depot = rest_depot(replace(REST, uri=f"http://127.0.0.1:{port}"))
    with pytest.raises(Exception) as raised:  # noqa: B017 - requests' ConnectionError
        rest_catalog_properties(depot, "lh").open()
    text = f"{raised.value!r} {raised.value}"
    assert "Connection refused" in text or "Max retries" in text, text
    for value in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, APIKEY):
        assert value not in text


def test_a_catalog_that_never_answers_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from requests.exceptions import Timeout

    monkeypatch.setattr(pyiceberg_rest, "REST_TIMEOUT_SECONDS", (1.0, 1.0))
    with socket.socket() as silent:  # listens (the kernel completes connects), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        depot = rest_depot(replace(REST, uri=f"http://127.0.0.1:{silent.getsockname()[1]}"))
        began = time.monotonic()
        with pytest.raises(Timeout):
            rest_catalog_properties(depot, "lh").open()
    assert time.monotonic() - began < 10
