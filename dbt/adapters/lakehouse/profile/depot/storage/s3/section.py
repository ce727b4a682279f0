"""An S3 depot's `spec.s3` section read into the draft, and its storage resolved: the region
and endpoint by precedence (the profile's aws_region / aws_endpoint, the depot, then the AWS
variables), each checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.profile.depot.draft import (
    _bucket_and_prefix,
    _Draft,
    _first,
    _opt_str,
)
from dbt.adapters.lakehouse.profile.depot.model import S3Storage, _Context
from dbt.adapters.lakehouse.profile.secrets import safe_url

SECTION_KEYS = ("bucket", "relativePath", "region", "endpoint")


def read_s3_section(
    section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
) -> None:
    _bucket_and_prefix(section, draft, where, problems)
    draft.region = _opt_str(section, "region", where, problems)
    draft.endpoint = _opt_str(section, "endpoint", where, problems)


def resolve_s3_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> S3Storage | None:
    region, _ = _first(
        ("profile aws_region", ctx.aws_region),
        ("depot spec.s3.region", draft.region),
        ("AWS_REGION", ctx.getenv("AWS_REGION")),
        ("AWS_DEFAULT_REGION", ctx.getenv("AWS_DEFAULT_REGION")),
    )
    endpoint, endpoint_from = _first(
        ("profile aws_endpoint", ctx.aws_endpoint),
        ("depot spec.s3.endpoint", draft.endpoint),
        ("AWS_ENDPOINT", ctx.getenv("AWS_ENDPOINT")),
    )
    ok = True
    if region is None:
        ok = False
        problems.append(
            "S3 storage needs an AWS region, and none is set. Given: no profile aws_region, no "
            "depot spec.s3.region, no AWS_REGION (or AWS_DEFAULT_REGION) environment variable. "
            "Accepted: set one of those three, e.g. us-east-1 (S3-compatible stores such as "
            "MinIO accept us-east-1)."
        )
    if endpoint is not None and not endpoint.lower().startswith(("http://", "https://")):
        ok = False
        problems.append(
            f"The S3 endpoint from {endpoint_from} is not an http(s) URL; got "
            f"{safe_url(endpoint)!r}. Accepted: http://host:port or https://host."
        )
    if not ok or draft.bucket is None or region is None:
        return None
    return S3Storage(
        bucket=draft.bucket,
        relative_path=draft.relative_path,
        region=region,
        endpoint=endpoint.rstrip("/") if endpoint else None,
    )
