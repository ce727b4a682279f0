"""DataOS's own depot shapes read into our depot entry (`{type, spec, catalog, secrets}`), the
one form parse.py reads, so a depot from DataOS is checked exactly as a depots-file one is.

Pure: no files, no HTTP. Accepted (docs/profiles-and-depots.md, "Inside DataOS", says which
public source each shape was seen in):
- our own depot entry, passed through;
- a DataOS 2.0 manifest: `type: lakehouse`, `spec: {storageType, catalogType, metastoreUrl,
  metastoreRelativePath, s3|abfss|gcs: {...}}`, `secrets: [{id, purpose}]`;
- DataOS 1.x depot JSON (`GET /ds/api/v2/depots/{depot}`, a 1.x manifest's `depot:`):
  `type: S3|ABFSS|GCS`, `s3|abfss|gcs: {scheme, bucket, relativePath, metastoreUrl,
  icebergCatalogType, ...}`; ABFSS `account, container, endpointSuffix`;
- the tenant-scoped resolve answer (`{depot, type, s3{...}, secrets: [...], resolution}`);
and secrets as DataOS spells them (`awsaccesskeyid`, `azurestorageaccountkey`, `gcskey_json`)
or as we do, from base64 `k=v` lines or JSON. Messages name keys and kinds, never a value.

Each shape is read together with its spelling: which of the document's own keys each of ours
came from (`catalog.uri` <- `s3.metastoreUrl`), so every later depot error names the key the
user or the service wrote (written_keys.py), not ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import _Context
from dbt.adapters.lakehouse.profile.depot.storage.registry import KINDS, STORAGE_TYPES
from dbt.adapters.lakehouse.profile.secrets import safe_url

# The fields of a DataOS storage block that we read; the rest (scheme, format, metastore*,
# fields DataOS may add later) are informational or read elsewhere, never refused as typos.
_OWN_FIELDS = ("bucket", "relativePath", "region", "endpoint", "account", "container", "project")


def is_lakehouse_shape(document: Mapping[str, Any]) -> bool:
    """Whether `document` describes a depot at all (as opposed to, say, an error body)."""
    return any(k in document for k in ("spec", "s3", "abfss", "gcs", "connection", "type"))


@dataclass(frozen=True)
class Spelled:
    """A depot entry in our form, and the document's own name of each of our keys it set."""

    entry: dict[str, Any]
    spelling: dict[str, str] = field(default_factory=dict)


def depot_entry(
    document: Mapping[str, Any], secrets: Mapping[str, str], where: str
) -> dict[str, Any]:
    """`document` in any accepted shape, with `secrets` (already our spelling), as our entry."""
    return spelled_entry(document, secrets, where).entry


def spelled_entry(document: Mapping[str, Any], secrets: Mapping[str, str], where: str) -> Spelled:
    """`depot_entry`, with the spelling of the keys as `document` wrote them."""
    prefix = ""
    if isinstance(document.get("depot"), Mapping):  # a 1.x manifest wraps the depot
        document, prefix = document["depot"], "depot."
    spec = document.get("spec")
    if isinstance(spec, Mapping) and isinstance(document.get("catalog"), Mapping):
        entry = dict(document)  # our own format
        own = entry.get("secrets")
        entry["secrets"] = {**secrets, **(own if isinstance(own, Mapping) else {})}
        return Spelled(entry)
    if isinstance(spec, Mapping) and "storageType" in spec:
        return _from_manifest(document, spec, secrets, where, f"{prefix}spec.")
    return _from_v1(document, secrets, where, prefix)


def _from_manifest(
    document: Mapping[str, Any],
    spec: Mapping[str, Any],
    secrets: Mapping[str, str],
    where: str,
    prefix: str,
) -> Spelled:
    _check_type(document.get("type"), where, accepted_storage=False)
    storage_type = str(spec.get("storageType") or "").strip().lower()
    kind_key = "catalogType" if spec.get("catalogType") else "icebergCatalogType"
    catalog, spelling = _catalog(spec, kind_key, None, where, prefix)
    spelling["spec.storageType"] = f"{prefix}storageType"
    spelling.update(_storage_spelling(storage_type, f"{prefix}{storage_type}."))
    return Spelled(
        {
            "type": "lakehouse",
            "spec": {
                "storageType": storage_type,
                storage_type: _storage(spec.get(storage_type), storage_type),
            },
            "catalog": catalog,
            "secrets": dict(secrets),
        },
        spelling,
    )


def _from_v1(
    document: Mapping[str, Any], secrets: Mapping[str, str], where: str, prefix: str
) -> Spelled:
    connection = document.get("connection")
    if isinstance(connection, Mapping) and not any(k in document for k in STORAGE_TYPES):
        return _from_resolve_connection(document, connection, secrets, where)
    kind = _check_type(document.get("type"), where, accepted_storage=True)
    storage_type = kind if kind in STORAGE_TYPES else ""
    if not storage_type:  # `type: lakehouse` with a storage block beside it (tenant resolve)
        storage_type = next((k for k in ("s3", "abfss", "gcs") if k in document), "")
    block = document.get(storage_type)
    if not isinstance(block, Mapping):
        raise DepotConfigError(
            f"{where} describes no storage: expected a `{storage_type or 's3|abfss|gcs'}` "
            f"block (scheme, bucket, relativePath, ...); got keys {_keys(document)}. Accepted: "
            "a DataOS 1.x depot, a 2.0 lakehouse manifest, or our depot entry."
        )
    block_prefix = f"{prefix}{storage_type}."
    catalog, spelling = _v1_catalog(block, where, block_prefix)
    spelling["spec.storageType"] = f"{prefix}type"
    spelling.update(_storage_spelling(storage_type, block_prefix))
    return Spelled(
        {
            "type": "lakehouse",
            "spec": {"storageType": storage_type, storage_type: _storage(block, storage_type)},
            "catalog": catalog,
            "secrets": dict(secrets),
        },
        spelling,
    )


def _from_resolve_connection(
    document: Mapping[str, Any],
    connection: Mapping[str, Any],
    secrets: Mapping[str, str],
    where: str,
) -> Spelled:
    """`GET /ds/api/v2/resolve`: S3 as `connection{bucket, path|relativePath, metastoreUrl}`."""
    _check_type(document.get("type"), where, accepted_storage=True)
    path_key = "relativePath" if connection.get("relativePath") else "path"
    block = {"bucket": connection.get("bucket"), "relativePath": connection.get(path_key) or ""}
    catalog, spelling = _v1_catalog(connection, where, "connection.")
    spelling.update(_storage_spelling("s3", "connection."))
    spelling["spec.s3.relativePath"] = f"connection.{path_key}"
    return Spelled(
        {
            "type": "lakehouse",
            "spec": {"storageType": "s3", "s3": {k: v for k, v in block.items() if v is not None}},
            "catalog": catalog,
            "secrets": dict(secrets),
        },
        spelling,
    )


def _check_type(value: object, where: str, *, accepted_storage: bool) -> str:
    kind = str(value or "lakehouse").strip().lower()
    accepted = ("lakehouse", *STORAGE_TYPES) if accepted_storage else ("lakehouse",)
    if kind not in accepted or kind == "file":
        raise DepotConfigError(
            f"{where} is a depot of type {str(value)[:40]!r}, which dbt-lakehouse cannot write "
            "Iceberg tables to. Accepted: a lakehouse depot (or a 1.x S3, ABFSS or GCS depot "
            "with an Iceberg catalog)."
        )
    return kind


def _storage(block: object, storage_type: str) -> dict[str, Any]:
    if not isinstance(block, Mapping):
        return {}  # parse.py reports the missing block with the accepted forms
    own = {k: block[k] for k in _OWN_FIELDS if block.get(k) is not None}
    kind = KINDS.get(storage_type)
    if kind is not None:
        kind.read_dataos_block(block, own)
    return own


def _storage_spelling(storage_type: str, written: str) -> dict[str, str]:
    spelling = {f"spec.{storage_type}.{k}": f"{written}{k}" for k in _OWN_FIELDS}
    spelling[f"spec.{storage_type}"] = written.rstrip(".")
    return spelling


def _v1_catalog(
    block: Mapping[str, Any], where: str, prefix: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The catalog a 1.x storage block means, decided as DataOS does (docs/profiles-and-depots.md,
    "Which catalog a DataOS depot means"): `metastoreType` names the catalog server the tables
    are registered in, so `metastoreType: rest` is the REST catalog at `metastoreUrl` whatever
    `icebergCatalogType` says (DataOS's own docs print `icebergCatalogType: hadoop` beside it);
    without a `metastoreType`, `icebergCatalogType` decides."""
    if block.get("metastoreType"):
        return _catalog(block, "metastoreType", ("rest",), where, prefix)
    iceberg = str(block.get("icebergCatalogType") or "").strip().lower()
    if iceberg == "hadoop" and block.get("metastoreUrl"):
        raise DepotConfigError(
            f"{where} names {prefix}icebergCatalogType: hadoop (table metadata kept in the "
            f"warehouse, no catalog server) and {prefix}metastoreUrl "
            f"{safe_url(str(block['metastoreUrl']))!r} (a catalog server), and no "
            f"{prefix}metastoreType says which is meant. Fix: add `metastoreType: rest` to use "
            "the REST metastore at that URL (as DataOS's own depots do), or remove "
            "`metastoreUrl` for a Hadoop catalog."
        )
    return _catalog(block, "icebergCatalogType", None, where, prefix)


def _catalog(
    block: Mapping[str, Any],
    kind_key: str,
    only: tuple[str, ...] | None,
    where: str,
    prefix: str,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Our catalog from `block[kind_key]`, `metastoreUrl` and `metastoreRelativePath`; a type we
    cannot use, or one outside `only`, is refused naming the key as written."""
    kind = block.get(kind_key)
    catalog_type = str(kind or "rest").strip().lower()
    accepted = only or ("rest", "hadoop", "glue", "nessie", "jdbc")
    if catalog_type not in accepted:
        raise DepotConfigError(
            f"{where} names {prefix}{kind_key} {str(kind)[:40]!r}, which dbt-lakehouse cannot "
            f"use. Accepted: {', '.join(accepted)}"
            + (" (a Hive metastore is not supported)." if catalog_type == "hive" else ".")
        )
    url, relative = block.get("metastoreUrl"), block.get("metastoreRelativePath")
    if url and catalog_type in ("hadoop", "glue"):
        raise DepotConfigError(
            f"{where} names {prefix}{kind_key}: {catalog_type} and {prefix}metastoreUrl "
            f"{safe_url(str(url))!r}; a {catalog_type} catalog has no server to reach. Fix: "
            f"remove `metastoreUrl`, or set `{kind_key}: REST` to use the catalog at that URL."
        )
    catalog: dict[str, Any] = {"type": catalog_type}
    spelling = {"catalog.type": f"{prefix}{kind_key}"}
    if url:
        base = str(url).strip()
        spelling["catalog.uri"] = f"{prefix}metastoreUrl"
        if relative:
            base = base.rstrip("/") + "/" + str(relative).strip().lstrip("/")
            spelling["catalog.uri"] += f" + {prefix}metastoreRelativePath"
        catalog["uri"] = base
    return catalog, spelling


def run_as_apikey(ctx: _Context) -> tuple[str | None, str]:
    """The apikey a DataOS workload runs as, and where it came from: `DATAOS_RUN_AS_APIKEY`
    (DataOS sets it in every workload), else the profile's `apikey`."""
    if apikey := ctx.getenv("DATAOS_RUN_AS_APIKEY"):
        return apikey, "DATAOS_RUN_AS_APIKEY"
    if ctx.apikey:
        return ctx.apikey, "the profile's `apikey`"
    return None, "DATAOS_RUN_AS_APIKEY"


def run_as_token(entry: dict[str, Any], where: str, ctx: _Context) -> None:
    """The REST catalog's token of a depot DataOS answered for: its `apikey` secret, else the
    run-as apikey (DataOS's own engines pass the run-as apikey to the REST catalog as its
    token), else LAKEHOUSE_APIKEY; none of them is one line naming each place."""
    catalog = entry.get("catalog")
    secrets = entry.setdefault("secrets", {})
    is_rest = isinstance(catalog, Mapping) and str(catalog.get("type", "rest")).lower() == "rest"
    if not is_rest or not isinstance(secrets, dict) or secrets.get("apikey"):
        return
    apikey, _ = run_as_apikey(ctx)
    apikey = apikey or ctx.getenv("LAKEHOUSE_APIKEY")
    if apikey:
        secrets["apikey"] = apikey
        return
    # The sentence the Nilus seeds match stays first; the rest names DataOS's places, on one line.
    raise DepotConfigError(
        f"'apikey' is required in Lakehouse depot secret. The REST catalog authenticates with a "
        f"bearer token, and {where} has none: no `apikey` in the depot's secret, no "
        "DATAOS_RUN_AS_APIKEY (nor the profile's `apikey`), no LAKEHOUSE_APIKEY. Fix: run where "
        "DataOS sets DATAOS_RUN_AS_APIKEY, export it, or add `apikey` to the depot's secret."
    )


def _keys(document: Mapping[Any, Any]) -> str:
    names = [str(k) for k in list(document)[:12]]
    return "{" + ", ".join(names) + "}" if names else "none"
