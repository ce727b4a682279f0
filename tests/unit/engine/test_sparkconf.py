"""Depot -> Spark configuration plan: the conf keys every plan has, and each catalog's."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.sparkconf import (
    GLUE_KEY_PROPERTIES,
    SYSTEM_PROPERTY_CREDENTIALS,
    build_spark_conf_plan,
    jdbc_driver_need,
)
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    DepotSecrets,
    S3Storage,
    Secret,
    resolve_depot,
)
from dbt.adapters.lakehouse.profile.secrets import REDACTION_REGEX
from unit.engine.sparkconf_plans import (
    ALL_SECRETS,
    CATALOGS,
    KEYS_ONLY,
    LOCAL,
    S3,
    C,
    depot,
    plan_for,
    s3a_keys,
)
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    JDBC_PASSWORD,
    JDBC_USER,
    SECRET_KEY,
    SESSION_TOKEN,
)

# --- always ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(CATALOGS))
def test_common_keys(kind: str) -> None:
    plan = plan_for(kind)
    assert plan.conf["spark.sql.extensions"] == (
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    )
    assert plan.conf[C] == "org.apache.iceberg.spark.SparkCatalog"
    assert plan.conf["spark.sql.defaultCatalog"] == "lh"
    assert plan.conf[f"{C}.warehouse"] == "s3://bkt/wh"
    assert plan.conf["spark.redaction.regex"] == REDACTION_REGEX
    assert "iceberg" in plan.jar_needs


@pytest.mark.parametrize("kind", sorted(CATALOGS))
def test_catalog_cache_is_off_unless_the_depot_turns_it_on(kind: str) -> None:
    # Another process's commit must be visible to the next statement, not 30 s later.
    assert plan_for(kind).conf[f"{C}.cache-enabled"] == "false"
    spec = CATALOGS[kind]
    cached = CatalogSpec(spec.type, spec.uri, spec.warehouse, {"cache-enabled": "true"})
    assert plan_for(cached).conf[f"{C}.cache-enabled"] == "true"


def test_catalog_warehouse_wins_over_storage() -> None:
    spec = CatalogSpec("rest", "https://rest.example/api", "my_polaris_catalog", {})
    assert plan_for(spec).conf[f"{C}.warehouse"] == "my_polaris_catalog"


def test_properties_pass_through_and_override() -> None:
    props = {"cache-enabled": "false", "io-impl": "com.example.MyFileIO", "header.X-Org": "o"}
    plan = plan_for(CatalogSpec("rest", "https://rest.example/api", None, props))
    assert plan.conf[f"{C}.cache-enabled"] == "false"
    assert plan.conf[f"{C}.header.X-Org"] == "o"
    assert plan.conf[f"{C}.io-impl"] == "com.example.MyFileIO"


def test_secret_looking_properties_are_applied_at_runtime() -> None:
    props = {"credential": f"client:{APIKEY}", "scope": "catalog"}
    plan = plan_for(CatalogSpec("rest", "https://rest.example/api", None, props))
    assert plan.secret_catalog_conf[f"{C}.credential"] == f"client:{APIKEY}"
    assert f"{C}.credential" not in plan.conf
    assert plan.conf[f"{C}.scope"] == "catalog"


@pytest.mark.parametrize("name", ["spark_catalog", "a.b", "", "has space", "1abc"])
def test_catalog_name_must_be_usable(name: str) -> None:
    with pytest.raises(DepotConfigError, match="catalog name"):
        build_spark_conf_plan(depot("rest"), name)


# --- catalogs --------------------------------------------------------------------------------


def test_embedded() -> None:
    embedded = resolve_depot(
        depot=None,
        depots_file=None,
        warehouse="/data/wh",
        aws_region=None,
        aws_endpoint=None,
        env={},
        cwd=Path("/work"),
    )
    plan = build_spark_conf_plan(embedded, "lh")
    assert plan.conf[f"{C}.catalog-impl"] == "org.apache.iceberg.jdbc.JdbcCatalog"
    assert plan.conf[f"{C}.uri"] == "jdbc:sqlite:/data/wh/_catalog/iceberg.db?busy_timeout=120000"
    assert plan.conf[f"{C}.jdbc.schema-version"] == "V1"
    assert plan.conf[f"{C}.warehouse"] == "file:/data/wh"
    assert plan.jar_needs == frozenset({"iceberg", "sqlite"})
    assert plan.secret_catalog_conf == {}
    assert plan.secret_hadoop_conf == {}
    assert not s3a_keys(plan)
    assert f"{C}.io-impl" not in plan.conf


def test_jdbc_with_credentials() -> None:
    secrets = DepotSecrets(jdbc_user=Secret(JDBC_USER), jdbc_password=Secret(JDBC_PASSWORD))
    plan = plan_for("jdbc", LOCAL, secrets)
    assert plan.conf[f"{C}.catalog-impl"] == "org.apache.iceberg.jdbc.JdbcCatalog"
    assert plan.conf[f"{C}.uri"] == "jdbc:postgresql://db:5432/ice"
    assert plan.conf[f"{C}.jdbc.schema-version"] == "V1"
    assert plan.secret_catalog_conf == {
        f"{C}.jdbc.user": JDBC_USER,
        f"{C}.jdbc.password": JDBC_PASSWORD,
    }
    assert plan.jar_needs == frozenset({"iceberg", "postgresql"})


@pytest.mark.parametrize(
    ("uri", "need"),
    [
        ("jdbc:postgresql://db:5432/ice", "postgresql"),
        ("JDBC:PostgreSQL://db/ice", "postgresql"),
        ("jdbc:h2:file:/x/iceberg;AUTO_SERVER=TRUE", "h2"),
        ("jdbc:sqlite:/x/_catalog/iceberg.db?busy_timeout=1000", "sqlite"),
        ("jdbc:mysql://db/ice", None),  # another database's driver comes from `spark.jars`
        ("postgresql://db/ice", None),
        (None, None),
    ],
)
def test_jdbc_driver_by_subprotocol(uri: str | None, need: str | None) -> None:
    assert jdbc_driver_need(uri) == need


def test_jdbc_uri_with_password_is_a_secret() -> None:
    uri = f"jdbc:postgresql://db/ice?user=u&password={JDBC_PASSWORD}"
    plan = plan_for(CatalogSpec("jdbc", uri, None, {}), LOCAL)
    assert f"{C}.uri" not in plan.conf
    assert plan.secret_catalog_conf[f"{C}.uri"] == uri


def test_rest() -> None:
    plan = plan_for("rest", LOCAL, DepotSecrets(apikey=Secret(APIKEY)))
    assert plan.conf[f"{C}.type"] == "rest"
    assert plan.conf[f"{C}.uri"] == "https://rest.example/api"
    assert plan.secret_catalog_conf == {f"{C}.token": APIKEY}
    assert f"{C}.catalog-impl" not in plan.conf
    assert plan.jar_needs == frozenset({"iceberg"})


def test_rest_without_apikey_has_no_token() -> None:
    assert f"{C}.token" not in plan_for("rest", LOCAL).secret_catalog_conf


def test_hadoop() -> None:
    plan = plan_for("hadoop", LOCAL)
    assert plan.conf[f"{C}.type"] == "hadoop"
    assert f"{C}.uri" not in plan.conf
    assert f"{C}.catalog-impl" not in plan.conf
    assert plan.conf[f"{C}.warehouse"] == "file:/data/wh"


def test_glue_uses_s3fileio() -> None:
    plan = plan_for("glue", S3Storage("bkt", "wh", "ap-south-1", None), ALL_SECRETS)
    assert plan.conf[f"{C}.catalog-impl"] == "org.apache.iceberg.aws.glue.GlueCatalog"
    assert plan.conf[f"{C}.io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert plan.conf[f"{C}.client.region"] == "ap-south-1"
    assert plan.secret_catalog_conf == {
        f"{C}.s3.access-key-id": ACCESS_KEY,
        f"{C}.s3.secret-access-key": SECRET_KEY,
        f"{C}.s3.session-token": SESSION_TOKEN,
    }
    assert plan.jar_needs == frozenset({"iceberg", "aws-sdk-v2"})
    assert not s3a_keys(plan)
    assert plan.secret_hadoop_conf == {}
    assert f"{C}.s3.endpoint" not in plan.conf


def test_glue_client_gets_the_depot_keys_as_jvm_system_properties() -> None:
    plan = plan_for("glue", S3Storage("bkt", "wh", "ap-south-1", None), ALL_SECRETS)
    # The SDK's default chain, whose first provider reads them (and which goes on to the
    # variables, profile and role when they are not set).
    assert f"{C}.client.credentials-provider" not in plan.conf
    assert SYSTEM_PROPERTY_CREDENTIALS == (
        "software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider"
    )
    assert plan.secret_system_properties == {
        "aws.accessKeyId": ACCESS_KEY,
        "aws.secretAccessKey": SECRET_KEY,
        "aws.sessionToken": SESSION_TOKEN,
    }
    keys_only = plan_for("glue", S3, KEYS_ONLY)
    assert keys_only.secret_system_properties == {
        "aws.accessKeyId": ACCESS_KEY,
        "aws.secretAccessKey": SECRET_KEY,
    }
    assert set(GLUE_KEY_PROPERTIES.values()) >= set(keys_only.secret_system_properties)


@pytest.mark.parametrize("kind", ["rest", "hadoop", "jdbc", "nessie"])
def test_only_glue_sets_system_properties(kind: str) -> None:
    plan = plan_for(kind, S3, ALL_SECRETS)
    assert plan.secret_system_properties == {}
    assert f"{C}.client.credentials-provider" not in plan.conf


def test_glue_endpoint_property_passes_through() -> None:
    spec = CatalogSpec("glue", None, None, {"glue.endpoint": "http://127.0.0.1:5000"})
    plan = plan_for(spec, S3, KEYS_ONLY)
    assert plan.conf[f"{C}.glue.endpoint"] == "http://127.0.0.1:5000"


def test_two_glue_depots_must_share_their_keys() -> None:
    other_keys = DepotSecrets(aws_access_key=Secret("AKIAOTHER"), aws_secret_key=Secret("x" * 8))
    glue_a = depot("glue", S3Storage("bkt-a", "", "us-east-1"), KEYS_ONLY)
    same = depot("glue", S3Storage("bkt-b", "", "us-east-1"), KEYS_ONLY)
    plan = build_spark_conf_plan(glue_a, "lh", {"other": same})
    assert plan.secret_system_properties["aws.accessKeyId"] == ACCESS_KEY
    different = depot("glue", S3Storage("bkt-b", "", "us-east-1"), other_keys)
    with pytest.raises(DepotConfigError, match="system properties, so one session has one set"):
        build_spark_conf_plan(glue_a, "lh", {"other": different})
    # A glue depot beside a catalog of another type keeps its keys.
    rest = depot("rest", S3Storage("bkt-c", "", "us-east-1"), other_keys)
    assert build_spark_conf_plan(glue_a, "lh", {"other": rest}).secret_system_properties


def test_glue_with_endpoint() -> None:
    plan = plan_for("glue", S3Storage("bkt", "", "us-east-1", "http://minio:9000"))
    assert plan.conf[f"{C}.s3.endpoint"] == "http://minio:9000"
    assert plan.conf[f"{C}.s3.path-style-access"] == "true"
    assert plan.secret_catalog_conf == {}  # no keys: the default AWS chain
    assert plan.secret_system_properties == {}
    assert f"{C}.client.credentials-provider" not in plan.conf


def test_nessie() -> None:
    plan = plan_for("nessie", LOCAL)
    assert plan.conf[f"{C}.catalog-impl"] == "org.apache.iceberg.nessie.NessieCatalog"
    assert plan.conf[f"{C}.uri"] == "http://nessie:19120/api/v2"
    assert plan.conf[f"{C}.ref"] == "main"
    assert plan.conf[f"{C}.client-builder-name"] == "URLConnection"
    assert f"{C}.authentication.type" not in plan.conf
    assert plan.secret_catalog_conf == {}


def test_nessie_with_apikey_and_ref() -> None:
    spec = CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {"ref": "dev"})
    plan = plan_for(spec, LOCAL, DepotSecrets(apikey=Secret(APIKEY)))
    assert plan.conf[f"{C}.ref"] == "dev"
    assert plan.conf[f"{C}.authentication.type"] == "BEARER"
    assert plan.secret_catalog_conf == {f"{C}.authentication.token": APIKEY}
