"""Inline and env depots, and the schema every depot is validated against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    Secret,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    METASTORE,
    SECRET_KEY,
    SECRET_VALUES,
    SESSION_TOKEN,
    VERBATIM_APIKEY,
    VERBATIM_METASTORE,
    error_of,
    resolve,
    s3_entry,
)

# --- inline and env depots -------------------------------------------------------------------


def test_inline_depot(cwd: Path) -> None:
    depot = resolve(s3_entry(), cwd)
    assert depot.name == "inline"
    assert depot.source == "inline depot"
    assert depot.embedded is False
    assert depot.storage == S3Storage("my-bucket", "warehouse", "eu-west-1", None)
    assert depot.storage.warehouse_uri == "s3://my-bucket/warehouse"
    assert depot.catalog == CatalogSpec("rest", METASTORE, None, {})
    assert depot.secrets == DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY), apikey=Secret(APIKEY)
    )


def test_inline_file_depot_relative_path(cwd: Path) -> None:
    entry = {
        "spec": {"storageType": "FILE", "file": {"path": "local/wh"}},
        "catalog": {"type": "hadoop"},
    }
    depot = resolve(entry, cwd)
    assert depot.storage == LocalStorage(cwd / "local" / "wh")
    assert depot.catalog.type == "hadoop"
    assert depot.secrets == DepotSecrets()


def test_catalog_defaults_to_rest_and_properties_become_strings(cwd: Path) -> None:
    entry = s3_entry()
    del entry["catalog"]
    depot = resolve(entry, cwd, env={"METASTORE_URL": METASTORE})
    assert depot.catalog.type == "rest"
    assert depot.catalog.uri == METASTORE
    props = {"cache-enabled": False, "client.pool-size": 4, "ref": "dev"}
    depot = resolve(
        s3_entry(catalog={"type": "NESSIE", "uri": METASTORE, "properties": props}), cwd
    )
    assert depot.catalog.type == "nessie"
    assert depot.catalog.properties == {
        "cache-enabled": "false",
        "client.pool-size": "4",
        "ref": "dev",
    }


ENV_DEPOT = {
    "TYPE": "S3",
    "DESTINATION_BUCKET": "s3://env-bucket/some/prefix/",
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_SESSION_TOKEN": SESSION_TOKEN,
    "AWS_REGION": "us-west-2",
    "AWS_ENDPOINT": "http://minio:9000/",
    "METASTORE_URL": METASTORE,
    "LAKEHOUSE_APIKEY": APIKEY,
}


def test_env_depot(cwd: Path) -> None:
    depot = resolve("env", cwd, env=ENV_DEPOT)
    assert depot.name == "env"
    assert depot.source == "environment (DataOS variables)"
    assert depot.embedded is False
    assert depot.storage == S3Storage("env-bucket", "some/prefix", "us-west-2", "http://minio:9000")
    assert depot.catalog == CatalogSpec("rest", METASTORE, None, {})
    assert depot.secrets == DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY),
        aws_secret_key=Secret(SECRET_KEY),
        aws_session_token=Secret(SESSION_TOKEN),
        apikey=Secret(APIKEY),
    )


@pytest.mark.parametrize(
    ("kind", "destination"),
    [
        ("lakehouse", "s3a://env-bucket"),
        ("LakeHouse", "s3://env-bucket/"),
        ("s3", "s3://env-bucket"),
    ],
)
def test_env_depot_accepts(cwd: Path, kind: str, destination: str) -> None:
    env = {**ENV_DEPOT, "TYPE": kind, "DESTINATION_BUCKET": destination}
    depot = resolve("env", cwd, env=env)
    assert depot.storage.warehouse_uri == "s3://env-bucket"


@pytest.mark.parametrize(
    ("changes", "phrases"),
    [
        ({"TYPE": "postgres"}, ["TYPE environment variable is 'postgres'", "S3, LAKEHOUSE"]),
        ({"TYPE": None}, ["TYPE environment variable is not set", "S3, LAKEHOUSE"]),
        (
            {"DESTINATION_BUCKET": None},
            ["DESTINATION_BUCKET environment variable is required", "s3://<bucket>/<prefix>"],
        ),
        (
            {"DESTINATION_BUCKET": "gs://b/p"},
            ["DESTINATION_BUCKET must be an S3 location; got gs://...", "(or s3a://)"],
        ),
        ({"DESTINATION_BUCKET": "s3:///p"}, ["DESTINATION_BUCKET must be a bare bucket name"]),
        ({"METASTORE_URL": None}, [VERBATIM_METASTORE]),
        ({"LAKEHOUSE_APIKEY": None}, [VERBATIM_APIKEY]),
    ],
)
def test_env_depot_errors(cwd: Path, changes: dict[str, str | None], phrases: list[str]) -> None:
    env = {k: v for k, v in {**ENV_DEPOT, **changes}.items() if v is not None}
    msg = error_of("env", cwd, env=env)
    for phrase in phrases:
        assert phrase in msg
    assert "the environment depot (DataOS variables)" in msg
    for value in SECRET_VALUES:
        assert value not in msg


# --- schema validation -----------------------------------------------------------------------


def test_all_schema_problems_in_one_message(cwd: Path) -> None:
    entry = {
        "type": "postgres",
        "spek": {},
        "spec": {"storageType": "hdfs"},
        "catalog": {"type": "hive", "url": "x"},
        "secrets": {"aws_secret": SECRET_KEY},
    }
    msg = error_of(entry, cwd)
    assert msg.startswith("The inline depot in the profile has 6 problems:")
    assert (
        "Unknown depot key 'spek'. Did you mean 'spec'? Accepted: catalog, secrets, spec, type."
        in msg
    )
    assert "Depot type 'postgres' is not supported. Accepted: lakehouse." in msg
    assert "spec.storageType 'hdfs' is not supported. Accepted: s3, file, abfss, gcs." in msg
    assert "Unknown catalog key 'url'. Did you mean 'uri'? Accepted: properties, type, uri," in msg
    assert "catalog.properties" in msg
    assert (
        "catalog.type 'hive' is not supported. Accepted: rest, hadoop, jdbc, glue, nessie." in msg
    )
    assert "Unknown secrets key 'aws_secret'. Did you mean 'aws_secret_key'? Accepted:" in msg
    assert SECRET_KEY not in msg


@pytest.mark.parametrize(
    ("spec", "phrase"),
    [
        (None, "Depot `spec` must be a mapping; it is missing"),
        ("s3", "Depot `spec` must be a mapping; got a str"),
        ({"s3": {"bucket": "b"}}, "spec.storageType is missing. Accepted: s3, file, abfss, gcs."),
        ({"storageType": "s3"}, "storageType s3 needs a `spec.s3` mapping; it is missing"),
        ({"storageType": "s3", "s3": {"region": "x"}}, "spec.s3.bucket is missing"),
        (
            {"storageType": "s3", "s3": {"bucket": "s3://b/p", "region": "x"}},
            "spec.s3.bucket must be a bare bucket name; got 's3://b/p'",
        ),
        (
            {"storageType": "s3", "s3": {"bucket": "b", "region": "x", "prefix": "p"}},
            "Unknown spec.s3 key 'prefix'. Accepted: bucket, endpoint, region, relativePath.",
        ),
        ({"storageType": "s3", "s3": {"bucket": ["b"]}}, "spec.s3.bucket must be a string"),
        ({"storageType": "file", "file": {}}, "spec.file.path is missing"),
        (
            {"storageType": "file", "file": {"path": "/x", "p": 1}},
            "Unknown spec.file key 'p'. Accepted: path.",
        ),
        (
            {"storageType": "s3", "bucket": "b"},
            "Unknown spec key 'bucket'. Accepted: abfss, file, formatVersion, gcs, s3, "
            "storageType, tableFormats.",
        ),
        (
            {"storageType": "s3", "s3": {"bucket": "b", "region": "x", "regoin": "y"}},
            "Unknown spec.s3 key 'regoin'. Did you mean 'region'? Accepted: bucket, endpoint,",
        ),
    ],
)
def test_spec_validation(cwd: Path, spec: Any, phrase: str) -> None:
    entry = s3_entry(spec=spec)
    assert phrase in error_of(entry, cwd)


def test_secrets_of_wrong_shape_are_not_echoed(cwd: Path) -> None:
    msg = error_of(s3_entry(secrets={"apikey": [APIKEY]}), cwd)
    assert "secrets.apikey must be a string; got a list." in msg
    assert APIKEY not in msg


def test_catalog_properties_must_be_scalars(cwd: Path) -> None:
    entry = s3_entry(catalog={"type": "rest", "uri": METASTORE, "properties": {"x": {"y": 1}}})
    assert "catalog.properties.x must be a string, number or boolean" in error_of(entry, cwd)
