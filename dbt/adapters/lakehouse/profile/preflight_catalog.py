"""The preflight of a REST catalog: `GET <uri>/v1/config`, the first call Iceberg's REST client
makes, answers and accepts the bearer token; each status explained with its fix. The HTTP call
is injected (`HttpGet`), so the check is tested without the outside world.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from urllib.parse import quote

from dbt.adapters.lakehouse.profile.depot import CatalogSpec, DepotSecrets
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport, first_line, reveal
from dbt.adapters.lakehouse.profile.secrets import safe_url

# (url, headers, timeout) -> (HTTP status, body); raises OSError when nothing answers.
HttpGet = Callable[[str, Mapping[str, str], float], tuple[int, bytes]]


def urllib_get(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, bytes]:
    # No proxy, as Iceberg's REST client uses none unless rest.client.proxy.* is set.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read(65536)
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read(65536)


def check_rest_catalog(
    catalog: CatalogSpec,
    default_warehouse: str,
    secrets: DepotSecrets,
    http_get: HttpGet,
    timeout: float,
    report: PreflightReport,
) -> None:
    """`GET <uri>/v1/config`, the first call Iceberg's REST client makes, with the same token."""
    uri = (catalog.uri or "").rstrip("/")
    shown = safe_url(uri)
    token = catalog.properties.get("token") or reveal(secrets.apikey)
    oauth = "credential" in catalog.properties
    warehouse = catalog.warehouse or default_warehouse
    url = f"{uri}/v1/config?warehouse={quote(warehouse, safe='')}"
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        status, body = http_get(url, headers, timeout)
    except (OSError, ValueError) as exc:
        report.problems.append(
            f"The Iceberg REST catalog at {shown} is unreachable: {_reason(exc, timeout)}. "
            "Fix: check that the catalog is running and that its uri (catalog.uri in the "
            "depot, METASTORE_URL, or uri in the catalogs.yml entry) is its base URL; Iceberg "
            "calls <uri>/v1/config."
        )
        return
    detail = _rest_error_message(body)
    if 200 <= status < 300:
        report.passed.append(
            f"Iceberg REST catalog at {shown} answered GET /v1/config"
            + ("" if oauth else "; the token was accepted")
        )
    elif status == 401 and oauth:
        report.problems.append(
            f"The Iceberg REST catalog at {shown} answered 401 to GET /v1/config{detail}. The "
            "depot uses OAuth2 (catalog.properties.credential), which this check does not "
            "perform. Fix: check the credential and oauth2-server-uri properties."
        )
    elif status == 401:
        given = (
            "catalog.properties.token"
            if catalog.properties.get("token")
            else "the depot's apikey"
            if token
            else "no token (no apikey, no LAKEHOUSE_APIKEY)"
        )
        report.problems.append(
            f"The Iceberg REST catalog at {shown} rejected the token (401 NotAuthorized){detail}. "
            f"Given: {given}. Fix: set secrets.apikey in the depot (or LAKEHOUSE_APIKEY) to a "
            "valid, unexpired API key for this catalog."
        )
    elif status == 403:
        report.problems.append(
            f"The Iceberg REST catalog at {shown} accepted the token but refused access (403 "
            f"Forbidden){detail} for warehouse {warehouse}. Fix: grant this API key access to "
            "the warehouse, or set catalog.warehouse to one it may use."
        )
    elif status == 404:
        report.problems.append(
            f"No Iceberg REST catalog at {shown}: GET /v1/config answered 404{detail}. Fix: set "
            "catalog.uri (or METASTORE_URL) to the catalog's base URL, the part before /v1/ "
            "(e.g. https://host/iceberg)."
        )
    else:
        report.problems.append(
            f"The Iceberg REST catalog at {shown} answered {status} to GET /v1/config{detail}. "
            "Fix: check the catalog's health and logs, and that catalog.uri is its base URL."
        )


def _rest_error_message(body: bytes) -> str:
    """The message of an Iceberg REST ErrorResponse, or nothing."""
    try:
        document = json.loads(body.decode("utf-8", errors="replace") or "null")
    except ValueError:
        return ""
    error = document.get("error") if isinstance(document, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f" (catalog said: {str(message)[:200]})" if message else ""


def _reason(exc: BaseException, timeout: float) -> str:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError) or "timed out" in str(reason).lower():
        return f"no answer within {timeout:g}s (timed out)"
    if isinstance(reason, ConnectionRefusedError) or "refused" in str(reason).lower():
        return "connection refused (nothing listens there)"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return first_line(reason if isinstance(reason, BaseException) else exc)
