"""Region and endpoint precedence, each catalog type, and AWS credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    DepotSecrets,
    S3Storage,
    Secret,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    JDBC_PASSWORD,
    JDBC_USER,
    METASTORE,
    SECRET_KEY,
    SECRET_VALUES,
    SESSION_TOKEN,
    VERBATIM_APIKEY,
    VERBATIM_METASTORE,
    error_of,
    resolve,
    s3_entry,
    with_s3,
)

# --- region and endpoint precedence ----------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "depot", "aws_region", "aws_default_region", "expected"),
    [
        ("p-1", "d-1", "e-1", "f-1", "p-1"),
        (None, "d-1", "e-1", "f-1", "d-1"),
        (None, None, "e-1", "f-1", "e-1"),
        (None, None, None, "f-1", "f-1"),
        ("p-1", None, "e-1", None, "p-1"),
        ("", "d-1", "", "", "d-1"),  # empty means unset
        (None, None, "  ", "f-1", "f-1"),
    ],
)
def test_region_precedence(
    cwd: Path,
    profile: str | None,
    depot: str | None,
    aws_region: str | None,
    aws_default_region: str | None,
    expected: str,
) -> None:
    env = {"AWS_REGION": aws_region, "AWS_DEFAULT_REGION": aws_default_region}
    entry = with_s3(s3_entry(), region=depot)
    resolved = resolve(
        entry, cwd, env={k: v for k, v in env.items() if v is not None}, aws_region=profile
    )
    assert isinstance(resolved.storage, S3Storage)
    assert resolved.storage.region == expected


@pytest.mark.parametrize(
    ("profile", "depot", "env_endpoint", "expected"),
    [
        ("http://p:9000", "http://d:9000", "http://e:9000", "http://p:9000"),
        (None, "https://d.example.com/", "http://e:9000", "https://d.example.com"),
        (None, None, "http://e:9000", "http://e:9000"),
        (None, None, None, None),
        ("http://p:9000", None, None, "http://p:9000"),
    ],
)
def test_endpoint_precedence(
    cwd: Path,
    profile: str | None,
    depot: str | None,
    env_endpoint: str | None,
    expected: str | None,
) -> None:
    env = {"AWS_ENDPOINT": env_endpoint} if env_endpoint else {}
    entry = with_s3(s3_entry(), endpoint=depot)
    resolved = resolve(entry, cwd, env=env, aws_endpoint=profile)
    assert isinstance(resolved.storage, S3Storage)
    assert resolved.storage.endpoint == expected


def test_missing_region(cwd: Path) -> None:
    msg = error_of(with_s3(s3_entry(), region=None), cwd)
    assert msg.startswith("S3 storage needs an AWS region, and none is set.")
    for place in ("aws_region", "spec.s3.region", "AWS_REGION", "us-east-1", "MinIO"):
        assert place in msg


def test_endpoint_must_be_http(cwd: Path) -> None:
    msg = error_of(s3_entry(), cwd, aws_endpoint="minio:9000")
    assert "The S3 endpoint from profile aws_endpoint is not an http(s) URL" in msg
    assert "Accepted: http://host:port or https://host." in msg


# --- catalogs and credentials ----------------------------------------------------------------


def test_rest_uri_precedence(cwd: Path) -> None:
    env = {"METASTORE_URL": "https://from-env/"}
    assert resolve(s3_entry(), cwd, env=env).catalog.uri == METASTORE
    entry = s3_entry(catalog={"type": "rest"})
    assert resolve(entry, cwd, env=env).catalog.uri == "https://from-env/"


def test_rest_without_uri_is_verbatim(cwd: Path) -> None:
    msg = error_of(s3_entry(catalog={"type": "rest"}), cwd)
    assert msg.splitlines()[0] == VERBATIM_METASTORE
    assert "catalog.uri" in msg


def test_rest_apikey_precedence(cwd: Path) -> None:
    env = {"LAKEHOUSE_APIKEY": "other-key"}
    assert resolve(s3_entry(), cwd, env=env).secrets.apikey == Secret(APIKEY)
    entry = s3_entry(secrets={})
    assert resolve(entry, cwd, env=env).secrets.apikey == Secret("other-key")


def test_rest_without_apikey_is_verbatim(cwd: Path) -> None:
    msg = error_of(
        s3_entry(secrets={"aws_access_key": ACCESS_KEY, "aws_secret_key": SECRET_KEY}), cwd
    )
    assert msg.splitlines()[0] == VERBATIM_APIKEY
    assert "LAKEHOUSE_APIKEY" in msg
    assert ACCESS_KEY not in msg and SECRET_KEY not in msg


def test_aws_keys_default_from_env_only_when_depot_has_none(cwd: Path) -> None:
    env = {
        "AWS_ACCESS_KEY_ID": "ENVACCESS",
        "AWS_SECRET_ACCESS_KEY": "ENVSECRET",
        "AWS_SESSION_TOKEN": "ENVTOKEN",
    }
    depot = resolve(s3_entry(), cwd, env=env)
    assert depot.secrets.aws_access_key == Secret(ACCESS_KEY)
    assert depot.secrets.aws_session_token is None  # never mixed with the depot's own keys
    depot = resolve(s3_entry(secrets={"apikey": APIKEY}), cwd, env=env)
    assert depot.secrets.aws_access_key == Secret("ENVACCESS")
    assert depot.secrets.aws_secret_key == Secret("ENVSECRET")
    assert depot.secrets.aws_session_token == Secret("ENVTOKEN")


def test_no_aws_keys_anywhere_means_default_chain(cwd: Path) -> None:
    depot = resolve(s3_entry(secrets={"apikey": APIKEY}), cwd)
    assert depot.secrets == DepotSecrets(apikey=Secret(APIKEY))


def test_local_storage_ignores_aws_env_keys(cwd: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "ENVACCESS", "AWS_SECRET_ACCESS_KEY": "ENVSECRET"}
    entry = {
        "spec": {"storageType": "file", "file": {"path": "/wh"}},
        "catalog": {"type": "hadoop"},
    }
    assert resolve(entry, cwd, env=env).secrets == DepotSecrets()


@pytest.mark.parametrize(
    ("secrets", "env", "phrases"),
    [
        (
            {"aws_secret_key": SECRET_KEY},
            {},
            ["AWS credentials in depot secrets are incomplete, missing aws_access_key"],
        ),
        (
            {"aws_access_key": ACCESS_KEY},
            {},
            ["in depot secrets are incomplete, missing aws_secret_key", "Given: aws_access_key"],
        ),
        (
            {"aws_session_token": SESSION_TOKEN},
            {},
            ["missing aws_access_key and aws_secret_key", "Given: aws_session_token"],
        ),
        (
            {},
            {"AWS_ACCESS_KEY_ID": ACCESS_KEY},
            ["AWS credentials in the environment are incomplete, missing AWS_SECRET_ACCESS_KEY"],
        ),
        (
            {},
            {"AWS_SECRET_ACCESS_KEY": SECRET_KEY},
            ["in the environment are incomplete, missing AWS_ACCESS_KEY_ID"],
        ),
    ],
)
def test_incomplete_aws_keys(
    cwd: Path, secrets: dict[str, str], env: dict[str, str], phrases: list[str]
) -> None:
    msg = error_of(s3_entry(secrets={**secrets, "apikey": APIKEY}), cwd, env=env)
    for phrase in phrases:
        assert phrase in msg
    assert "or none of them to use the default AWS credential chain" in msg
    for value in SECRET_VALUES:
        assert value not in msg


def test_nessie(cwd: Path) -> None:
    depot = resolve(
        s3_entry(catalog={"type": "nessie", "uri": "http://nessie:19120/api/v2"}, secrets={}), cwd
    )
    assert depot.catalog == CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {})
    assert depot.secrets.apikey is None  # optional: no env fallback, no error
    msg = error_of(s3_entry(catalog={"type": "nessie"}), cwd, env={"METASTORE_URL": METASTORE})
    assert "The nessie catalog needs catalog.uri; it is not set." in msg


def test_jdbc_catalog(cwd: Path) -> None:
    catalog = {"type": "jdbc", "uri": "jdbc:postgresql://db:5432/iceberg"}
    secrets = {"jdbc_user": JDBC_USER, "jdbc_password": JDBC_PASSWORD}
    depot = resolve(s3_entry(catalog=catalog, secrets=secrets), cwd)
    assert depot.catalog.uri == "jdbc:postgresql://db:5432/iceberg"
    assert depot.secrets.jdbc_user == Secret(JDBC_USER)
    assert depot.secrets.jdbc_password == Secret(JDBC_PASSWORD)
    assert depot.secrets.apikey is None
    for uri, given in [(None, "it is not set"), ("postgresql://db/x", "got 'postgresql://db/x'")]:
        msg = error_of(s3_entry(catalog={"type": "jdbc", "uri": uri}), cwd)
        assert "The jdbc catalog needs catalog.uri, a JDBC URL" in msg
        assert given in msg


@pytest.mark.parametrize("kind", ["glue", "hadoop"])
def test_glue_and_hadoop_take_no_uri(cwd: Path, kind: str) -> None:
    depot = resolve(s3_entry(catalog={"type": kind}, secrets={}), cwd)
    assert depot.catalog == CatalogSpec(kind, None, None, {})
    msg = error_of(s3_entry(catalog={"type": kind, "uri": "http://x"}), cwd)
    assert f"The {kind} catalog takes no catalog.uri; got 'http://x'" in msg


def test_glue_needs_s3(cwd: Path) -> None:
    entry = {"spec": {"storageType": "file", "file": {"path": "/wh"}}, "catalog": {"type": "glue"}}
    assert "The glue catalog needs S3 storage; got storageType file" in error_of(entry, cwd)


def test_rest_uri_must_be_http(cwd: Path) -> None:
    msg = error_of(s3_entry(catalog={"type": "rest", "uri": "thrift://hms:9083"}), cwd)
    assert "The rest catalog's catalog.uri must be an http(s) URL; got 'thrift://hms:9083'" in msg
