"""ADLS Gen2 (`storageType: abfss`): its names, its credential forms and where they come from.

This module owns what an abfss depot accepts: a storage account and container named as Azure
allows, an optional endpoint, and exactly one credential form (an account key, a SAS token, or
a service principal's client id, secret and tenant), taken from the depot's secrets or, when
the depot has none, from the environment Azure's own tools read (AZURE_STORAGE_KEY,
AZURE_STORAGE_SAS_TOKEN, AZURE_CLIENT_ID / AZURE_CLIENT_SECRET / AZURE_TENANT_ID). It also
owns the rules that tie the credential form to the Iceberg FileIO (conf.py): a
SAS token is read only by Iceberg's ADLSFileIO, a service principal only by Hadoop's ABFS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from dbt.adapters.lakehouse.profile.depot.draft import _Draft, _opt_str, _valid_name
from dbt.adapters.lakehouse.profile.depot.model import AbfssStorage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.kind import Section
from dbt.adapters.lakehouse.profile.secrets import safe_url

SECTION_KEYS = ("account", "container", "relativePath", "endpoint")
ADLS_FILE_IO = "org.apache.iceberg.azure.adlsv2.ADLSFileIO"
# Microsoft Entra ID, where a service principal gets its tokens (Azure's public cloud).
AZURE_LOGIN_HOST = "login.microsoftonline.com"

KEY = "account key"
SAS = "SAS token"
SERVICE_PRINCIPAL = "service principal"

# Secret names in the depot, and the environment variables read when the depot has none.
AZURE_SECRET_ENV = {
    "azure_account_key": "AZURE_STORAGE_KEY",
    "azure_sas_token": "AZURE_STORAGE_SAS_TOKEN",
    "azure_client_id": "AZURE_CLIENT_ID",
    "azure_client_secret": "AZURE_CLIENT_SECRET",
    "azure_tenant_id": "AZURE_TENANT_ID",
}
_PRINCIPAL = ("azure_client_id", "azure_client_secret", "azure_tenant_id")

_CONTAINER_NAME = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}"
_CONTAINER_ACCEPTED = (
    "3-63 lowercase letters, digits and single hyphens, starting and ending with a letter or "
    "digit; put the folder in relativePath, not the container."
)
_ACCEPTED_CREDENTIALS = (
    "Accepted: exactly one of secrets.azure_account_key, secrets.azure_sas_token, or "
    "secrets.azure_client_id + azure_client_secret + azure_tenant_id (a service principal); "
    "or, with none in the depot, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN, or "
    "AZURE_CLIENT_ID + AZURE_CLIENT_SECRET + AZURE_TENANT_ID in the environment."
)


def check_account(account: str, where: str, problems: list[str]) -> bool:
    """Azure's rule for a storage account name: 3-24 lowercase letters and digits."""
    hint = ""
    if "." in account:
        hint = " The account name only: not its host (<account>.dfs.core.windows.net)."
    accepted = f"3-24 lowercase letters and digits, e.g. mylakehouse.{hint}"
    must = f"{where} must be a storage account name"
    return _valid_name(account, r"[a-z0-9]{3,24}", must, accepted, problems)


def check_container(container: str, where: str, problems: list[str]) -> bool:
    """Azure's rule for a container (file system): 3-63 of a-z, 0-9 and single '-'."""
    must = f"{where} must be a container name"
    return _valid_name(container, _CONTAINER_NAME, must, _CONTAINER_ACCEPTED, problems)


def resolve_abfss_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> AbfssStorage | None:
    account, container, endpoint = draft.account, draft.container, draft.endpoint
    if endpoint is not None and not endpoint.lower().startswith(("http://", "https://")):
        problems.append(
            f"spec.abfss.endpoint is not an http(s) URL; got {safe_url(endpoint)!r}. Accepted: "
            "the account's DFS endpoint, e.g. https://<account>.dfs.core.windows.net, or an "
            "emulator's http://127.0.0.1:10000/<account>; leave it out for Azure's public cloud."
        )
        return None
    if account is None or container is None:
        return None
    host = (urlsplit(endpoint).hostname or "") if endpoint else ""
    named = re.match(r"^([a-z0-9]+)\.(?:dfs|blob)\.", host)
    if named and named.group(1) != account:
        problems.append(
            f"spec.abfss.endpoint names account '{named.group(1)}', but spec.abfss.account is "
            f"'{account}'. Given: endpoint {safe_url(endpoint or '')}. Accepted: the same "
            f"account in both (https://{account}.dfs.core.windows.net), or no endpoint."
        )
        return None
    return AbfssStorage(account, container, draft.relative_path, endpoint)


def blob_endpoint(storage: AbfssStorage) -> str:
    """The Blob service URL of the depot's account: its endpoint with `.dfs.` made `.blob.`
    (the preflight's and delta-rs's way in; both speak the Blob API)."""
    if storage.endpoint is None:
        return f"https://{storage.account}.blob.core.windows.net"
    parts = urlsplit(storage.endpoint)
    host = parts.netloc.replace(".dfs.", ".blob.", 1)
    return f"{parts.scheme}://{host}{parts.path}".rstrip("/")


def credential_form(values: Mapping[str, str]) -> str | None:
    """Which credential form `values` (secret name -> value) hold; None when none."""
    if values.get("azure_account_key"):
        return KEY
    if values.get("azure_sas_token"):
        return SAS
    if any(values.get(k) for k in _PRINCIPAL):
        return SERVICE_PRINCIPAL
    return None


def abfss_secrets(
    depot_values: Mapping[str, str],
    ctx: _Context,
    catalog_type: str | None,
    io_impl: str | None,
    problems: list[str],
) -> dict[str, str]:
    """The depot's Azure secrets, or the environment's when it has none; one form exactly."""
    ours = {k: v for k, v in depot_values.items() if k in AZURE_SECRET_ENV}
    where = "depot secrets"
    if not ours:
        ours = {k: v for k, name in AZURE_SECRET_ENV.items() if (v := ctx.getenv(name))}
        where = "the environment"
    if ours.get("azure_sas_token"):
        # The portal and `az` print the token as a query string, with its leading '?'.
        ours["azure_sas_token"] = ours["azure_sas_token"].lstrip("?")
    names = AZURE_SECRET_ENV if where == "the environment" else {k: k for k in AZURE_SECRET_ENV}
    given = [names[k] for k in AZURE_SECRET_ENV if ours.get(k)]
    forms = [
        form
        for form, present in (
            (KEY, bool(ours.get("azure_account_key"))),
            (SAS, bool(ours.get("azure_sas_token"))),
            (SERVICE_PRINCIPAL, any(ours.get(k) for k in _PRINCIPAL)),
        )
        if present
    ]
    if not forms:
        problems.append(
            "ABFSS storage has no credentials. Given: no azure_* secret in the depot and none "
            f"of {', '.join(AZURE_SECRET_ENV.values())} in the environment. "
            + _ACCEPTED_CREDENTIALS
        )
        return {}
    if len(forms) > 1:
        problems.append(
            f"ABFSS credentials in {where} mix {' and '.join(forms)}; give one. Given: "
            f"{', '.join(given)} (values not shown). " + _ACCEPTED_CREDENTIALS
        )
        return ours
    if forms[0] == SERVICE_PRINCIPAL:
        missing = [names[k] for k in _PRINCIPAL if not ours.get(k)]
        if missing:
            problems.append(
                f"The service principal in {where} is incomplete, missing "
                f"{' and '.join(missing)}. Given: {', '.join(given)} (values not shown). "
                "Accepted: the client id, client secret and tenant id together."
            )
    _check_form_and_io(forms[0], catalog_type, io_impl, problems)
    return ours


def _check_form_and_io(
    form: str, catalog_type: str | None, io_impl: str | None, problems: list[str]
) -> None:
    # Hadoop 3.3.4's ABFS (pyspark's Hadoop) takes no fixed SAS token, only a SASTokenProvider
    # class of one's own; Iceberg 1.10's ADLSFileIO takes a service principal only from the
    # JVM's environment (DefaultAzureCredential), which one session shares across depots.
    if form == SAS and catalog_type == "hadoop":
        problems.append(
            "A SAS token cannot serve the hadoop catalog: its metadata goes through Hadoop's "
            "ABFS, which in Hadoop 3.3.4 (pyspark's) takes no fixed SAS token. Accepted: an "
            "account key or a service principal with the hadoop catalog, or a SAS token with a "
            "rest, jdbc or nessie catalog (tables go through Iceberg's ADLSFileIO)."
        )
    if form == SERVICE_PRINCIPAL and io_impl == ADLS_FILE_IO:
        problems.append(
            "catalog.properties.io-impl ADLSFileIO cannot use the depot's service principal: "
            "Iceberg 1.10's ADLSFileIO reads one only from the JVM's environment, shared by "
            "every depot of the session. Accepted: leave io-impl out (Hadoop's ABFS, with OAuth "
            "client credentials per depot), or use an account key or SAS token with ADLSFileIO."
        )


def read_abfss_section(
    section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
) -> None:
    account = _opt_str(section, "account", where, problems)
    container = _opt_str(section, "container", where, problems)
    if account is None:
        problems.append(f"{where}.account is missing. Accepted: a storage account name.")
    elif check_account(account, f"{where}.account", problems):
        draft.account = account
    if container is None:
        problems.append(f"{where}.container is missing. Accepted: a container name.")
    elif check_container(container, f"{where}.container", problems):
        draft.container = container
    draft.relative_path = _opt_str(section, "relativePath", where, problems) or ""
    draft.endpoint = _opt_str(section, "endpoint", where, problems)


def check_abfss_secrets(
    draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
) -> None:
    """An abfss depot's one credential form (abfss_secrets); Azure's secrets on another
    kind's depot are a mistake."""
    if own:
        io_impl = draft.properties.get("io-impl")
        values.update(abfss_secrets(values, ctx, draft.catalog_type, io_impl, problems))
    elif azure := [k for k in AZURE_SECRET_ENV if k in values]:
        problems.append(
            f"secrets {', '.join(azure)} apply to storageType abfss only; this depot's storage "
            f"is {draft.storage_type or 'not set'}. Accepted: remove them, or use storageType "
            "abfss."
        )


SECTION = Section(SECTION_KEYS, read_abfss_section, resolve_abfss_storage, check_abfss_secrets)
