"""A depot's Iceberg REST catalog opened through pyiceberg, with no JVM.

The properties are derived from the resolved `Depot`, the same values the Spark plan gives Iceberg's
Java REST client and FileIO (engine/sparkconf.py, the storage kind's `pyiceberg_properties`): the
catalog's uri and warehouse, the depot's apikey as the bearer token, the storage's FileIO settings
(S3's endpoint, region and keys). A depot that pyiceberg would not open the same way (another
catalog type, OAuth2 or SigV4 or a role, a storage kind pyiceberg is not given, a property only the
JVM client knows) raises `PyicebergUnsupported`, and
the caller keeps the JVM path. Secrets stay `Secret`s until the catalog is built, so a repr or a
message of this module never shows one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.profile.depot import Depot
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
from dbt.adapters.lakehouse.profile.secrets import Secret, is_secret_key, safe_url, uri_has_secret

if TYPE_CHECKING:
    from pyiceberg.catalog.rest import RestCatalog

# (connect, read) seconds, as the Java client's limits (sparkconf.REST_CLIENT_LIMITS): pyiceberg
# 0.12 sets no timeout, so a catalog that never answers would hang the command.
REST_TIMEOUT_SECONDS = (10.0, 60.0)

# Catalog properties that tune only the JVM's side (a Java class, the Java HTTP client, Hadoop,
# Iceberg's caching catalog); pyiceberg has its own defaults for each, so they are left out.
_JVM_ONLY = frozenset({"io-impl", "cache-enabled"})
_JVM_ONLY_PREFIXES = ("rest.client.", "hadoop.")
# Catalog properties both clients read with the same meaning, passed through as given.
_SHARED = frozenset({"token", "warehouse", "prefix"})
_SHARED_PREFIXES = ("header.", "s3.")


class PyicebergUnsupported(Exception):
    """pyiceberg would not open this depot's catalog as the JVM does; the message says why
    (names of settings only, never a value)."""


@dataclass(frozen=True)
class RestCatalogProperties:
    """What `RestCatalog(name, **properties)` takes, secrets kept apart until `open()`."""

    name: str
    public: Mapping[str, str] = field(hash=False)
    secret: Mapping[str, Secret] = field(hash=False)

    def __repr__(self) -> str:
        hidden = {key: str(value) for key, value in self.secret.items()}
        return (
            f"RestCatalogProperties(name={self.name!r}, public={dict(self.public)!r}, "
            f"secret={hidden!r})"
        )

    @property
    def shown_uri(self) -> str:
        return safe_url(self.public["uri"])

    def open(self) -> RestCatalog:
        """The catalog, after its `GET /v1/config` (raises what pyiceberg raises)."""
        revealed = {key: value.reveal() for key, value in self.secret.items()}
        return _bounded_rest_catalog()(self.name, **self.public, **revealed)


def rest_catalog_properties(depot: Depot, catalog_name: str) -> RestCatalogProperties:
    """pyiceberg's properties for `depot`'s REST catalog, mounted as `catalog_name`."""
    catalog = depot.catalog
    where = f"depot '{depot.name}'"
    if catalog.type != "rest":
        raise PyicebergUnsupported(f"{where} has a {catalog.type} catalog, not rest")
    if not catalog.uri:
        raise PyicebergUnsupported(f"{where} names no catalog uri")
    if uri_has_secret(catalog.uri):
        # The JVM keeps such a uri among its secrets; pyiceberg's errors would quote it.
        raise PyicebergUnsupported(f"{where} has credentials in its catalog uri")
    if depot.aws_role is not None:
        raise PyicebergUnsupported(f"{where} acts as an IAM role")
    storage = depot.storage
    file_io = kind_of(storage).pyiceberg_properties(depot)
    if file_io is None:
        raise PyicebergUnsupported(f"{where} stores its tables on {type(storage).__name__}")
    unsupported = sorted(key for key in catalog.properties if not _known(key))
    if unsupported:
        raise PyicebergUnsupported(
            f"{where} sets catalog properties pyiceberg is not given: {', '.join(unsupported)}"
        )
    public = {"uri": catalog.uri, "warehouse": catalog.warehouse or storage.warehouse_uri}
    secret: dict[str, Secret] = {}
    if depot.secrets.apikey:
        secret["token"] = depot.secrets.apikey
    public.update(file_io[0])
    secret.update(file_io[1])
    # Passed-through properties win over what is derived, as in the Spark plan.
    for key, value in catalog.properties.items():
        if key in _JVM_ONLY or key.startswith(_JVM_ONLY_PREFIXES):
            continue
        if is_secret_key(key):
            public.pop(key, None)
            secret[key] = Secret(value)
        else:
            secret.pop(key, None)
            public[key] = value
    return RestCatalogProperties(name=catalog_name, public=public, secret=secret)


def _known(key: str) -> bool:
    if key in _JVM_ONLY or key.startswith(_JVM_ONLY_PREFIXES):
        return True
    return key in _SHARED or key.startswith(_SHARED_PREFIXES)


@functools.cache
def _bounded_rest_catalog() -> type[RestCatalog]:
    """RestCatalog whose HTTP calls time out (built on first use: pyiceberg's import is
    half a second, which a command that never opens a catalog should not pay)."""
    from pyiceberg.catalog.rest import RestCatalog
    from requests import Session
    from requests.adapters import HTTPAdapter

    class _TimeoutAdapter(HTTPAdapter):
        def send(self, request: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = REST_TIMEOUT_SECONDS
            return super().send(request, **kwargs)

    class BoundedRestCatalog(RestCatalog):
        def _create_session(self) -> Session:
            session = super()._create_session()
            for prefix in ("http://", "https://"):
                session.mount(prefix, _TimeoutAdapter())
            return session

    return BoundedRestCatalog
