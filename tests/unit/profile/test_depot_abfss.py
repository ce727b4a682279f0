"""abfss depots: names, endpoint, the three credential forms and where they come from; every
mistake reported with its fix and without a secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import AbfssStorage, Depot, resolve_depot
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import ADLS_FILE_IO

ACCOUNT_KEY = "ZmFrZUFjY291bnRLZXk9PQ-abfss"
SAS_TOKEN = "sv=2024-11-04&ss=b&sig=fakeSasSignature%3D"
CLIENT_ID = "fake-client-id-0c1d"
CLIENT_SECRET = "fake-client-secret-7e8f"
TENANT_ID = "fake-tenant-id-5a6b"
SECRETS = (ACCOUNT_KEY, SAS_TOKEN, CLIENT_ID, CLIENT_SECRET, TENANT_ID)


def entry(
    secrets: dict[str, str] | None = None,
    catalog: dict[str, Any] | None = None,
    **abfss: Any,
) -> dict[str, Any]:
    section = {"account": "mylakehouse", "container": "lake", "relativePath": "warehouse/"}
    section.update(abfss)
    return {
        "type": "lakehouse",
        "spec": {"storageType": "abfss", "abfss": section},
        "catalog": catalog or {"type": "hadoop"},
        "secrets": {"azure_account_key": ACCOUNT_KEY} if secrets is None else secrets,
    }


def resolve(depot: dict[str, Any], env: dict[str, str] | None = None) -> Depot:
    return resolve_depot(
        depot=depot,
        depots_file=None,
        warehouse=None,
        aws_region=None,
        aws_endpoint=None,
        env=env or {},
        cwd=Path("/tmp"),
        home=Path("/tmp"),
    )


def error_of(depot: dict[str, Any], env: dict[str, str] | None = None) -> str:
    with pytest.raises(DepotConfigError) as info:
        resolve(depot, env)
    message = str(info.value.msg)
    for secret in SECRETS:
        assert secret not in message
    return message


def test_account_key_depot() -> None:
    depot = resolve(entry())
    assert depot.storage == AbfssStorage("mylakehouse", "lake", "warehouse")
    assert depot.storage.warehouse_uri == "abfss://lake@mylakehouse.dfs.core.windows.net/warehouse"
    assert depot.secrets.azure_account_key is not None
    assert depot.secrets.azure_account_key.reveal() == ACCOUNT_KEY
    assert ACCOUNT_KEY in depot.secret_values()
    assert ACCOUNT_KEY not in repr(depot)


def test_an_http_endpoint_means_abfs_without_tls() -> None:
    depot = resolve(entry(endpoint="http://127.0.0.1:10000/mylakehouse/"))
    assert isinstance(depot.storage, AbfssStorage)
    assert depot.storage.endpoint == "http://127.0.0.1:10000/mylakehouse"
    assert depot.storage.warehouse_uri.startswith("abfs://lake@mylakehouse.dfs.core.windows.net")


def test_sas_token_loses_its_question_mark() -> None:
    depot = resolve(
        entry({"azure_sas_token": "?" + SAS_TOKEN}, {"type": "rest", "uri": "http://c"}),
        {"LAKEHOUSE_APIKEY": "k"},
    )
    assert depot.secrets.azure_sas_token is not None
    assert depot.secrets.azure_sas_token.reveal() == SAS_TOKEN


def test_service_principal_from_the_environment() -> None:
    env = {
        "AZURE_CLIENT_ID": CLIENT_ID,
        "AZURE_CLIENT_SECRET": CLIENT_SECRET,
        "AZURE_TENANT_ID": TENANT_ID,
    }
    depot = resolve(entry({}), env)
    assert depot.secrets.azure_client_secret is not None
    assert depot.secrets.azure_client_secret.reveal() == CLIENT_SECRET


def test_the_depot_secrets_win_over_the_environment() -> None:
    depot = resolve(entry(), {"AZURE_STORAGE_SAS_TOKEN": SAS_TOKEN})
    assert depot.secrets.azure_sas_token is None
    assert depot.secrets.azure_account_key is not None


def test_missing_credentials() -> None:
    message = error_of(entry({}))
    assert "ABFSS storage has no credentials" in message
    assert "AZURE_STORAGE_KEY" in message and "azure_sas_token" in message


def test_mixed_forms_are_refused() -> None:
    message = error_of(entry({"azure_account_key": ACCOUNT_KEY, "azure_sas_token": SAS_TOKEN}))
    assert "mix account key and SAS token; give one" in message


def test_incomplete_service_principal_from_the_environment() -> None:
    message = error_of(entry({}), {"AZURE_CLIENT_ID": CLIENT_ID})
    assert "missing AZURE_CLIENT_SECRET and AZURE_TENANT_ID" in message
    assert "Given: AZURE_CLIENT_ID (values not shown)" in message


def test_missing_container_and_account() -> None:
    depot = entry()
    depot["spec"]["abfss"] = {"relativePath": "w"}
    message = error_of(depot)
    assert "spec.abfss.account is missing" in message
    assert "spec.abfss.container is missing" in message


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"account": "mylakehouse.dfs.core.windows.net"}, "not its host"),
        ({"account": "My_Account"}, "3-24 lowercase letters and digits"),
        ({"container": "lake/warehouse"}, "put the folder in relativePath"),
        ({"container": "a--b"}, "single hyphens"),
        ({"endpoint": "127.0.0.1:10000"}, "spec.abfss.endpoint is not an http(s) URL"),
        ({"bucket": "b"}, "Unknown spec.abfss key 'bucket'"),
    ],
)
def test_name_mistakes(changes: dict[str, str], expected: str) -> None:
    assert expected in error_of(entry(**changes))


def test_sas_token_cannot_serve_the_hadoop_catalog() -> None:
    message = error_of(entry({"azure_sas_token": SAS_TOKEN}))
    assert "A SAS token cannot serve the hadoop catalog" in message


def test_service_principal_cannot_use_adls_file_io() -> None:
    catalog = {"type": "hadoop", "properties": {"io-impl": ADLS_FILE_IO}}
    secrets = {
        "azure_client_id": CLIENT_ID,
        "azure_client_secret": CLIENT_SECRET,
        "azure_tenant_id": TENANT_ID,
    }
    assert "cannot use the depot's service principal" in error_of(entry(secrets, catalog))


def test_azure_secrets_in_an_s3_depot_are_refused() -> None:
    depot = {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": {"bucket": "b", "region": "us-east-1"}},
        "catalog": {"type": "hadoop"},
        "secrets": {"azure_account_key": ACCOUNT_KEY},
    }
    assert "apply to storageType abfss only" in error_of(depot)


def test_glue_needs_s3() -> None:
    assert "The glue catalog needs S3 storage; got storageType abfss" in error_of(
        entry(catalog={"type": "glue"})
    )


def test_an_endpoint_naming_another_account_is_refused() -> None:
    message = error_of(entry(endpoint="https://otheracct.dfs.core.windows.net"))
    assert "spec.abfss.endpoint names account 'otheracct'" in message


def test_a_private_endpoint_of_the_same_account() -> None:
    depot = resolve(entry(endpoint="https://mylakehouse.dfs.core.windows.net/"))
    assert depot.storage.warehouse_uri.startswith("abfss://lake@mylakehouse.dfs.core.windows.net")
