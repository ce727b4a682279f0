"""delta-rs (object_store) options for a depot's storage, with credentials kept out of reprs."""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot.azure import blob_endpoint
from dbt.adapters.lakehouse.profile.depot.model import AbfssStorage, Depot
from dbt.adapters.lakehouse.profile.depot.storage import kind_of
from dbt.adapters.lakehouse.profile.depot.storage.kind import StorageOptions

# object_store's names (deltalake's storage_options) of the depot's Azure secrets.
_AZURE_OPTIONS = {
    "azure_account_key": "azure_storage_account_key",
    "azure_sas_token": "azure_storage_sas_token",
    "azure_client_id": "azure_storage_client_id",
    "azure_client_secret": "azure_storage_client_secret",
    "azure_tenant_id": "azure_storage_tenant_id",
}


def storage_options(depot: Depot | None) -> dict[str, str]:
    """delta-rs (object_store) options for the depot's storage: its own endpoint, region and
    keys, so the log lands where the catalog's files are, with the same credentials."""
    if depot is not None and isinstance(depot.storage, AbfssStorage):
        return _azure_options(depot, depot.storage)
    kind = None if depot is None else kind_of(depot.storage)
    if depot is None or kind is None:
        return StorageOptions()
    return kind.delta_options(depot)


def _azure_options(depot: Depot, storage: AbfssStorage) -> StorageOptions:
    """ADLS Gen2 through object_store's Azure client (the Blob API), with the depot's one
    credential form; an endpoint (a private one, an emulator) as its Blob URL."""
    options = StorageOptions(_AZURE_OPTIONS.values(), azure_storage_account_name=storage.account)
    if storage.endpoint:
        options["azure_storage_endpoint"] = blob_endpoint(storage)
        if storage.endpoint.lower().startswith("http://"):
            options["allow_http"] = "true"
    for name, option in _AZURE_OPTIONS.items():
        secret = getattr(depot.secrets, name)
        if secret:
            options[option] = secret.reveal()
    return options
