"""The Spark and Iceberg settings of an ADLS Gen2 (`abfss`) depot.

Two routes to the files, chosen by the depot's credential form (docs/runtime.md, "ADLS Gen2"):
- Hadoop's ABFS (`hadoop-azure` of pyspark's Hadoop, 3.3.4) under Iceberg's HadoopFileIO, the
  default for an account key or a service principal (OAuth client credentials), and what the
  hadoop catalog's metadata always goes through. Keys are per account host
  (`fs.azure.*.<account>.dfs.core.windows.net`), set for the session (the profile's depot) or
  as the catalog's own `hadoop.` properties (a mounted depot), so depots keep their own.
- Iceberg's ADLSFileIO (Azure SDK from `iceberg-azure-bundle`), for a SAS token (ABFS 3.3.4
  takes no fixed SAS token) or when the depot asks for it with `catalog.properties.io-impl`.
Secrets go to the secret maps, never into `conf`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import AbfssStorage, Depot, DepotSecrets
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import (
    ADLS_FILE_IO,
    AZURE_LOGIN_HOST,
    KEY,
    SAS,
    SERVICE_PRINCIPAL,
    credential_form,
)
from dbt.adapters.lakehouse.profile.depot.storage.kind import HADOOP_FILE_IO

ABFS_FILESYSTEM = "org.apache.hadoop.fs.azurebfs.AzureBlobFileSystem"
ABFSS_FILESYSTEM = "org.apache.hadoop.fs.azurebfs.SecureAzureBlobFileSystem"
CLIENT_CREDENTIALS = "org.apache.hadoop.fs.azurebfs.oauth2.ClientCredsTokenProvider"

# Session-wide ABFS settings (no secrets). JSSE, not OpenSSL: Hadoop's default mode tries
# wildfly-openssl first, a jar pyspark does not ship. Retries: ABFS's defaults (30 attempts,
# backoff to 30 s) leave a dead endpoint hanging for many minutes; these fail in seconds.
ABFS_LIMITS = {
    "spark.hadoop.fs.abfs.impl": ABFS_FILESYSTEM,
    "spark.hadoop.fs.abfss.impl": ABFSS_FILESYSTEM,
    "spark.hadoop.fs.azure.ssl.channel.mode": "Default_JSSE",
    "spark.hadoop.fs.azure.io.retry.max.retries": "3",
    "spark.hadoop.fs.azure.io.retry.max.backoff.interval": "5000",
}


@dataclass
class AzurePlan:
    """What an abfss catalog adds: safe conf, secrets (catalog / Hadoop), and jar needs."""

    conf: dict[str, str] = field(default_factory=dict)
    secret_catalog: dict[str, str] = field(default_factory=dict)
    secret_hadoop: dict[str, str] = field(default_factory=dict)
    jar_needs: set[str] = field(default_factory=set)


def default_io_impl(secrets: DepotSecrets) -> str:
    return ADLS_FILE_IO if secrets.azure_sas_token else HADOOP_FILE_IO


def abfss_plan(
    storage: AbfssStorage,
    secrets: DepotSecrets,
    prefix: str,
    io_impl: str,
    default: bool,
) -> AzurePlan:
    """`prefix` is `spark.sql.catalog.<name>`; `default`: the profile's own depot, whose
    Hadoop settings are the session's (a mounted depot's are its catalog's own)."""
    plan = AzurePlan()
    form = credential_form(_revealed(secrets))
    if form in (KEY, SERVICE_PRINCIPAL):
        _abfs(storage, secrets, form, plan, None if default else prefix)
    if io_impl == ADLS_FILE_IO:
        _adls_file_io(storage, secrets, form, prefix, plan)
    return plan


def claim_container(
    owners: dict[tuple[str, str], tuple[str, Depot]], catalog_name: str, depot: Depot
) -> None:
    """Hadoop caches one ABFS client per container (scheme, container@host, user), built from
    the settings of whichever catalog reached it first: two depots whose files go through ABFS
    on one container must agree on them. ADLSFileIO keeps a client per catalog."""
    storage = depot.storage
    assert isinstance(storage, AbfssStorage)  # the registry hands it abfss depots only
    if not _uses_abfs(depot):
        return
    earlier = owners.setdefault((storage.account, storage.container), (catalog_name, depot))
    other_name, other = earlier
    if other is depot or (
        _revealed(other.secrets) == _revealed(depot.secrets)
        and getattr(other.storage, "endpoint", None) == storage.endpoint
    ):
        return
    raise DepotConfigError(
        f"Depots '{other.name}' (catalog {other_name}) and '{depot.name}' (catalog "
        f"{catalog_name}) both reach container '{storage.container}' of account "
        f"'{storage.account}' through Hadoop's ABFS with different credentials or endpoints; "
        "Hadoop keeps one client per container, so one container has one set. Accepted: "
        "depots on different containers, the same credentials for a shared container, or "
        f"catalog.properties.io-impl: {ADLS_FILE_IO} (a client per catalog) for one of them."
    )


def _uses_abfs(depot: Depot) -> bool:
    io_impl = depot.catalog.properties.get("io-impl", default_io_impl(depot.secrets))
    return io_impl != ADLS_FILE_IO or depot.catalog.type == "hadoop"


def _abfs(
    storage: AbfssStorage,
    secrets: DepotSecrets,
    form: str,
    plan: AzurePlan,
    catalog_prefix: str | None,
) -> None:
    if catalog_prefix is None:
        scope, secret_scope, secret_target = "spark.hadoop.", "", plan.secret_hadoop
    else:
        scope = secret_scope = f"{catalog_prefix}.hadoop."
        secret_target = plan.secret_catalog
    host = storage.host
    plan.conf.update(ABFS_LIMITS)
    plan.jar_needs.add("abfs")
    if storage.endpoint:
        # ABFS takes `host:port` (no scheme) and puts the account in the path, as an emulator
        # or a private endpoint serves it; the scheme follows abfs:// or abfss://.
        parts = urlsplit(storage.endpoint)
        plan.conf[f"{scope}fs.azure.abfs.endpoint.{host}"] = parts.netloc
        if parts.scheme.lower() == "http":
            # Read without the account suffix (ABFS's boolean settings are global); it only
            # lets abfs:// use http, abfss:// stays TLS.
            plan.conf[f"{scope}fs.azure.always.use.https"] = "false"
    if form == KEY:
        assert secrets.azure_account_key is not None
        plan.conf[f"{scope}fs.azure.account.auth.type.{host}"] = "SharedKey"
        secret_target[f"{secret_scope}fs.azure.account.key.{host}"] = (
            secrets.azure_account_key.reveal()
        )
        return
    assert secrets.azure_client_id and secrets.azure_client_secret and secrets.azure_tenant_id
    tenant = secrets.azure_tenant_id.reveal()
    plan.conf[f"{scope}fs.azure.account.auth.type.{host}"] = "OAuth"
    plan.conf[f"{scope}fs.azure.account.oauth.provider.type.{host}"] = CLIENT_CREDENTIALS
    # The client and tenant ids are held as secrets: they stay out of SparkConf with the secret.
    secret_target[f"{secret_scope}fs.azure.account.oauth2.client.id.{host}"] = (
        secrets.azure_client_id.reveal()
    )
    secret_target[f"{secret_scope}fs.azure.account.oauth2.client.secret.{host}"] = (
        secrets.azure_client_secret.reveal()
    )
    secret_target[f"{secret_scope}fs.azure.account.oauth2.client.endpoint.{host}"] = (
        f"https://{AZURE_LOGIN_HOST}/{tenant}/oauth2/token"
    )


def _adls_file_io(
    storage: AbfssStorage,
    secrets: DepotSecrets,
    form: str | None,
    prefix: str,
    plan: AzurePlan,
) -> None:
    """Iceberg's AzureProperties: the SAS token and the endpoint are keyed by the location's
    host (`<account>.dfs.core.windows.net`); the shared key is one per catalog."""
    host = storage.host
    plan.jar_needs.add("azure-sdk")
    if storage.endpoint:
        # Despite its name, AzureProperties passes this value to the client builder's endpoint.
        plan.secret_catalog[f"{prefix}.adls.connection-string.{host}"] = storage.endpoint
    if form == SAS:
        assert secrets.azure_sas_token is not None
        plan.secret_catalog[f"{prefix}.adls.sas-token.{host}"] = secrets.azure_sas_token.reveal()
    elif form == KEY:
        assert secrets.azure_account_key is not None
        plan.conf[f"{prefix}.adls.auth.shared-key.account.name"] = storage.account
        plan.secret_catalog[f"{prefix}.adls.auth.shared-key.account.key"] = (
            secrets.azure_account_key.reveal()
        )


def _revealed(secrets: DepotSecrets) -> dict[str, str]:
    names = (
        "azure_account_key",
        "azure_sas_token",
        "azure_client_id",
        "azure_client_secret",
        "azure_tenant_id",
    )
    return {n: s.reveal() for n in names if (s := getattr(secrets, n))}
