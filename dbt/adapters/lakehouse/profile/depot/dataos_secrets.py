"""DataOS's secrets read into our secret keys: the Depot Service's `{id, data: [{key,
base64Value}]}` (each value base64 of `k=v` lines or of a JSON object, as pyflare reads them) and
plain mappings, in DataOS's spelling (`awsaccesskeyid`, `azurestorageaccountkey`, `gcskey_json`)
or ours. Pure: no files, no HTTP. Messages name keys and kinds, never a value.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.dataos_shapes import _keys

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
