"""abfss depot -> Spark conf: Hadoop's ABFS for an account key or a service principal,
Iceberg's ADLSFileIO for a SAS token; secrets kept out of SparkConf; several clouds at once."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    CatalogSpec,
    Depot,
    DepotSecrets,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.storage.abfss.conf import ABFS_LIMITS, CLIENT_CREDENTIALS
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import ADLS_FILE_IO
from dbt.adapters.lakehouse.profile.depot.storage.kind import HADOOP_FILE_IO
from dbt.adapters.lakehouse.profile.secrets import is_secret_key

C = "spark.sql.catalog.lh"
HOST = "acct.dfs.core.windows.net"
KEY = "ZmFrZUFjY291bnRLZXk9PQ-conf"
SAS = "sv=2024-11-04&sig=fakeSig%3D"
CLIENT_ID = "fake-client-0c1d"
CLIENT_SECRET = "fake-client-secret-7e8f"
TENANT = "fake-tenant-5a6b"
STORAGE = AbfssStorage("acct", "lake", "wh")
EMULATED = AbfssStorage("acct", "lake", "wh", "http://127.0.0.1:10999/acct")
KEY_SECRETS = DepotSecrets(azure_account_key=Secret(KEY))
SAS_SECRETS = DepotSecrets(azure_sas_token=Secret(SAS))
SP_SECRETS = DepotSecrets(
    azure_client_id=Secret(CLIENT_ID),
    azure_client_secret=Secret(CLIENT_SECRET),
    azure_tenant_id=Secret(TENANT),
)
HADOOP = CatalogSpec("hadoop", None, None, {})
REST = CatalogSpec("rest", "https://rest.example/api", None, {})


def depot(
    secrets: DepotSecrets,
    catalog: CatalogSpec = HADOOP,
    storage: AbfssStorage = STORAGE,
    name: str = "az",
) -> Depot:
    return Depot(name, storage, catalog, secrets, "inline depot")


def no_secret_in_conf(conf: dict[str, str]) -> None:
    for key, value in conf.items():
        assert "azure" not in key or not is_secret_key(key), key
        for secret in (KEY, SAS, CLIENT_ID, CLIENT_SECRET, TENANT):
            assert secret not in value, key


def test_account_key_goes_through_abfs() -> None:
    plan = build_spark_conf_plan(depot(KEY_SECRETS), "lh")
    assert plan.conf[f"{C}.warehouse"] == f"abfss://lake@{HOST}/wh"
    assert plan.conf[f"{C}.io-impl"] == HADOOP_FILE_IO
    assert plan.conf[f"spark.hadoop.fs.azure.account.auth.type.{HOST}"] == "SharedKey"
    assert plan.secret_hadoop_conf == {f"fs.azure.account.key.{HOST}": KEY}
    assert ABFS_LIMITS.items() <= plan.conf.items()
    assert plan.jar_needs == {"iceberg", "abfs"}
    no_secret_in_conf(plan.conf)


def test_service_principal_uses_oauth_client_credentials() -> None:
    plan = build_spark_conf_plan(depot(SP_SECRETS), "lh")
    assert plan.conf[f"spark.hadoop.fs.azure.account.auth.type.{HOST}"] == "OAuth"
    assert plan.conf[f"spark.hadoop.fs.azure.account.oauth.provider.type.{HOST}"] == (
        CLIENT_CREDENTIALS
    )
    assert plan.secret_hadoop_conf == {
        f"fs.azure.account.oauth2.client.id.{HOST}": CLIENT_ID,
        f"fs.azure.account.oauth2.client.secret.{HOST}": CLIENT_SECRET,
        f"fs.azure.account.oauth2.client.endpoint.{HOST}": (
            f"https://login.microsoftonline.com/{TENANT}/oauth2/token"
        ),
    }
    no_secret_in_conf(plan.conf)


def test_sas_token_goes_through_adls_file_io() -> None:
    plan = build_spark_conf_plan(depot(SAS_SECRETS, REST), "lh")
    assert plan.conf[f"{C}.io-impl"] == ADLS_FILE_IO
    assert plan.secret_catalog_conf[f"{C}.adls.sas-token.{HOST}"] == SAS
    assert not plan.secret_hadoop_conf
    assert "abfs" not in plan.jar_needs and "azure-sdk" in plan.jar_needs
    no_secret_in_conf(plan.conf)


def test_account_key_with_adls_file_io_on_request() -> None:
    catalog = CatalogSpec("rest", "https://rest.example/api", None, {"io-impl": ADLS_FILE_IO})
    plan = build_spark_conf_plan(depot(KEY_SECRETS, catalog, EMULATED), "lh")
    assert plan.conf[f"{C}.adls.auth.shared-key.account.name"] == "acct"
    assert plan.secret_catalog_conf[f"{C}.adls.auth.shared-key.account.key"] == KEY
    assert plan.secret_catalog_conf[f"{C}.adls.connection-string.{HOST}"] == EMULATED.endpoint
    assert {"abfs", "azure-sdk"} <= plan.jar_needs


def test_an_emulator_endpoint() -> None:
    plan = build_spark_conf_plan(depot(KEY_SECRETS, storage=EMULATED), "lh")
    assert plan.conf[f"{C}.warehouse"] == f"abfs://lake@{HOST}/wh"
    assert plan.conf[f"spark.hadoop.fs.azure.abfs.endpoint.{HOST}"] == "127.0.0.1:10999"
    assert plan.conf["spark.hadoop.fs.azure.always.use.https"] == "false"


def test_mounted_abfss_beside_s3_keeps_its_own_settings() -> None:
    s3 = Depot(
        "s3",
        S3Storage("bkt", "wh", "eu-west-1", None),
        HADOOP,
        DepotSecrets(aws_access_key=Secret("AKIAFAKE1234"), aws_secret_key=Secret("s3-secret")),
        "inline depot",
    )
    other = AbfssStorage("acct", "other", "wh")
    mounted = {"raw": depot(KEY_SECRETS), "sp": depot(SP_SECRETS, storage=other)}
    plan = build_spark_conf_plan(s3, "main", mounted)
    raw = "spark.sql.catalog.raw"
    assert plan.conf[f"{raw}.hadoop.fs.azure.account.auth.type.{HOST}"] == "SharedKey"
    assert plan.secret_catalog_conf[f"{raw}.hadoop.fs.azure.account.key.{HOST}"] == KEY
    assert (
        plan.secret_catalog_conf[
            f"spark.sql.catalog.sp.hadoop.fs.azure.account.oauth2.client.secret.{HOST}"
        ]
        == CLIENT_SECRET
    )
    # The profile's own S3 depot keeps the session's s3a settings; nothing Azure is session-wide
    # but the limits.
    assert "fs.s3a.access.key" in plan.secret_hadoop_conf
    assert not any("fs.azure.account" in k for k in plan.secret_hadoop_conf)
    assert {"s3a", "abfs"} <= plan.jar_needs
    no_secret_in_conf(plan.conf)


@pytest.mark.parametrize(
    "key",
    [
        f"fs.azure.account.key.{HOST}",
        "adls.auth.shared-key.account.key",
        f"adls.sas-token.{HOST}",
        f"adls.connection-string.{HOST}",
        f"fs.azure.account.oauth2.client.secret.{HOST}",
        "azure_account_key",
    ],
)
def test_azure_secret_keys_are_recognised(key: str) -> None:
    assert is_secret_key(key)


def test_two_abfs_depots_on_one_container_must_share_their_credentials() -> None:
    with pytest.raises(DepotConfigError, match="Hadoop keeps one client per container"):
        build_spark_conf_plan(depot(KEY_SECRETS), "lh", {"sp": depot(SP_SECRETS, name="sp")})
    # The same credentials, or one of them through ADLSFileIO (a client per catalog), are fine.
    build_spark_conf_plan(depot(KEY_SECRETS), "lh", {"again": depot(KEY_SECRETS, name="again")})
    build_spark_conf_plan(depot(KEY_SECRETS), "lh", {"sas": depot(SAS_SECRETS, REST, name="sas")})
    other = AbfssStorage("acct", "other", "wh")
    build_spark_conf_plan(depot(KEY_SECRETS), "lh", {"o": depot(SP_SECRETS, storage=other)})
