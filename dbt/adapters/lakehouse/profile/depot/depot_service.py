"""The DataOS Depot Service resolver: the depot and its secrets over HTTP, as 1.x clients do.

Used when `DEPOT_SERVICE_URL` (or `DATAOS_FQDN`, giving `https://<fqdn>/ds`) is set. The
header `apikey` carries `DATAOS_RUN_AS_APIKEY`, else the profile's `apikey`. With
`DATAOS_TENANT_ID` the tenant-scoped paths are used (`/api/v2/tenants/{t}/resolve`,
`.../depots/{d}/secrets?purpose=`), otherwise the legacy ones (`/api/v2/depots/{d}`,
`.../secrets?acl=`). Every fault is one line naming what to fix; no apikey or secret is ever
in a message. Answers are kept in this process's memory only (never on disk), so a command asks
the service once however often its profile is resolved.
"""

from __future__ import annotations

import copy
import hashlib
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.dataos_secrets import decode_secret_payload
from dbt.adapters.lakehouse.profile.depot.dataos_shapes import (
    Spelled,
    is_lakehouse_shape,
    run_as_apikey,
    run_as_token,
    spelled_entry,
)
from dbt.adapters.lakehouse.profile.depot.model import _Context
from dbt.adapters.lakehouse.profile.secrets import safe_url

DEFAULT_TIMEOUT_SECONDS = 10.0
# (url, headers, timeout) -> (status, body); raises OSError when nothing answers in time.
HttpGet = Callable[[str, Mapping[str, str], float], tuple[int, bytes]]


class DepotNotInService(Exception):
    """The service answered 404 for the depot: the caller reports every place looked."""


@dataclass(frozen=True)
class ServiceEndpoint:
    base: str  # e.g. https://fqdn/ds, no trailing slash
    base_from: str  # the variable it came from
    apikey: str
    apikey_from: str
    tenant: str | None
    timeout: float

    @property
    def shown(self) -> str:
        paths = f"tenant {self.tenant} paths" if self.tenant else "legacy /api/v2 paths"
        return f"{safe_url(self.base)} ({paths})"


@dataclass(frozen=True)
class ServiceHit:
    endpoint: ServiceEndpoint
    spelled: Spelled


def service_endpoint(ctx: _Context) -> ServiceEndpoint | None:
    """The service to ask, None when neither DEPOT_SERVICE_URL nor DATAOS_FQDN is set."""
    base, base_from = ctx.getenv("DEPOT_SERVICE_URL"), "DEPOT_SERVICE_URL"
    if base is None and (fqdn := ctx.getenv("DATAOS_FQDN")):
        base, base_from = f"https://{fqdn.strip('/')}/ds", "DATAOS_FQDN"
    if base is None:
        return None
    apikey, apikey_from = run_as_apikey(ctx)
    if apikey is None:
        raise DepotConfigError(
            f"The Depot Service ({base_from}={safe_url(base)}) needs an apikey, and none is "
            "set. Given: no DATAOS_RUN_AS_APIKEY environment variable, no `apikey` in the "
            "profile. Accepted: either of those two."
        )
    timeout = DEFAULT_TIMEOUT_SECONDS
    if given := ctx.getenv("LAKEHOUSE_DEPOT_SERVICE_TIMEOUT"):
        try:
            timeout = max(0.1, float(given))
        except ValueError:
            raise DepotConfigError(
                f"LAKEHOUSE_DEPOT_SERVICE_TIMEOUT must be a number of seconds; got {given!r}."
            ) from None
    tenant = ctx.getenv("DATAOS_TENANT_ID")
    return ServiceEndpoint(base.rstrip("/"), base_from, apikey, apikey_from, tenant, timeout)


def describe_service(ctx: _Context) -> str:
    """The place looked, for the 'none answered' report (never the apikey)."""
    if ctx.getenv("DEPOT_SERVICE_URL") is None and ctx.getenv("DATAOS_FQDN") is None:
        return "DataOS Depot Service not asked (DEPOT_SERVICE_URL and DATAOS_FQDN are not set)"
    endpoint = service_endpoint(ctx)
    assert endpoint is not None
    return f"DataOS Depot Service at {endpoint.shown} answered 404 (no such depot)"


_LOCK = threading.Lock()
# (base, tenant, sha256 of the apikey, depot, purpose) -> entry. An apikey is part of the key, so
# a command with other credentials never gets this answer.
_ANSWERS: dict[tuple[str, str | None, str, str, str], Spelled] = {}


def from_service(
    name: str, purpose: str, ctx: _Context, http_get: HttpGet | None = None
) -> ServiceHit | None:
    """The depot's entry from the service; None when no service is configured.

    Raises DepotNotInService on a 404 for the depot, DepotConfigError on any other fault."""
    endpoint = service_endpoint(ctx)
    if endpoint is None:
        return None
    digest = hashlib.sha256(endpoint.apikey.encode()).hexdigest()
    key = (endpoint.base, endpoint.tenant, digest, name, purpose)
    with _LOCK:
        if key in _ANSWERS and http_get is None:
            return ServiceHit(endpoint, copy.deepcopy(_ANSWERS[key]))
    get = http_get or urllib_get
    depot_name = quote(name, safe="")
    if endpoint.tenant:
        tenant = quote(endpoint.tenant, safe="")
        address = quote(f"dataos://{name}", safe="")
        depot_url = f"{endpoint.base}/api/v2/tenants/{tenant}/resolve?address={address}"
        secrets_url = (
            f"{endpoint.base}/api/v2/tenants/{tenant}/depots/{depot_name}/secrets?purpose={purpose}"
        )
    else:
        depot_url = f"{endpoint.base}/api/v2/depots/{depot_name}"
        secrets_url = f"{endpoint.base}/api/v2/depots/{depot_name}/secrets?acl={purpose}"
    document = _get_json(get, depot_url, endpoint, name, "depot")
    if document is None:
        raise DepotNotInService(name)
    if not isinstance(document, Mapping) or not is_lakehouse_shape(document):
        raise DepotConfigError(
            f"The Depot Service at {endpoint.shown} answered for depot '{name}' with JSON that "
            "describes no depot. Accepted: a DataOS 1.x depot or a 2.0 lakehouse depot."
        )
    where = f"Depot '{name}' from the Depot Service at {safe_url(endpoint.base)}"
    secret_body = _get_json(get, secrets_url, endpoint, name, f"secrets (purpose {purpose})")
    secrets = {} if secret_body is None else decode_secret_payload(secret_body, f"{where}: secret")
    spelled = spelled_entry(document, secrets, where)
    run_as_token(spelled.entry, where, ctx)
    with _LOCK:
        _ANSWERS[key] = copy.deepcopy(spelled)
    return ServiceHit(endpoint, spelled)


def _get_json(
    get: HttpGet, url: str, endpoint: ServiceEndpoint, name: str, what: str
) -> Any | None:
    """The JSON body of `url`; None on a 404; a one-line DepotConfigError on anything else."""
    shown = f"the Depot Service at {endpoint.shown}"
    headers = {"apikey": endpoint.apikey, "Accept": "application/json"}
    try:
        status, body = get(url, headers, endpoint.timeout)
    except (OSError, ValueError) as exc:
        # A timeout comes bare (TimeoutError is an OSError) or as urllib's URLError reason.
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError | socket.timeout):
            raise DepotConfigError(
                f"Depot '{name}': {shown} did not answer within {endpoint.timeout:g}s (asking "
                f"for its {what}). Fix: check the service, or raise "
                "LAKEHOUSE_DEPOT_SERVICE_TIMEOUT."
            ) from None
        raise DepotConfigError(
            f"Depot '{name}': {shown} is unreachable ({_reason_text(reason)}). Fix: check "
            f"{endpoint.base_from} and that the service is up."
        ) from None
    if status in (401, 403):
        raise DepotConfigError(
            f"Depot '{name}': {shown} refused the apikey from {endpoint.apikey_from} (HTTP "
            f"{status}, asking for its {what}). Fix: a valid, unexpired apikey in "
            f"{endpoint.apikey_from}, allowed to read this depot."
        )
    if status == 404:
        return None
    if status >= 300:
        raise DepotConfigError(
            f"Depot '{name}': {shown} answered HTTP {status} when asked for its {what}."
        )
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise DepotConfigError(
            f"Depot '{name}': {shown} answered its {what} with a body that is not JSON "
            f"({len(body)} bytes, not shown). Accepted: the Depot Service's JSON."
        ) from None


def _reason_text(reason: object) -> str:
    if isinstance(reason, BaseException):
        text = getattr(reason, "strerror", None) or type(reason).__name__
        return str(text)
    return str(reason)[:80]


def urllib_get(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, bytes]:
    # No proxy: a DataOS workload reaches its own platform's service directly.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read(65536)
