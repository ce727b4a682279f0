"""storageType abfss: an ADLS Gen2 container and folder, reached with one credential form (an
account key, a SAS token or a service principal).

Its names and credential forms are section.py's; Spark conf: Hadoop's ABFS or Iceberg's
ADLSFileIO (conf.py); `dbt debug`: the container over the Blob API (preflight.py); Delta:
object_store's Azure options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.profile.depot.model import AbfssStorage, Depot
from dbt.adapters.lakehouse.profile.depot.storage.abfss.conf import (
    abfss_plan,
    claim_container,
    default_io_impl,
)
from dbt.adapters.lakehouse.profile.depot.storage.abfss.preflight import AbfssChecks
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import (
    SECTION,
    blob_endpoint,
)
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    ConfParts,
    PreflightClients,
    StorageKind,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport

# object_store's names (deltalake's storage_options) of the depot's Azure secrets.
_AZURE_OPTIONS = {
    "azure_account_key": "azure_storage_account_key",
    "azure_sas_token": "azure_storage_sas_token",
    "azure_client_id": "azure_storage_client_id",
    "azure_client_secret": "azure_storage_client_secret",
    "azure_tenant_id": "azure_storage_tenant_id",
}


class AbfssKind(StorageKind[AbfssStorage]):
    claim = staticmethod(claim_container)

    def read_dataos_block(self, block: Mapping[str, Any], own: dict[str, Any]) -> None:
        # DataOS names a private cloud's endpoint by its suffix (`endpointSuffix`); the public
        # one's suffix is the default endpoint, which needs no setting.
        suffix = block.get("endpointSuffix")
        if suffix and "endpoint" not in own:
            suffix_text = str(suffix).strip().lstrip(".")
            if suffix_text and suffix_text != "dfs.core.windows.net":
                own["endpoint"] = f"https://{block.get('account')}.{suffix_text}"

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        io_impl = depot.catalog.properties.get("io-impl", default_io_impl(depot.secrets))
        parts.conf[f"{prefix}.io-impl"] = io_impl
        azure = abfss_plan(self.storage(depot), depot.secrets, prefix, io_impl, default)
        parts.conf.update(azure.conf)
        parts.secret_catalog.update(azure.secret_catalog)
        parts.secret_hadoop.update(azure.secret_hadoop)
        parts.jar_needs |= azure.jar_needs

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        AbfssChecks(self.storage(depot), depot.secrets, clients.abfss, timeout, report).run()
        return []

    def delta_options(self, depot: Depot) -> StorageOptions:
        """ADLS Gen2 through object_store's Azure client (the Blob API), with the depot's one
        credential form; an endpoint (a private one, an emulator) as its Blob URL."""
        storage = self.storage(depot)
        options = StorageOptions(
            _AZURE_OPTIONS.values(), azure_storage_account_name=storage.account
        )
        if storage.endpoint:
            options["azure_storage_endpoint"] = blob_endpoint(storage)
            if storage.endpoint.lower().startswith("http://"):
                options["allow_http"] = "true"
        for name, option in _AZURE_OPTIONS.items():
            secret = getattr(depot.secrets, name)
            if secret:
                options[option] = secret.reveal()
        return options


KIND = AbfssKind("abfss", AbfssStorage, SECTION)
