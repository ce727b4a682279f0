"""The abfss preflight with an injected Blob client: each answer Azure can give, explained with
its fix and without a secret; later checks skipped when an earlier one failed."""

from __future__ import annotations

from typing import Any

import pytest
from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
)

from dbt.adapters.lakehouse.profile.depot import AbfssStorage, DepotSecrets, Secret
from dbt.adapters.lakehouse.profile.depot.storage.abfss.preflight import (
    AbfssChecks,
    ClientSecretToken,
    blob_container_client,
    blob_endpoint,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport

KEY = "ZmFrZUFjY291bnRLZXk9PQ-preflight"
STORAGE = AbfssStorage("acct", "lake", "wh")
KEY_SECRETS = DepotSecrets(azure_account_key=Secret(KEY))


def azure_error(cls: type[HttpResponseError], code: str, status: int, message: str = "") -> Any:
    error = cls(message=message or code)
    error.error_code = code
    error.status_code = status
    return error


class FakeContainer:
    def __init__(self, fail: dict[str, Exception] | None = None) -> None:
        self.fail = fail or {}
        self.calls: list[str] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise self.fail[name]

    def list_blobs(self, **kwargs: Any) -> list[str]:
        self._call("list")
        return []

    def upload_blob(self, name: str, data: bytes, overwrite: bool) -> None:
        assert name.startswith("wh/.dbt-lakehouse-preflight-")
        self._call("upload")

    def delete_blob(self, name: str) -> None:
        self._call("delete")


def run(client: FakeContainer, secrets: DepotSecrets = KEY_SECRETS) -> PreflightReport:
    report = PreflightReport()
    AbfssChecks(STORAGE, secrets, lambda *_: client, 5.0, report).run()
    for line in report.passed + report.problems:
        assert KEY not in line
    return report


def test_all_pass() -> None:
    client = FakeContainer()
    report = run(client)
    assert report.ok and client.calls == ["list", "upload", "delete"]
    assert "abfss://lake@acct.dfs.core.windows.net/wh/" in report.passed[0]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (azure_error(ResourceNotFoundError, "ContainerNotFound", 404), "Container 'lake' does not"),
        (
            azure_error(ClientAuthenticationError, "AuthenticationFailed", 403),
            "did not authenticate",
        ),
        (
            azure_error(
                HttpResponseError, "AuthorizationFailure", 403, "Server failed to authenticate"
            ),
            "did not authenticate",
        ),
        (
            azure_error(HttpResponseError, "AuthorizationFailure", 403, "not authorized"),
            "network rules",
        ),
        (ServiceRequestError("refused"), "Azure Storage is unreachable"),
    ],
)
def test_listing_failures_stop_the_checks(error: Exception, expected: str) -> None:
    client = FakeContainer({"list": error})
    report = run(client)
    assert client.calls == ["list"]
    assert len(report.problems) == 1 and expected in report.problems[0], report.problems


def test_a_service_principal_without_write_role() -> None:
    secrets = DepotSecrets(
        azure_client_id=Secret("cid-1"),
        azure_client_secret=Secret("cs-1"),
        azure_tenant_id=Secret("tid-1"),
    )
    error = azure_error(HttpResponseError, "AuthorizationPermissionMismatch", 403)
    report = run(FakeContainer({"upload": error}), secrets)
    assert "Storage Blob Data Contributor" in report.problems[0]


def test_a_probe_left_behind_is_named() -> None:
    error = azure_error(HttpResponseError, "AuthorizationPermissionMismatch", 403)
    report = run(FakeContainer({"delete": error}))
    assert "was left behind; remove it by hand" in report.problems[0]


def test_a_sas_in_a_message_is_not_repeated() -> None:
    error = azure_error(ClientAuthenticationError, "AuthenticationFailed", 403, "sig=abc123 bad")
    report = run(FakeContainer({"list": error}), DepotSecrets(azure_sas_token=Secret("sv=1")))
    assert "sig=" not in report.problems[0]


def test_blob_endpoint() -> None:
    assert blob_endpoint(STORAGE) == "https://acct.blob.core.windows.net"
    private = AbfssStorage("acct", "lake", "", "https://acct.dfs.core.windows.net/")
    assert blob_endpoint(private) == "https://acct.blob.core.windows.net"
    emulator = AbfssStorage("acct", "lake", "", "http://127.0.0.1:10000/acct")
    assert blob_endpoint(emulator) == "http://127.0.0.1:10000/acct"


def test_a_service_principal_gets_its_token_from_its_tenant() -> None:
    secrets = DepotSecrets(
        azure_client_id=Secret("cid-1"),
        azure_client_secret=Secret("cs-1"),
        azure_tenant_id=Secret("tid-1"),
    )
    client = blob_container_client(STORAGE, secrets, 5.0)
    credential = client.credential
    assert isinstance(credential, ClientSecretToken)
    assert credential._url == "https://login.microsoftonline.com/tid-1/oauth2/v2.0/token"


def test_run_preflight_checks_abfss_storage_and_scrubs_its_secret() -> None:
    from dbt.adapters.lakehouse.profile.depot import CatalogSpec, Depot
    from dbt.adapters.lakehouse.profile.preflight import run_preflight

    error = azure_error(ClientAuthenticationError, "AuthenticationFailed", 403, f"bad {KEY}")
    client = FakeContainer({"list": error})
    depot = Depot("az", STORAGE, CatalogSpec("hadoop"), KEY_SECRETS, "inline depot")
    report = run_preflight(depot, abfss_client_factory=lambda *_: client)
    assert client.calls == ["list"]
    assert len(report.problems) == 1 and KEY not in report.problems[0]
