"""Depot -> Spark conf plan for S3 storage (s3a), and every secret kept out of SparkConf."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.sparkconf import (
    S3_FILE_IO,
    build_spark_conf_plan,
)
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    S3Storage,
    Secret,
    resolve_depot,
)
from dbt.adapters.lakehouse.profile.secrets import REDACTION_REGEX, is_secret_key, scrub
from unit.engine.sparkconf_plans import (
    ALL_SECRETS,
    CATALOGS,
    KEYS_ONLY,
    LOCAL,
    S3,
    SDK_CHAIN_OF_THE_LINE,
    C,
    plan_for,
    s3a_keys,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    JDBC_PASSWORD,
    JDBC_USER,
    SECRET_KEY,
    SECRET_VALUES,
    SESSION_TOKEN,
)

# --- S3 through s3a (route 1) ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rest", "hadoop", "jdbc", "nessie"])
def test_s3_without_endpoint_or_keys(kind: str) -> None:
    plan = plan_for(kind, S3)
    assert plan.conf[f"{C}.warehouse"] == "s3://bkt/wh"  # the s3 scheme is kept
    assert plan.conf[f"{C}.io-impl"] == "org.apache.iceberg.hadoop.HadoopFileIO"
    assert s3a_keys(plan) == {
        "spark.hadoop.fs.s3.impl",
        "spark.hadoop.fs.s3a.endpoint.region",
        "spark.hadoop.fs.s3a.aws.credentials.provider",  # the SDK's default chain
    }
    assert plan.conf["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert plan.conf["spark.hadoop.fs.s3a.endpoint.region"] == "eu-west-1"
    assert plan.secret_hadoop_conf == {}
    assert {"iceberg", "s3a"} <= plan.jar_needs
    assert "aws-sdk-v2" not in plan.jar_needs


def test_s3a_keeps_directory_markers() -> None:
    """No bulk DELETE of parent markers after each file (stores backed by a file system fail it)."""
    plan = plan_for("hadoop", S3)
    assert plan.conf["spark.hadoop.fs.s3a.directory.marker.retention"] == "keep"


def test_s3_with_https_endpoint() -> None:
    plan = plan_for("hadoop", S3Storage("bkt", "", "us-east-1", "https://s3.example.com"))
    assert plan.conf["spark.hadoop.fs.s3a.endpoint"] == "https://s3.example.com"
    assert plan.conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert "spark.hadoop.fs.s3a.connection.ssl.enabled" not in plan.conf


def test_s3_with_http_endpoint_disables_ssl() -> None:
    plan = plan_for("hadoop", S3Storage("bkt", "", "us-east-1", "HTTP://minio:9000"))
    assert plan.conf["spark.hadoop.fs.s3a.endpoint"] == "HTTP://minio:9000"
    assert plan.conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"


def test_s3_with_keys() -> None:
    plan = plan_for("hadoop", S3, KEYS_ONLY)
    assert plan.conf["spark.hadoop.fs.s3a.aws.credentials.provider"] == (
        "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
    )
    assert plan.secret_hadoop_conf == {
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
    }


def test_s3_with_session_token() -> None:
    secrets = DepotSecrets(
        aws_access_key=Secret(ACCESS_KEY),
        aws_secret_key=Secret(SECRET_KEY),
        aws_session_token=Secret(SESSION_TOKEN),
    )
    plan = plan_for("hadoop", S3, secrets)
    assert plan.conf["spark.hadoop.fs.s3a.aws.credentials.provider"] == (
        "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
    )
    assert plan.secret_hadoop_conf == {
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        "fs.s3a.session.token": SESSION_TOKEN,
    }


def test_s3_without_keys_uses_the_sdk_default_chain() -> None:
    # The SDK's chain, not s3a's shorter default: it has web identity (EKS) and the profile file.
    plan = plan_for("hadoop", S3, DepotSecrets(aws_session_token=Secret(SESSION_TOKEN)))
    assert plan.conf["spark.hadoop.fs.s3a.aws.credentials.provider"] == SDK_CHAIN_OF_THE_LINE
    assert plan.secret_hadoop_conf == {}


def test_io_impl_property_selects_s3fileio() -> None:
    props = {"io-impl": "org.apache.iceberg.aws.s3.S3FileIO"}
    spec = CatalogSpec("rest", "https://rest.example/api", None, props)
    plan = plan_for(spec, S3, KEYS_ONLY)
    assert "aws-sdk-v2" in plan.jar_needs
    assert "s3a" not in plan.jar_needs
    assert plan.secret_catalog_conf[f"{C}.s3.secret-access-key"] == SECRET_KEY
    assert plan.secret_hadoop_conf == {}


def test_local_storage_adds_nothing() -> None:
    plan = plan_for("hadoop", LOCAL, ALL_SECRETS)
    assert not s3a_keys(plan)
    assert plan.secret_hadoop_conf == {}
    assert f"{C}.io-impl" not in plan.conf
    assert plan.jar_needs == frozenset({"iceberg"})


# --- secrets stay out of SparkConf -----------------------------------------------------------

SECRET_CASES = {
    f"{kind}-{where}": (kind, storage)
    for kind in sorted(CATALOGS)
    for where, storage in (
        ("s3", S3Storage("bkt", "wh", "eu-west-1", "http://minio:9000")),
        ("local", LOCAL),
    )
    if not (kind == "glue" and where == "local")
}


@pytest.mark.parametrize("case", sorted(SECRET_CASES))
def test_no_secret_in_conf(case: str) -> None:
    kind, storage = SECRET_CASES[case]
    plan = plan_for(kind, storage, ALL_SECRETS)
    conf_text = repr(sorted(plan.conf.items()))
    for value in SECRET_VALUES:
        assert value not in conf_text
    # The secrets the catalog and storage use do arrive, by the runtime route.
    runtime = set(plan.secret_catalog_conf.values()) | set(plan.secret_hadoop_conf.values())
    assert not set(plan.secret_system_properties.values()) - runtime  # glue: the same keys
    expected = {
        "rest": {APIKEY},
        "nessie": {APIKEY},
        "jdbc": {JDBC_USER, JDBC_PASSWORD},
        "hadoop": set(),
        "glue": set(),
    }[kind]
    if isinstance(storage, S3Storage):
        expected |= {ACCESS_KEY, SECRET_KEY, SESSION_TOKEN}
    assert runtime == expected


def test_one_pattern_keeps_every_secret_out_of_conf_and_redacts_it() -> None:
    # The S3FileIO route's keys (s3.access-key-id) once escaped Spark's redaction regex.
    s3fileio = S3Storage(bucket="bkt", relative_path="wh", region="us-east-1")
    plan = build_spark_conf_plan(
        Depot(
            name="d",
            storage=s3fileio,
            catalog=CatalogSpec(type="rest", uri="http://cat", properties={"io-impl": S3_FILE_IO}),
            secrets=ALL_SECRETS,
            source="test",
        ),
        "lh",
    )
    redacted = re.compile(REDACTION_REGEX)
    assert f"{C}.s3.access-key-id" in plan.secret_catalog_conf
    for key in plan.secret_catalog_conf:
        assert redacted.search(key) and is_secret_key(key), key
    assert not any(is_secret_key(key) for key in plan.conf), plan.conf
    assert not set(plan.conf.values()) & set(SECRET_VALUES)
    assert (
        scrub(f"denied for {ACCESS_KEY} / {SECRET_KEY}", SECRET_VALUES) == "denied for **** / ****"
    )


def test_redaction_regex_covers_the_secret_keys() -> None:
    plan = plan_for("rest", S3, ALL_SECRETS)
    redacted = re.compile(REDACTION_REGEX)
    keys = list(plan.secret_catalog_conf) + [f"spark.hadoop.{k}" for k in plan.secret_hadoop_conf]
    assert len(keys) == 4
    for key in keys:
        assert redacted.search(key), key


def test_glue_key_system_properties_are_secrets_to_every_guard() -> None:
    plan = plan_for("glue", S3, ALL_SECRETS)
    redacted = re.compile(REDACTION_REGEX)
    assert set(plan.secret_system_properties) >= {"aws.accessKeyId", "aws.secretAccessKey"}
    for prop in plan.secret_system_properties:
        assert redacted.search(prop) and is_secret_key(prop), prop
    assert not set(plan.conf.values()) & set(SECRET_VALUES)


def test_resolved_depot_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "depots.yml").write_text(
        "depots:\n"
        "  prod:\n"
        "    type: lakehouse\n"
        "    spec: {storageType: s3, s3: {bucket: b, relativePath: w/, region: us-east-1}}\n"
        "    catalog: {type: rest, uri: \"{{ env_var('METASTORE_URL') }}\"}\n"
        "    secrets: {apikey: \"{{ env_var('LAKEHOUSE_APIKEY') }}\"}\n"
    )
    env = {
        "METASTORE_URL": "https://m.example/api",
        "LAKEHOUSE_APIKEY": APIKEY,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    }
    resolved = resolve_depot(
        depot="dataos://prod",
        depots_file=None,
        warehouse=None,
        aws_region=None,
        aws_endpoint="http://localhost:9000",
        env=env,
        cwd=tmp_path,
        home=tmp_path,
    )
    plan = build_spark_conf_plan(resolved, "lakehouse")
    assert plan.conf["spark.sql.catalog.lakehouse.uri"] == "https://m.example/api"
    assert plan.conf["spark.sql.catalog.lakehouse.warehouse"] == "s3://b/w"
    assert plan.conf["spark.hadoop.fs.s3a.endpoint"] == "http://localhost:9000"
    assert plan.secret_catalog_conf == {"spark.sql.catalog.lakehouse.token": APIKEY}
    assert plan.secret_hadoop_conf == {
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
    }
    assert plan.jar_needs == frozenset({"iceberg", "s3a"})
