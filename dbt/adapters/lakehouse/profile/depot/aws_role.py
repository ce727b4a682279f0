"""An IAM role a depot's AWS clients act as: the `aws_role_*` keys, read and checked.

A depot's `secrets:` or the profile may name `aws_role_arn` (with `aws_external_id`,
`aws_role_session_name`, `aws_role_duration_seconds`); the profile's keys win over the depot's,
as `aws_region` does. The role is assumed with STS by the depot's keys, or, without keys, by
the default AWS chain (environment, web identity, instance profile). AWS_ROLE_ARN in the
environment is not read here: it belongs to web identity (EKS), which the default chain
handles. This module owns the keys, their checks and where STS is reached;
storage/s3/role_conf.py turns an `AwsRole` into Spark conf.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from dbt.adapters.lakehouse.profile.secrets import Secret

ROLE_KEYS = (
    "aws_role_arn",
    "aws_external_id",
    "aws_role_session_name",
    "aws_role_duration_seconds",
)
DEFAULT_SESSION_NAME = "dbt-lakehouse"
# STS's bounds for AssumeRole; a role's own maximum (1 h unless raised) may be lower.
MIN_DURATION_S = 900
MAX_DURATION_S = 43200
DEFAULT_DURATION_S = 3600
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"

_ARN_RE = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")
_SESSION_NAME_RE = re.compile(r"^[\w+=,.@-]{2,64}$")
_EXTERNAL_ID_RE = re.compile(r"^[\w+=,.@:/-]{2,1224}$")


@dataclass(frozen=True)
class AwsRole:
    """The role; `sts_endpoint` is where it is assumed (None: AWS's STS of `sts_region`)."""

    arn: str
    session_name: str = DEFAULT_SESSION_NAME
    duration_seconds: int = DEFAULT_DURATION_S
    external_id: Secret | None = None
    sts_endpoint: str | None = None
    sts_region: str | None = None

    @property
    def name(self) -> str:
        """The role's name, the part after `role/` (with its path)."""
        return self.arn.split(":role/", 1)[-1]


def resolve_role(
    depot_values: Mapping[str, Any],
    profile_values: Mapping[str, Any],
    *,
    region: str | None,
    s3_endpoint: str | None,
    uses_s3a: bool,
    problems: list[str],
) -> AwsRole | None:
    """The role the depot's clients assume, or None; records every problem in `problems`.

    `uses_s3a`: the depot's S3 goes through hadoop-aws s3a, whose AssumedRoleCredentialProvider
    (Hadoop 3.3.4) cannot send an external id.
    """
    values: dict[str, Any] = {}
    for source in (depot_values, profile_values):  # the profile's win
        values.update({k: source[k] for k in ROLE_KEYS if source.get(k) not in (None, "")})
    if not values:
        return None
    arn = str(values.get("aws_role_arn", "")).strip()
    if not arn:
        given = ", ".join(k for k in ROLE_KEYS if k in values)
        problems.append(
            f"AWS role options are set without aws_role_arn. Given: {given}. Accepted: "
            "aws_role_arn: arn:aws:iam::<account>:role/<name> (in the depot's secrets or the "
            "profile) beside them, or none of them."
        )
        return None
    ok = True
    if not _ARN_RE.match(arn):
        ok = False
        problems.append(
            f"aws_role_arn is not an IAM role ARN; got {arn[:120]!r}. Accepted: "
            "arn:aws:iam::<12-digit account>:role/<name>, e.g. "
            "arn:aws:iam::123456789012:role/lakehouse-writer."
        )
    session_name = str(values.get("aws_role_session_name", DEFAULT_SESSION_NAME)).strip()
    if not _SESSION_NAME_RE.match(session_name):
        ok = False
        problems.append(
            f"aws_role_session_name {session_name[:80]!r} is not a valid STS session name. "
            "Accepted: 2 to 64 characters of letters, digits and + = , . @ _ -."
        )
    duration = _duration(values.get("aws_role_duration_seconds"), problems)
    ok = ok and duration is not None
    external = values.get("aws_external_id")
    external_id = Secret(str(external).strip()) if external is not None else None
    if external_id is not None and not _EXTERNAL_ID_RE.match(external_id.reveal()):
        ok = False
        # The value is not echoed: an external id is a shared secret for many teams.
        problems.append(
            "aws_external_id is not a valid STS external id (value not shown). Accepted: 2 to "
            "1224 characters of letters, digits and + = , . @ : / _ -."
        )
    if external_id is not None and uses_s3a:
        ok = False
        problems.append(
            "aws_external_id cannot be used with S3 through hadoop-aws s3a (the default for "
            "rest, hadoop, jdbc and nessie catalogs): Hadoop 3.3.4's AssumedRoleCredentialProvider "
            "sends no external id, so STS would refuse every request. Accepted: add "
            f"catalog.properties.io-impl: {S3_FILE_IO} to the depot (Iceberg's S3FileIO assumes "
            "the role with the external id), or use a role whose trust policy needs none."
        )
    if not ok or duration is None:
        return None
    return AwsRole(
        arn=arn,
        session_name=session_name,
        duration_seconds=duration,
        external_id=external_id,
        sts_endpoint=sts_endpoint_for(s3_endpoint),
        sts_region=region,
    )


def sts_endpoint_for(s3_endpoint: str | None) -> str | None:
    """Where STS is: an S3-compatible store's own endpoint (MinIO, moto and Ceph answer STS
    there), else AWS's regional STS (None: the SDK's default for the region)."""
    if not s3_endpoint:
        return None
    host = (urlsplit(s3_endpoint).hostname or "").lower()
    if host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn"):
        return None
    return s3_endpoint


def _duration(value: Any, problems: list[str]) -> int | None:
    if value is None:
        return DEFAULT_DURATION_S
    text = str(value).strip()
    seconds = int(text) if text.isdigit() else None
    if seconds is None or not MIN_DURATION_S <= seconds <= MAX_DURATION_S:
        problems.append(
            f"aws_role_duration_seconds must be a whole number of seconds from {MIN_DURATION_S} "
            f"to {MAX_DURATION_S}; got {text[:40]!r}. Accepted: e.g. 3600 (the default); the "
            "role's own maximum session duration also applies."
        )
        return None
    return seconds
