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
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import STORAGE_TYPES

# DataOS's secret key spellings -> ours (profile/depot/model.py DepotSecrets).
SECRET_KEY_ALIASES = {
    "awsaccesskeyid": "aws_access_key",
    "awssecretaccesskey": "aws_secret_key",
    "awssessiontoken": "aws_session_token",
    "azurestorageaccountkey": "azure_account_key",
    "azuresastoken": "azure_sas_token",
    "azureclientid": "azure_client_id",
    "azureclientsecret": "azure_client_secret",
    "azuretenantid": "azure_tenant_id",
    "gcskey_json": "gcs_key_json",
    "gcskeyjson": "gcs_key_json",
}
# Keys a DataOS secret carries that are not credentials we use (the account name is in the
# depot's spec); dropped rather than refused, since the platform writes them.
_IGNORED_SECRET_KEYS = ("azurestorageaccountname", "projectid", "email")
# The fields of a DataOS storage block that we read; the rest (scheme, format, metastore*,
# fields DataOS may add later) are informational or read elsewhere, never refused as typos.
_OWN_FIELDS = ("bucket", "relativePath", "region", "endpoint", "account", "container", "project")


def is_lakehouse_shape(document: Mapping[str, Any]) -> bool:
    """Whether `document` describes a depot at all (as opposed to, say, an error body)."""
    return any(k in document for k in ("spec", "s3", "abfss", "gcs", "connection", "type"))


def depot_entry(
    document: Mapping[str, Any], secrets: Mapping[str, str], where: str
) -> dict[str, Any]:
    """`document` in any accepted shape, with `secrets` (already our spelling), as our entry."""
    if isinstance(document.get("depot"), Mapping):  # a 1.x manifest wraps the depot
        document = document["depot"]
    spec = document.get("spec")
    if isinstance(spec, Mapping) and isinstance(document.get("catalog"), Mapping):
        entry = dict(document)  # our own format
        own = entry.get("secrets")
        entry["secrets"] = {**secrets, **(own if isinstance(own, Mapping) else {})}
        return entry
    if isinstance(spec, Mapping) and "storageType" in spec:
        return _from_manifest(document, spec, secrets, where)
    return _from_v1(document, secrets, where)


def _from_manifest(
    document: Mapping[str, Any], spec: Mapping[str, Any], secrets: Mapping[str, str], where: str
) -> dict[str, Any]:
    _check_type(document.get("type"), where, accepted_storage=False)
    storage_type = str(spec.get("storageType") or "").strip().lower()
    block = spec.get(storage_type)
    catalog = _catalog(
        spec.get("catalogType") or spec.get("icebergCatalogType"),
        spec.get("metastoreUrl"),
        spec.get("metastoreRelativePath"),
        where,
    )
    return {
        "type": "lakehouse",
        "spec": {"storageType": storage_type, storage_type: _storage(block, storage_type)},
        "catalog": catalog,
        "secrets": dict(secrets),
    }


def _from_v1(document: Mapping[str, Any], secrets: Mapping[str, str], where: str) -> dict[str, Any]:
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
    return {
        "type": "lakehouse",
        "spec": {"storageType": storage_type, storage_type: _storage(block, storage_type)},
        "catalog": _catalog(
            block.get("icebergCatalogType") or block.get("metastoreType"),
            block.get("metastoreUrl"),
            block.get("metastoreRelativePath"),
            where,
        ),
        "secrets": dict(secrets),
    }


def _from_resolve_connection(
    document: Mapping[str, Any],
    connection: Mapping[str, Any],
    secrets: Mapping[str, str],
    where: str,
) -> dict[str, Any]:
    """`GET /ds/api/v2/resolve`: S3 as `connection{bucket, path|relativePath, metastoreUrl}`."""
    _check_type(document.get("type"), where, accepted_storage=True)
    block = {
        "bucket": connection.get("bucket"),
        "relativePath": connection.get("relativePath") or connection.get("path") or "",
    }
    return {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": {k: v for k, v in block.items() if v is not None}},
        "catalog": _catalog(
            connection.get("icebergCatalogType"),
            connection.get("metastoreUrl"),
            connection.get("metastoreRelativePath"),
            where,
        ),
        "secrets": dict(secrets),
    }


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
    suffix = block.get("endpointSuffix")
    if storage_type == "abfss" and suffix and "endpoint" not in own:
        suffix_text = str(suffix).strip().lstrip(".")
        if suffix_text and suffix_text != "dfs.core.windows.net":
            own["endpoint"] = f"https://{block.get('account')}.{suffix_text}"
    return own


def _catalog(kind: object, url: object, relative: object, where: str) -> dict[str, Any]:
    catalog_type = str(kind or "rest").strip().lower()
    if catalog_type not in ("rest", "hadoop", "glue", "nessie", "jdbc"):
        raise DepotConfigError(
            f"{where} names Iceberg catalog type {str(kind)[:40]!r}, which dbt-lakehouse cannot "
            "use. Accepted: REST (catalogType or icebergCatalogType), hadoop, glue, nessie, jdbc."
        )
    catalog: dict[str, Any] = {"type": catalog_type}
    if url:
        base = str(url).strip()
        if relative:
            base = base.rstrip("/") + "/" + str(relative).strip().lstrip("/")
        catalog["uri"] = base
    return catalog


def our_secret_keys(values: Mapping[str, Any], where: str) -> dict[str, str]:
    """DataOS secret keys in either spelling -> ours; a key we do not know is refused by name."""
    ours: dict[str, str] = {}
    for key, value in values.items():
        name = str(key).strip()
        lowered = name.lower()
        if lowered in _IGNORED_SECRET_KEYS or value is None:
            continue
        if isinstance(value, Mapping) and lowered in ("gcskey_json", "gcs_key_json"):
            value = json.dumps(value)  # a key file given as a JSON object, not its text
        if not isinstance(value, str | int):
            raise DepotConfigError(
                f"{where}: secret key {name!r} must hold a string; got a "
                f"{type(value).__name__} (value not shown)."
            )
        ours[SECRET_KEY_ALIASES.get(lowered, lowered)] = str(value)
    return ours


def decode_secret_payload(body: object, where: str) -> dict[str, str]:
    """A Depot Service secret, `{id, data: [{key, base64Value}]}`, as our secret keys.

    Each base64Value decodes to `k=v` lines or to a JSON object (pyflare's reader takes both);
    a plain mapping of keys to values is taken as it is."""
    if isinstance(body, Mapping) and isinstance(body.get("data"), list):
        merged: dict[str, Any] = {}
        for item in body["data"]:
            if not isinstance(item, Mapping) or "base64Value" not in item:
                raise DepotConfigError(
                    f"{where} is malformed: each `data` item must be {{key, base64Value}}; got "
                    f"{_keys(item) if isinstance(item, Mapping) else type(item).__name__}."
                )
            merged.update(_decoded_value(item.get("key"), item["base64Value"], where))
        return our_secret_keys(merged, where)
    if isinstance(body, Mapping):
        return our_secret_keys(body, where)
    raise DepotConfigError(
        f"{where} is malformed: expected {{id, data: [{{key, base64Value}}]}} or a mapping; got "
        f"a {type(body).__name__}."
    )


def _decoded_value(key: object, encoded: object, where: str) -> dict[str, Any]:
    try:
        text = base64.b64decode(str(encoded), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise DepotConfigError(
            f"{where} is malformed: the value of secret item {str(key)[:40]!r} is not base64 "
            "UTF-8 text (value not shown). Accepted: base64 of `k=v` lines or of a JSON object."
        ) from None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
        if str(key or "").lower() in ("gcskey_json", "gcs_key_json"):
            raise DepotConfigError(
                f"{where} is malformed: secret item {str(key)[:40]!r} is not valid JSON (value "
                "not shown)."
            )
    pairs: dict[str, Any] = {}
    for line in stripped.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            if key and len(stripped.splitlines()) == 1:
                return {str(key): stripped}  # one bare value, named by its item's key
            raise DepotConfigError(
                f"{where} is malformed: secret item {str(key)[:40]!r} decodes to neither "
                "`k=v` lines nor a JSON object (value not shown)."
            )
        pairs[name.strip()] = value.strip()
    return pairs


def _keys(document: Mapping[Any, Any]) -> str:
    names = [str(k) for k in list(document)[:12]]
    return "{" + ", ".join(names) + "}" if names else "none"
