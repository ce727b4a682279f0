"""The Spark conf of GCS depots: the connector route and the GCSFileIO route, emulator and key,
mounted depots beside S3 ones, and no part of a key in SparkConf."""

from __future__ import annotations

import json

import pytest

from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    GcsStorage,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.secrets import is_secret_key
from unit.profile.gcs_key import service_account_key

C = "spark.sql.catalog.lake"
EMULATOR = "http://127.0.0.1:4443"
GCS_FILE_IO = "org.apache.iceberg.gcp.gcs.GCSFileIO"


def gcs_depot(
    kind: str = "hadoop",
    endpoint: str | None = None,
    key: str | None = None,
    bucket: str = "lake-bucket",
    **properties: str,
) -> Depot:
    catalog = CatalogSpec(kind, "http://cat.example" if kind in ("rest", "nessie") else None)
    catalog = CatalogSpec(catalog.type, catalog.uri, None, dict(properties))
    secrets = DepotSecrets(gcs_key_json=Secret(key) if key else None)
    storage = GcsStorage(bucket, "wh", "lake-project", endpoint)
    return Depot(f"gcs-{kind}", storage, catalog, secrets, "test")


@pytest.mark.parametrize("kind", ["hadoop", "rest", "jdbc", "nessie"])
def test_every_catalog_type_reaches_gcs_through_the_connector(kind: str) -> None:
    plan = build_spark_conf_plan(gcs_depot(kind, endpoint=EMULATOR), "lake")
    conf = plan.conf
    assert conf[f"{C}.warehouse"] == "gs://lake-bucket/wh"
    assert conf[f"{C}.io-impl"] == "org.apache.iceberg.hadoop.HadoopFileIO"
    assert conf["spark.hadoop.fs.gs.impl"] == (
        "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem"
    )
    assert conf["spark.hadoop.fs.gs.storage.root.url"] == EMULATOR
    assert conf["spark.hadoop.fs.gs.operation.move.enable"] == "false"
    assert conf["spark.hadoop.fs.gs.auth.null.enable"] == "true"
    assert conf["spark.hadoop.fs.gs.project.id"] == "lake-project"
    assert "gcs-connector" in plan.jar_needs and "gcp-bundle" not in plan.jar_needs
    assert "s3a" not in plan.jar_needs


def test_google_itself_without_a_key_uses_the_default_chain() -> None:
    conf = build_spark_conf_plan(gcs_depot(), "lake").conf
    assert not any("auth" in k or "root.url" in k or "move" in k for k in conf), conf


def test_a_key_reaches_the_connector_at_runtime_only() -> None:
    key = service_account_key()
    fields = json.loads(key)
    plan = build_spark_conf_plan(gcs_depot(key=key), "lake")
    assert plan.secret_hadoop_conf == {
        "fs.gs.auth.service.account.email": fields["client_email"],
        "fs.gs.auth.service.account.private.key.id": fields["private_key_id"],
        "fs.gs.auth.service.account.private.key": fields["private_key"],
    }
    assert plan.conf["spark.hadoop.fs.gs.auth.service.account.enable"] == "true"
    assert plan.conf["spark.hadoop.fs.gs.token.server.url"] == fields["token_uri"]
    shown = repr(plan.conf)
    assert fields["private_key_id"] not in shown and "PRIVATE KEY" not in shown
    # Spark's redaction regex masks the key's settings wherever Spark shows them.
    assert all(is_secret_key(k) for k in plan.secret_hadoop_conf if "private" in k)


def test_a_mounted_gcs_depot_keeps_its_key_in_its_own_catalog() -> None:
    key = service_account_key()
    s3 = Depot(
        "s3",
        S3Storage("s3-bucket", "wh", "us-east-1"),
        CatalogSpec("hadoop"),
        DepotSecrets(),
        "test",
    )
    plan = build_spark_conf_plan(s3, "main", {"lake": gcs_depot(key=key)})
    assert {"s3a", "gcs-connector"} <= plan.jar_needs
    assert not plan.secret_hadoop_conf  # nothing session-wide
    secret = plan.secret_catalog_conf
    assert (
        secret[f"{C}.hadoop.fs.gs.auth.service.account.private.key"]
        == (json.loads(key)["private_key"])
    )
    assert plan.conf[f"{C}.hadoop.fs.gs.auth.service.account.enable"] == "true"
    assert plan.conf["spark.hadoop.fs.gs.impl"].endswith("GoogleHadoopFileSystem")


def test_gcsfileio_route_on_an_emulator() -> None:
    plan = build_spark_conf_plan(gcs_depot("rest", EMULATOR, **{"io-impl": GCS_FILE_IO}), "lake")
    conf = plan.conf
    assert conf[f"{C}.io-impl"] == GCS_FILE_IO
    assert conf[f"{C}.gcs.service.host"] == EMULATOR
    assert conf[f"{C}.gcs.no-auth"] == "true"
    assert conf[f"{C}.gcs.project-id"] == "lake-project"
    assert plan.jar_needs == {"iceberg", "gcp-bundle"}
    # The hadoop catalog still commits through Hadoop's file system: both.
    hadoop = build_spark_conf_plan(gcs_depot("hadoop", EMULATOR, **{"io-impl": GCS_FILE_IO}), "x")
    assert {"gcp-bundle", "gcs-connector"} <= hadoop.jar_needs


def test_gcsfileio_with_a_key_is_refused_with_the_fix() -> None:
    depot = gcs_depot(key=service_account_key(), **{"io-impl": GCS_FILE_IO})
    with pytest.raises(DepotConfigError) as info:
        build_spark_conf_plan(depot, "lake")
    assert "GCSFileIO takes no service-account key" in info.value.msg
    assert "drop io-impl" in info.value.msg and "PRIVATE" not in info.value.msg


def test_two_depots_on_one_bucket_must_share_key_and_endpoint() -> None:
    plan = build_spark_conf_plan(gcs_depot(), "a", {"b": gcs_depot("rest")})
    assert "spark.sql.catalog.b.io-impl" in plan.conf
    with pytest.raises(DepotConfigError) as info:
        build_spark_conf_plan(gcs_depot(), "a", {"b": gcs_depot(key=service_account_key())})
    assert "both use GCS bucket 'lake-bucket' with a different key or endpoint" in info.value.msg
    # Other buckets are independent.
    other = gcs_depot(key=service_account_key(), bucket="other")
    assert build_spark_conf_plan(gcs_depot(), "a", {"b": other})


def test_a_mounted_depot_inherits_nothing_from_the_profiles_gcs_depot() -> None:
    """Beside a default depot on an emulator with no key, a mounted one on Google with the
    default chain states Google's endpoint and blanks the key settings; beside a default one
    with a key, a mounted emulator depot runs unauthenticated."""
    key = service_account_key()
    plan = build_spark_conf_plan(
        gcs_depot(endpoint=EMULATOR), "main", {"lake": gcs_depot(bucket="b")}
    )
    scope = f"{C}.hadoop.fs.gs."
    assert plan.conf[f"{scope}storage.root.url"] == "https://storage.googleapis.com/"
    assert plan.conf[f"{scope}operation.move.enable"] == "true"
    assert plan.conf[f"{scope}auth.null.enable"] == "false"
    assert plan.conf[f"{scope}auth.service.account.private.key"] == ""
    keyed = build_spark_conf_plan(
        gcs_depot(key=key), "main", {"lake": gcs_depot(endpoint=EMULATOR, bucket="b")}
    )
    assert keyed.conf[f"{scope}auth.null.enable"] == "true"
    assert keyed.conf[f"{scope}auth.service.account.enable"] == "false"
    assert keyed.conf[f"{scope}storage.root.url"] == EMULATOR
