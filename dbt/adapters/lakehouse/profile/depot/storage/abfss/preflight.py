"""The preflight of ADLS Gen2 (`abfss`) storage, through the account's Blob endpoint with
azure-storage-blob: the container exists and the credential is accepted (a listing under the
prefix), and it may write and delete there (a tiny probe blob, removed again). Each failure
Azure answers with is explained with its fix. The client is injected (`AbfssClientFactory`),
so the checks are tested without the outside world; Azurite, the Blob emulator, serves them in
the functional tests.

The Blob endpoint, not the DFS one Spark uses: both front the same containers and the same
credentials, and the Blob API is the one every Azure SDK and emulator speaks. What only the
DFS endpoint could show (an account whose firewall admits one endpoint and not the other) is
not checked.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

from dbt.adapters.lakehouse.profile.depot.model import AbfssStorage, DepotSecrets
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import (
    AZURE_LOGIN_HOST,
    blob_endpoint,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import StoreChecks, first_line, reveal

PROBE_NAME = ".dbt-lakehouse-preflight"

# (storage, secrets, timeout) -> an azure.storage.blob.ContainerClient (or a stand-in).
AbfssClientFactory = Callable[[AbfssStorage, DepotSecrets, float], Any]


class ClientSecretToken:
    """A service principal's token for Azure Storage (OAuth2 client credentials), fetched once:
    the TokenCredential azure-storage-blob asks for, without azure-identity."""

    def __init__(self, tenant: str, client_id: str, client_secret: str, timeout: float) -> None:
        self._form = urllib.parse.urlencode(
            {
                "grant_type": "client_credentials",
                "client_id": client_id,
                "client_secret": client_secret,
                "scope": "https://storage.azure.com/.default",
            }
        ).encode()
        self._url = f"https://{AZURE_LOGIN_HOST}/{urllib.parse.quote(tenant)}/oauth2/v2.0/token"
        self._timeout = timeout

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken
        from azure.core.exceptions import ClientAuthenticationError

        request = urllib.request.Request(self._url, data=self._form, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                document = json.load(response)
        except urllib.error.HTTPError as exc:
            detail = _aad_error(exc.read(4096))
            raise ClientAuthenticationError(
                message=f"Microsoft Entra ID refused the service principal ({exc.code}{detail})"
            ) from None
        expires = int(time.time()) + int(document.get("expires_in", 300))
        return AccessToken(str(document["access_token"]), expires)


def _aad_error(body: bytes) -> str:
    try:
        document = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        return ""
    code = document.get("error") if isinstance(document, dict) else None
    # The first line of error_description names the AADSTS code (e.g. AADSTS7000215: Invalid
    # client secret provided), never the secret itself.
    description = str(document.get("error_description", "")).splitlines()[:1]
    return f", {code}: {description[0][:200]}" if code and description else ""


def blob_container_client(storage: AbfssStorage, secrets: DepotSecrets, timeout: float) -> Any:
    """A ContainerClient for the depot's container, with the depot's credential."""
    from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
    from azure.storage.blob import ContainerClient

    credential: Any
    if secrets.azure_account_key:
        credential = AzureNamedKeyCredential(storage.account, secrets.azure_account_key.reveal())
    elif secrets.azure_sas_token:
        credential = AzureSasCredential(secrets.azure_sas_token.reveal())
    else:
        credential = ClientSecretToken(
            reveal(secrets.azure_tenant_id) or "",
            reveal(secrets.azure_client_id) or "",
            reveal(secrets.azure_client_secret) or "",
            timeout,
        )
    return ContainerClient(
        blob_endpoint(storage),
        storage.container,
        credential=credential,
        connection_timeout=timeout,
        read_timeout=timeout,
        # One retry, a second later: the storage SDK's default waits 15 s before its first.
        retry_total=1,
        initial_backoff=1,
    )


class AbfssChecks(StoreChecks[AbfssStorage, AbfssClientFactory]):
    """Container and credential, then write/delete on the prefix; a later check runs only
    when the earlier passed."""

    @property
    def endpoint(self) -> str:
        return blob_endpoint(self.storage)

    @property
    def credential(self) -> str:
        if self.secrets.azure_account_key:
            return "the account key (secrets.azure_account_key or AZURE_STORAGE_KEY)"
        if self.secrets.azure_sas_token:
            return "the SAS token (secrets.azure_sas_token or AZURE_STORAGE_SAS_TOKEN)"
        return "the service principal (azure_client_id / secret / tenant_id)"

    def run(self) -> None:
        try:
            client = self.client(self.storage, self.secrets, self.timeout)
        except Exception as exc:  # e.g. a malformed endpoint, refused before any request
            self.report.problems.append(
                f"Cannot create an Azure Blob client for {self.endpoint}: {first_line(exc)}. "
                "Fix: check spec.abfss.account and spec.abfss.endpoint."
            )
            return
        if not self._list(client):
            return
        self._write_and_delete(client)

    def _list(self, client: Any) -> bool:
        try:
            next(iter(client.list_blobs(name_starts_with=self.prefix, results_per_page=1)), None)
        except Exception as exc:
            self.report.problems.append(self._problem(exc, "List Blobs"))
            return False
        self.report.passed.append(
            f"Azure container '{self.storage.container}' of account '{self.storage.account}' "
            f"answers at {self.endpoint}; {self.credential} may list {self.location}"
        )
        return True

    def _write_and_delete(self, client: Any) -> None:
        name = f"{self.prefix}{PROBE_NAME}-{uuid.uuid4().hex[:12]}"
        try:
            client.upload_blob(name, b"", overwrite=True)
        except Exception as exc:
            self.report.problems.append(self._problem(exc, "Put Blob"))
            return
        try:
            client.delete_blob(name)
        except Exception as exc:
            self.report.problems.append(
                self._problem(exc, "Delete Blob")
                + f"\nThe probe blob {name} (empty) in container '{self.storage.container}' "
                "was left behind; remove it by hand."
            )
            return
        self.report.passed.append(
            f"Put Blob and Delete Blob on {self.location} are allowed (probe blob removed)"
        )

    def _problem(self, exc: Exception, action: str) -> str:
        from azure.core.exceptions import (
            ClientAuthenticationError,
            HttpResponseError,
            ServiceRequestError,
        )

        account, container = self.storage.account, self.storage.container
        if isinstance(exc, ServiceRequestError):
            return (
                f"Azure Storage is unreachable: {self.endpoint} did not answer {action} on "
                f"{self.location} within {self.timeout:g}s ({type(exc).__name__}). Fix: check "
                f"spec.abfss.account ('{account}': an account that does not exist has no DNS "
                "name), spec.abfss.endpoint, and the network (proxy, firewall, private endpoint)."
            )
        error_code = getattr(exc, "error_code", None)
        code = str(getattr(error_code, "value", error_code) or "")  # the SDK's enum, or text
        status = getattr(exc, "status_code", None)
        said = f" (Azure said: {code or status})" if (code or status) else ""
        if code == "ContainerNotFound" or (status == 404 and action == "List Blobs"):
            return (
                f"Container '{container}' does not exist in storage account '{account}' "
                f"(ContainerNotFound). Given: spec.abfss.container: {container}. Fix: create the "
                "container (a file system, in ADLS Gen2 terms), or correct spec.abfss.container "
                "(the container name only; the folder goes in relativePath)."
            )
        if (
            code == "AuthenticationFailed"
            or (isinstance(exc, ClientAuthenticationError) and not code)
            # Azurite answers a bad signature with AuthorizationFailure, Azure's code for a
            # refusal by network rules; its message tells the two apart.
            or (code == "AuthorizationFailure" and "failed to authenticate" in _message(exc))
        ):
            return (
                f"Azure Storage refused {self.credential} for {action} on {self.location}: it "
                f"did not authenticate{said}{_detail(exc)}. Fix: "
                + _auth_fix(self.secrets, account)
            )
        if code in (
            "AuthorizationPermissionMismatch",
            "AuthorizationResourceTypeMismatch",
            "AuthorizationServiceMismatch",
            "AuthorizationFailure",
        ) or status in (401, 403):
            return (
                f"Azure Storage refused {action} on {self.location} with {status}{said}: "
                f"{self.credential} authenticated but may not do this. Fix: "
                + _permission_fix(self.secrets, code)
            )
        if isinstance(exc, HttpResponseError):
            return f"Azure {action} on {self.location} failed with HTTP {status}{said}."
        return f"Azure {action} on {self.location} failed: {type(exc).__name__}: {first_line(exc)}"


def _message(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or "").strip()


def _detail(exc: Exception) -> str:
    line = _message(exc).splitlines()[:1]
    # Azure's first line says e.g. "Signature not valid in the specified time frame"; the
    # later ones carry the request id and the string that was signed, which may hold the SAS.
    return f": {line[0][:200]}" if line and "sig=" not in line[0] else ""


def _auth_fix(secrets: DepotSecrets, account: str) -> str:
    if secrets.azure_account_key:
        return (
            f"set secrets.azure_account_key (or AZURE_STORAGE_KEY) to key1 or key2 of account "
            f"'{account}' (Access keys in the portal; a rotated key stops working)."
        )
    if secrets.azure_sas_token:
        return (
            f"set secrets.azure_sas_token (or AZURE_STORAGE_SAS_TOKEN) to an unexpired SAS of "
            f"account '{account}', signed with a current key."
        )
    return (
        "check azure_tenant_id, azure_client_id and azure_client_secret (an expired client "
        "secret is the usual cause), or AZURE_TENANT_ID / AZURE_CLIENT_ID / AZURE_CLIENT_SECRET."
    )


def _permission_fix(secrets: DepotSecrets, code: str) -> str:
    if secrets.azure_sas_token:
        return (
            "issue a SAS with permissions read, add, create, write, delete and list (sp=racwdl) "
            "on the container, for the Blob service (ss=b), resource types service, container "
            "and object (srt=sco) for an account SAS."
        )
    if secrets.azure_account_key:
        return (
            "an account key may do anything unless the account's network rules refuse this "
            "machine (AuthorizationFailure): allow its address under Networking, or reach the "
            "account through its private endpoint (spec.abfss.endpoint)."
        )
    return (
        "give the service principal the role Storage Blob Data Contributor on the container "
        "or account (Access control (IAM)); role assignments take a few minutes to apply."
    )
