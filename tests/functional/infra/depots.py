"""Inline depots for tests: the mapping a profile's `depot:` takes, for an S3 store."""

from __future__ import annotations

from typing import Any


def inline_depot(
    *,
    bucket: str,
    endpoint: str,
    access_key: str,
    secret_key: str,
    catalog: dict[str, Any],
    region: str = "us-east-1",
    apikey: str | None = None,
    session_token: str | None = None,
    prefix: str = "faults",
) -> dict[str, Any]:
    depot_secrets = {"aws_access_key": access_key, "aws_secret_key": secret_key}
    if apikey is not None:
        depot_secrets["apikey"] = apikey
    if session_token is not None:
        depot_secrets["aws_session_token"] = session_token
    return {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {
                "bucket": bucket,
                "relativePath": prefix,
                "region": region,
                "endpoint": endpoint,
            },
        },
        "catalog": catalog,
        "secrets": depot_secrets,
    }
