"""Engine errors of a depot whose AWS clients act as an IAM role: who was refused, and where.

An S3 403 from a role's credentials names neither the role nor, with S3FileIO, the bucket; this
module adds both (from the session's CatalogContexts, never from a secret) and tells an STS
refusal to assume the role apart from S3 refusing the role.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol


class RoleCatalog(Protocol):
    """What this module reads of a session's catalog (diagnosis.py's CatalogContext), named
    here so the module that calls it is not imported back, even for types."""

    @property
    def name(self) -> str: ...
    @property
    def depot(self) -> str: ...
    @property
    def bucket(self) -> str | None: ...
    @property
    def role_arn(self) -> str | None: ...


_BUCKET_IN_PATH = re.compile(r"s3a?://(?P<bucket>[A-Za-z0-9][A-Za-z0-9._-]*)[^\s:,;)'\"]*")
# SDK v1 (s3a) and v2 (Iceberg) name STS's refusal with the action or the service.
_STS_REFUSED = (
    "sts:AssumeRole",
    "Service: AWSSecurityTokenService",
    "Service: Sts",
    "StsException",
)


def explain_role_denied(explained: str, text: str, catalogs: Mapping[str, RoleCatalog]) -> str:
    """`explained` (the plain 403 explanation) with the role and bucket, when a catalog of the
    session has a role; else `explained` unchanged."""
    with_role = [c for c in catalogs.values() if c.role_arn]
    if not with_role:
        return explained
    found = _BUCKET_IN_PATH.search(text)
    bucket = found.group("bucket") if found else None
    matching = [c for c in with_role if bucket is None or c.bucket == bucket]
    if len(matching) != 1:
        return explained
    context = matching[0]
    bucket = bucket or context.bucket
    where = f"catalog `{context.name}`, depot '{context.depot}'"
    if any(marker in text for marker in _STS_REFUSED):
        return (
            f"AWS STS refused to let the depot's credentials assume role {context.role_arn} "
            f"({where}), so no request to bucket '{bucket}' could be signed. Fix: the role's "
            "trust policy must allow the principal that assumes it (the depot's keys, or the "
            "default AWS chain's), and its sts:ExternalId condition must equal aws_external_id; "
            "`dbt debug` assumes the role and says which."
        )
    # The plain explanation blames the depot's keys; here they only assume the role.
    on = f" ({found.group(0)})" if found else ""
    code = ", AccessDenied" if "AccessDenied" in text else ""
    return (
        f"S3 refused role {context.role_arn} ({where}) on bucket '{bucket}'{on} (403{code}): "
        "the role lacks the permission. Fix: the role's permissions policy must allow "
        f"s3:ListBucket on arn:aws:s3:::{bucket} and s3:GetObject, s3:PutObject and "
        f"s3:DeleteObject on arn:aws:s3:::{bucket}/<prefix>*, with no bucket policy denying "
        "it; `dbt debug` checks them as the role."
    )
