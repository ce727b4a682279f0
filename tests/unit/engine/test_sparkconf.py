"""Depot -> Spark configuration plan: conf keys per catalog and storage, secrets kept apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from dbt.adapters.lakehouse.engine.s3_conf import S3A_LIMITS, S3A_MARKERS
from dbt.adapters.lakehouse.engine.sparkconf import (
    GLUE_KEY_PROPERTIES,
    S3_FILE_IO,
    SYSTEM_PROPERTY_CREDENTIALS,
    SparkConfPlan,
    build_spark_conf_plan,
    jdbc_driver_need,
)
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    Secret,
    resolve_depot,
)
from dbt.adapters.lakehouse.profile.secrets import REDACTION_REGEX, is_secret_key, scrub

C = "spark.sql.catalog.lh"
ACCESS_KEY = "AKIAFAKEACCESS7Q2W"
SECRET_KEY = "fakeSecretKey-9f8e7d6c"
SESSION_TOKEN = "fakeSessionToken-Zx81"
APIKEY = "fakeApiKey-4455aa"
JDBC_USER = "fakeJdbcUser-u7"
JDBC_PASSWORD = "fakeJdbcPass-p9"
SECRET_VALUES = (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, APIKEY, JDBC_USER, JDBC_PASSWORD)
ALL_SECRETS = DepotSecrets(
    aws_access_key=Secret(ACCESS_KEY),
    aws_secret_key=Secret(SECRET_KEY),
    aws_session_token=Secret(SESSION_TOKEN),
    apikey=Secret(APIKEY),
    jdbc_user=Secret(JDBC_USER),
    jdbc_password=Secret(JDBC_PASSWORD),
)
KEYS_ONLY = DepotSecrets(aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY))

S3 = S3Storage("bkt", "wh/", "eu-west-1", None)
LOCAL = LocalStorage(Path("/data/wh"))
CATALOGS = {
    "rest": CatalogSpec("rest", "https://rest.example/api", None, {}),
    "hadoop": CatalogSpec("hadoop", None, None, {}),
    "jdbc": CatalogSpec("jdbc", "jdbc:postgresql://db:5432/ice", None, {}),
    "glue": CatalogSpec("glue", None, None, {}),
    "nessie": CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {}),
}

# Hadoop 3.3 (Spark 3.5) is built on the AWS SDK v1, Hadoop 3.4 (Spark 4.1) on the v2.
SDK_CHAIN_OF_THE_LINE = (
    "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
    if installed_line().spark == "3.5"
    else "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
)


def depot(
    catalog: CatalogSpec | str,
    storage: S3Storage | LocalStorage = S3,
    secrets: DepotSecrets = DepotSecrets(),  # noqa: B008 - frozen, so sharing is safe
) -> Depot:
    spec = CATALOGS[catalog] if isinstance(catalog, str) else catalog
    return Depot("d", storage, spec, secrets, "inline depot", embedded=False)


def plan_for(*args: object, **kwargs: object) -> SparkConfPlan:
    return build_spark_conf_plan(depot(*args, **kwargs), "lh")  # type: ignore[arg-type]


def s3a_keys(plan: SparkConfPlan) -> set[str]:
    """The s3a keys the depot decides (the fixed limits and marker policy left out)."""
    fixed = S3A_LIMITS.keys() | S3A_MARKERS.keys()
    return {k for k in plan.conf if k.startswith("spark.hadoop.") and k not in fixed}


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
    assert (
        plan.conf[f"{C}.uri"]
        == "jdbc:h2:file:/data/wh/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE"
    )
    assert plan.conf[f"{C}.jdbc.schema-version"] == "V1"
    assert plan.conf[f"{C}.warehouse"] == "file:/data/wh"
    assert plan.jar_needs == frozenset({"iceberg", "h2"})
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
    assert f"{C}.authentication.type" not in plan.conf
    assert plan.secret_catalog_conf == {}


def test_nessie_with_apikey_and_ref() -> None:
    spec = CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {"ref": "dev"})
    plan = plan_for(spec, LOCAL, DepotSecrets(apikey=Secret(APIKEY)))
    assert plan.conf[f"{C}.ref"] == "dev"
    assert plan.conf[f"{C}.authentication.type"] == "BEARER"
    assert plan.secret_catalog_conf == {f"{C}.authentication.token": APIKEY}


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
