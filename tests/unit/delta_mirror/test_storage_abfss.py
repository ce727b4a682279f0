"""delta-rs options for an abfss depot: account, Blob endpoint, the one credential form, and a
repr that masks it."""

from __future__ import annotations

from dbt.adapters.lakehouse.delta_mirror.storage import storage_options
from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    CatalogSpec,
    Depot,
    DepotSecrets,
    Secret,
)

SAS = "sv=2024-11-04&sig=fakeSig%3D"


def test_sas_depot_behind_an_emulator() -> None:
    storage = AbfssStorage("acct", "lake", "wh", "http://127.0.0.1:10000/acct")
    depot = Depot(
        "az",
        storage,
        CatalogSpec("rest", "http://c"),
        DepotSecrets(azure_sas_token=Secret(SAS)),
        "x",
    )
    options = storage_options(depot)
    assert dict(options) == {
        "azure_storage_account_name": "acct",
        "azure_storage_endpoint": "http://127.0.0.1:10000/acct",
        "allow_http": "true",
        "azure_storage_sas_token": SAS,
    }
    assert SAS not in repr(options) and SAS not in str(options)


def test_service_principal_on_azure() -> None:
    secrets = DepotSecrets(
        azure_client_id=Secret("cid"),
        azure_client_secret=Secret("csecret-1"),
        azure_tenant_id=Secret("tid"),
    )
    storage = AbfssStorage("acct", "lake", "wh", "https://acct.dfs.core.windows.net")
    options = storage_options(Depot("az", storage, CatalogSpec("hadoop"), secrets, "x"))
    assert options["azure_storage_endpoint"] == "https://acct.blob.core.windows.net"
    assert "allow_http" not in options
    assert options["azure_storage_client_secret"] == "csecret-1"
    assert "csecret-1" not in repr(options)
