"""delta-rs (object_store) options for a depot's storage, with credentials kept out of reprs."""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot.model import Depot, S3Storage
from dbt.adapters.lakehouse.profile.secrets import MASK

_SECRET_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class StorageOptions(dict[str, str]):
    """delta-rs options whose repr masks the keys: options end up in tracebacks and debug
    output, the credentials must not."""

    def __repr__(self) -> str:
        shown = {k: (MASK if k in _SECRET_OPTIONS else v) for k, v in self.items()}
        return f"StorageOptions({shown!r})"

    __str__ = __repr__


def storage_options(depot: Depot | None) -> dict[str, str]:
    """delta-rs (object_store) options for the depot's storage: its own endpoint, region and
    keys, so the log lands where the catalog's files are, with the same credentials."""
    if depot is None or not isinstance(depot.storage, S3Storage):
        return StorageOptions()
    storage = depot.storage
    options = StorageOptions(AWS_REGION=storage.region)
    if storage.endpoint:
        options["AWS_ENDPOINT_URL"] = storage.endpoint
        if storage.endpoint.lower().startswith("http://"):
            options["AWS_ALLOW_HTTP"] = "true"
    for key, secret in zip(
        _SECRET_OPTIONS,
        (
            depot.secrets.aws_access_key,
            depot.secrets.aws_secret_key,
            depot.secrets.aws_session_token,
        ),
        strict=True,
    ):
        if secret:
            options[key] = secret.reveal()
    return options
