"""The depot schema: one depot mapping (inline or from a depots file) read into a `_Draft`.

Parsing records every problem it finds instead of stopping at the first, so one message lists all of
a depot's mistakes; the `spec.<storageType>` section is read by its storage kind
(storage/registry.py). precedence.py then fills in what the depot leaves out. A value that may be a
secret is described by its kind only, never echoed.
"""

from __future__ import annotations

from collections.abc import Mapping

from dbt.adapters.lakehouse.profile.depot.aws_role import ROLE_KEYS
from dbt.adapters.lakehouse.profile.depot.draft import (
    _check_keys,
    _Draft,
    _kind,
    _opt_str,
)
from dbt.adapters.lakehouse.profile.depot.model import _SECRET_KEYS, CATALOG_TYPES
from dbt.adapters.lakehouse.profile.depot.storage.registry import KINDS, STORAGE_TYPES

_TOP_KEYS = ("type", "spec", "catalog", "secrets")
_SPEC_KEYS = ("storageType", "s3", "file", "abfss", "gcs", "tableFormats", "formatVersion")
_CATALOG_KEYS = ("type", "uri", "warehouse", "properties")


def _draft_from_entry(entry: object) -> tuple[_Draft, list[str]]:
    draft = _Draft()
    problems: list[str] = []
    if not isinstance(entry, Mapping):
        return draft, [
            f"A depot must be a mapping with keys {', '.join(_TOP_KEYS)}; got {_kind(entry)}."
        ]
    _check_keys(entry, _TOP_KEYS, "depot", problems)
    depot_type = entry.get("type")
    if depot_type is not None and str(depot_type).strip().lower() != "lakehouse":
        problems.append(f"Depot type {_shown(depot_type)} is not supported. Accepted: lakehouse.")
    _parse_spec(entry.get("spec"), draft, problems)
    _parse_catalog(entry.get("catalog"), draft, problems)
    _parse_secrets(entry.get("secrets"), draft, problems)
    return draft, problems


def _parse_spec(spec: object, draft: _Draft, problems: list[str]) -> None:
    accepted = (
        "Accepted: spec: {storageType: s3, s3: {bucket: <bucket>, relativePath: <prefix>, "
        "region: <region>, endpoint: <url>}}, spec: {storageType: abfss, abfss: {account: "
        "<storage account>, container: <container>, relativePath: <prefix>}}, spec: "
        "{storageType: gcs, gcs: {bucket: <bucket>, relativePath: <prefix>, project: <project "
        "id>, endpoint: <emulator url>}} or spec: {storageType: file, file: {path: <folder>}}."
    )
    if not isinstance(spec, Mapping):
        given = "it is missing" if spec is None else f"got {_kind(spec)}"
        problems.append(f"Depot `spec` must be a mapping; {given}. {accepted}")
        return
    _check_keys(spec, _SPEC_KEYS, "spec", problems)
    draft.table_formats = spec.get("tableFormats")
    draft.format_version = spec.get("formatVersion")
    storage_type = _opt_str(spec, "storageType", "spec", problems)
    if storage_type is None:
        problems.append(f"spec.storageType is missing. Accepted: {', '.join(STORAGE_TYPES)}.")
        return
    if storage_type.lower() not in STORAGE_TYPES:
        problems.append(
            f"spec.storageType {storage_type!r} is not supported. Accepted: "
            f"{', '.join(STORAGE_TYPES)}."
        )
        return
    draft.storage_type = storage_type.lower()
    kind = KINDS[draft.storage_type]
    section = spec.get(draft.storage_type)
    where = f"spec.{draft.storage_type}"
    if not isinstance(section, Mapping):
        given = "it is missing" if section is None else f"got {_kind(section)}"
        problems.append(
            f"storageType {draft.storage_type} needs a `{where}` mapping; {given}. {accepted}"
        )
        return
    _check_keys(section, kind.section.keys, where, problems)
    kind.section.read(section, draft, where, problems)


def _parse_catalog(catalog: object, draft: _Draft, problems: list[str]) -> None:
    if catalog is None:
        return
    if not isinstance(catalog, Mapping):
        problems.append(
            f"Depot `catalog` must be a mapping; got {_kind(catalog)}. Accepted: "
            "catalog: {type: rest|hadoop|jdbc|glue|nessie, uri: ..., warehouse: ..., "
            "properties: {...}}."
        )
        return
    _check_keys(
        catalog,
        _CATALOG_KEYS,
        "catalog",
        problems,
        hint=" Other Iceberg catalog properties go under catalog.properties.",
    )
    catalog_type = _opt_str(catalog, "type", "catalog", problems)
    if catalog_type is not None and catalog_type.lower() not in CATALOG_TYPES:
        problems.append(
            f"catalog.type {catalog_type!r} is not supported. Accepted: {', '.join(CATALOG_TYPES)}."
        )
        draft.catalog_type = None
    elif catalog_type is not None:
        draft.catalog_type = catalog_type.lower()
    draft.catalog_uri = _opt_str(catalog, "uri", "catalog", problems)
    draft.catalog_warehouse = _opt_str(catalog, "warehouse", "catalog", problems)
    properties = catalog.get("properties")
    if properties is None:
        return
    if not isinstance(properties, Mapping):
        problems.append(
            f"catalog.properties must be a mapping of strings; got {_kind(properties)}."
        )
        return
    for key, value in properties.items():
        if isinstance(value, bool):
            draft.properties[str(key)] = "true" if value else "false"  # Java spelling
        elif isinstance(value, str | int | float):
            draft.properties[str(key)] = str(value)
        else:
            problems.append(
                f"catalog.properties.{key} must be a string, number or boolean; got {_kind(value)}."
            )


def _parse_secrets(secrets: object, draft: _Draft, problems: list[str]) -> None:
    if secrets is None:
        return
    if not isinstance(secrets, Mapping):
        problems.append(
            f"Depot `secrets` must be a mapping; got {_kind(secrets)}. Accepted keys: "
            f"{', '.join(_SECRET_KEYS + ROLE_KEYS)}."
        )
        return
    _check_keys(secrets, _SECRET_KEYS + ROLE_KEYS, "secrets", problems)
    for key in _SECRET_KEYS + ROLE_KEYS:
        value = secrets.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            # The kind only: even a mistyped secret's value must not be echoed.
            problems.append(f"secrets.{key} must be a string; got {_kind(value)}.")
            continue
        # Empty means unset: `{{ env_var('AWS_SESSION_TOKEN', '') }}` is the usual idiom.
        if str(value).strip():
            draft.secrets[key] = str(value).strip()


def _shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")
