"""The depot types: what a resolved depot is, and the vocabulary every depot module shares.

The frozen dataclasses here are the result of resolution; their reprs never show a secret
(profile/secrets.py owns what a secret is). `_Context` is everything resolution reads from outside
the
profile (environment, working folder, home, the profile's AWS overrides), passed explicitly so
resolution is a pure function of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.secrets import Secret, is_secret_key, uri_has_secret

DEPOT_SCHEME = "dataos"
ENV_DEPOT = "env"
CATALOG_TYPES = ("rest", "hadoop", "jdbc", "glue", "nessie")
ENV_DEPOT_TYPES = ("S3", "LAKEHOUSE")
DEPOTS_FILE_NAME = "depots.yml"

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)


class _InStore:
    """A folder (`relative_path`) in an object store, below the store's `root` URI, reached
    at `endpoint` (none: the cloud's own)."""

    relative_path: str
    endpoint: str | None

    def __post_init__(self) -> None:
        # "warehouse/", "/a//b/" and "" all name a prefix; keep one spelling of each, and of
        # an endpoint with or without its last "/".
        object.__setattr__(self, "relative_path", _normalise_prefix(self.relative_path))
        object.__setattr__(self, "endpoint", self.endpoint.rstrip("/") if self.endpoint else None)

    @property
    def root(self) -> str:
        raise NotImplementedError

    @property
    def warehouse_uri(self) -> str:
        suffix = f"/{self.relative_path}" if self.relative_path else ""
        return f"{self.root}{suffix}"


@dataclass(frozen=True)
class S3Storage(_InStore):
    bucket: str
    relative_path: str
    region: str
    endpoint: str | None = None

    @property
    def root(self) -> str:
        return f"s3://{self.bucket}"


@dataclass(frozen=True)
class AbfssStorage(_InStore):
    """ADLS Gen2: a container (file system) of a storage account, and a folder in it.

    `endpoint` replaces the public `https://<account>.dfs.core.windows.net` (an emulator, a
    private endpoint); an http one is reached as `abfs://`, since `abfss://` always means TLS.
    """

    account: str
    container: str
    relative_path: str
    endpoint: str | None = None

    @property
    def host(self) -> str:
        return f"{self.account}.dfs.core.windows.net"

    @property
    def scheme(self) -> str:
        plain = (self.endpoint or "").lower().startswith("http://")
        return "abfs" if plain else "abfss"

    @property
    def root(self) -> str:
        return f"{self.scheme}://{self.container}@{self.host}"


@dataclass(frozen=True)
class GcsStorage(_InStore):
    """A Google Cloud Storage bucket and prefix; `endpoint` is an emulator's URL (none: GCS)."""

    bucket: str
    relative_path: str
    project: str | None = None
    endpoint: str | None = None

    @property
    def root(self) -> str:
        return f"gs://{self.bucket}"


@dataclass(frozen=True)
class LocalStorage:
    path: Path

    def __post_init__(self) -> None:
        if not Path(self.path).is_absolute():
            raise ValueError(f"LocalStorage needs an absolute path, got {self.path}")

    @property
    def warehouse_uri(self) -> str:
        # Hadoop's Path wants `file:/abs` with the path unescaped (as_uri would %-encode it).
        return f"file:{Path(self.path).as_posix()}"


# A resolved depot's storage, one class per storage kind (storage/registry.py).
Storage = S3Storage | LocalStorage | AbfssStorage | GcsStorage


@dataclass(frozen=True, repr=False)
class CatalogSpec:
    type: str
    uri: str | None = None
    warehouse: str | None = None
    # Free-form Iceberg catalog properties; hash=False because a dict cannot be hashed.
    properties: dict[str, str] = field(default_factory=dict, hash=False)

    def __repr__(self) -> str:
        shown = {k: ("****" if is_secret_key(k) else v) for k, v in self.properties.items()}
        uri = "****" if self.uri and uri_has_secret(self.uri) else self.uri
        return (
            f"CatalogSpec(type={self.type!r}, uri={uri!r}, warehouse={self.warehouse!r}, "
            f"properties={shown!r})"
        )


@dataclass(frozen=True)
class DepotSecrets:
    aws_access_key: Secret | None = None
    aws_secret_key: Secret | None = None
    aws_session_token: Secret | None = None
    apikey: Secret | None = None
    jdbc_user: Secret | None = None
    jdbc_password: Secret | None = None
    # abfss: one of an account key, a SAS token, or a service principal (all three).
    azure_account_key: Secret | None = None
    azure_sas_token: Secret | None = None
    azure_client_id: Secret | None = None
    azure_client_secret: Secret | None = None
    azure_tenant_id: Secret | None = None
    # A Google service-account key, the JSON text of the key file (storageType gcs).
    gcs_key_json: Secret | None = None

    def values(self) -> list[str]:
        """The revealed values that are set, for masking (secrets.scrub)."""
        held = (getattr(self, f.name) for f in fields(self))
        return [s.reveal() for s in held if isinstance(s, Secret) and s]


_SECRET_KEYS = tuple(f.name for f in fields(DepotSecrets))


@dataclass(frozen=True)
class Depot:
    name: str
    storage: Storage
    catalog: CatalogSpec
    secrets: DepotSecrets
    source: str
    embedded: bool = False
    # spec.tableFormats: the `table_formats` of this depot's tables that set none.
    table_formats: tuple[str, ...] | None = None
    # spec.formatVersion: the `format_version` of this depot's tables that set none.
    format_version: int | None = None
    # The IAM role its AWS clients assume (profile/depot/aws_role.py), if any.
    aws_role: AwsRole | None = None

    def secret_values(self) -> list[str]:
        """Every credential the depot holds, for masking in messages (secrets.scrub)."""
        held = (getattr(self.secrets, f.name) for f in fields(self.secrets))
        values = [s.reveal() for s in held if isinstance(s, Secret) and s]
        values += [v for k, v in self.catalog.properties.items() if is_secret_key(k) and v]
        if self.aws_role is not None and self.aws_role.external_id:
            values.append(self.aws_role.external_id.reveal())
        if self.secrets.gcs_key_json:
            # A message may quote a part of the key (its private key, one line of it) alone.
            values += gcs_key_parts(self.secrets.gcs_key_json.reveal())
        return values


@dataclass(frozen=True)
class _Context:
    env: Mapping[str, str]
    cwd: Path
    home: Path
    aws_region: str | None
    aws_endpoint: str | None
    # The profile's aws_role_* keys (they win over the depot's).
    aws_role: Mapping[str, Any] = field(default_factory=dict)
    # The profile's DataOS apikey, for the Depot Service when DATAOS_RUN_AS_APIKEY is unset.
    apikey: str | None = field(default=None, repr=False)

    def getenv(self, name: str) -> str | None:
        # Unset and empty are the same: `export X=` is how shells "unset" in CI files.
        value = (self.env.get(name) or "").strip()
        return value or None


def gcs_key_parts(key_json: str) -> list[str]:
    """The secret fields of a service-account key and each line of its private key."""
    try:
        key = json.loads(key_json)
    except ValueError:
        return []
    if not isinstance(key, dict):
        return []
    parts = [str(key.get(name) or "") for name in ("private_key", "private_key_id")]
    # The PEM's BEGIN/END lines are the same in every key: not worth masking.
    lines = [n for n in str(key.get("private_key") or "").splitlines() if "-----" not in n]
    return [p for p in parts + lines if len(p) >= 16]


def _normalise_prefix(prefix: str) -> str:
    return "/".join(part for part in prefix.strip().split("/") if part)
