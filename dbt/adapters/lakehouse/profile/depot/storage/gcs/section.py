"""GCS depots: a parsed `gcs` section made into a `GcsStorage`, and the checks of its credentials.

This module owns what a GCS depot may say and where its settings come from: the bucket and
prefix from `spec.gcs`; the project from `spec.gcs.project`, else GOOGLE_CLOUD_PROJECT; an
emulator's URL from `spec.gcs.endpoint`, else STORAGE_EMULATOR_HOST (the variable Google's own
client libraries read). The credentials are the depot's `secrets.gcs_key_json` (a service
account's JSON key, as text), else the default Google chain (GOOGLE_APPLICATION_CREDENTIALS,
then the metadata server), which the JVM's GCS client reads itself. A key is described by its
kind and length only, never echoed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from dbt.adapters.lakehouse.profile.depot.draft import _bucket_section, _Draft
from dbt.adapters.lakehouse.profile.depot.model import GcsStorage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.kind import Section
from dbt.adapters.lakehouse.profile.secrets import safe_url

SECTION_KEYS = ("bucket", "relativePath", "project", "endpoint")
KEY_FIELDS = ("client_email", "private_key", "private_key_id")
_AWS_SECRETS = ("aws_access_key", "aws_secret_key", "aws_session_token")
_KEY_ACCEPTED = (
    "Accepted: the JSON text of a service-account key file (e.g. secrets.gcs_key_json: "
    '"{{ env_var(\'GCS_KEY_JSON\') }}" with GCS_KEY_JSON="$(cat key.json)"), or no '
    "gcs_key_json to use the default Google chain (GOOGLE_APPLICATION_CREDENTIALS=<key file>, "
    "or the metadata server on Google Cloud)."
)


def resolve_gcs_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> GcsStorage | None:
    project = draft.project or ctx.getenv("GOOGLE_CLOUD_PROJECT")
    endpoint, endpoint_from = draft.endpoint, "depot spec.gcs.endpoint"
    if endpoint is None and ctx.getenv("STORAGE_EMULATOR_HOST"):
        endpoint, endpoint_from = ctx.getenv("STORAGE_EMULATOR_HOST"), "STORAGE_EMULATOR_HOST"
    if endpoint is not None and not endpoint.lower().startswith(("http://", "https://")):
        problems.append(
            f"The GCS endpoint from {endpoint_from} is not an http(s) URL; got "
            f"{safe_url(endpoint)!r}. Accepted: an emulator's URL such as "
            "http://127.0.0.1:4443, or no endpoint for Google Cloud Storage itself."
        )
        return None
    if draft.bucket is None:
        return None
    return GcsStorage(draft.bucket, draft.relative_path, project, endpoint)


def check_gcs_secrets(
    draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
) -> None:
    """Credentials of one cloud given to a depot on another are a mistake, not a fallback; a
    service-account key must be a whole one."""
    key = draft.secrets.get("gcs_key_json")
    if own:
        given = [name for name in _AWS_SECRETS if name in draft.secrets]
        if given:
            problems.append(
                f"A GCS depot takes no AWS keys; got secrets.{', secrets.'.join(given)} "
                f"(values not shown). {_KEY_ACCEPTED}"
            )
        if key is not None:
            problems.extend(key_problems(key))
    elif key is not None:
        problems.append(
            f"secrets.gcs_key_json is for storageType gcs; this depot's storageType is "
            f"{draft.storage_type}. Accepted: remove it, or set spec.storageType: gcs."
        )


def key_problems(key_json: str) -> list[str]:
    """What is wrong with a service-account key, by its shape only (no value is quoted)."""
    try:
        key = json.loads(key_json)
    except ValueError:
        looks_like = "a file path" if not key_json.lstrip().startswith("{") else "broken JSON"
        return [
            f"secrets.gcs_key_json is not JSON; given: text of {len(key_json)} characters that "
            f"looks like {looks_like} (value not shown). It must be the key file's content, "
            f"not its path. {_KEY_ACCEPTED}"
        ]
    if not isinstance(key, Mapping):
        return [f"secrets.gcs_key_json must be a JSON object (a key file). {_KEY_ACCEPTED}"]
    problems = []
    if key.get("type") != "service_account":
        kind = key.get("type")
        shown = repr(kind) if isinstance(kind, str) and len(kind) < 40 else "none"
        problems.append(
            f"secrets.gcs_key_json is not a service-account key: its type is {shown}. "
            "Accepted: a key file of type service_account (IAM > Service accounts > Keys > "
            "Add key > JSON); user or external-account credentials go through "
            "GOOGLE_APPLICATION_CREDENTIALS (the default chain) instead."
        )
    missing = [name for name in KEY_FIELDS if not isinstance(key.get(name), str) or not key[name]]
    if missing:
        problems.append(
            f"secrets.gcs_key_json lacks {', '.join(missing)}. Accepted: a whole service-account "
            "key file, as Google Cloud downloads it."
        )
    return problems


def parsed_key(key_json: str) -> dict[str, str]:
    """The fields of a key that `key_problems` accepted."""
    key = json.loads(key_json)
    return {name: str(key[name]) for name in (*KEY_FIELDS, "token_uri") if key.get(name)}


SECTION = Section(
    SECTION_KEYS, _bucket_section("project", "endpoint"), resolve_gcs_storage, check_gcs_secrets
)
