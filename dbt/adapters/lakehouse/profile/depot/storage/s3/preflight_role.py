"""The preflight of a depot's IAM role: STS lets the depot's credentials assume it.

The role is assumed once, as the engine will (same ARN, session name, duration, external id,
STS endpoint and region), and the S3 checks then run with the role's temporary credentials, so
`dbt debug` tests what the role may do, not what the keys that assume it may do. Each failure
STS can answer with is explained with its fix. The STS client is injected (`StsClientFactory`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.depot.model import DepotSecrets
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport, first_line
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight import boto3_session
from dbt.adapters.lakehouse.profile.secrets import Secret

StsClientFactory = Callable[[AwsRole, DepotSecrets, float], Any]


def boto3_sts_client(role: AwsRole, secrets: DepotSecrets, timeout: float) -> Any:
    """An STS client signing with the depot's keys, or the default AWS chain without them."""
    from botocore.config import Config

    session = boto3_session(secrets, role.sts_region)
    config = Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 2})
    return session.client("sts", endpoint_url=role.sts_endpoint, config=config)


def assume_for_checks(
    role: AwsRole,
    secrets: DepotSecrets,
    client_factory: StsClientFactory,
    timeout: float,
    report: PreflightReport,
) -> DepotSecrets | None:
    """The role's temporary credentials, or None (the reason is in `report.problems`)."""
    request: dict[str, Any] = {
        "RoleArn": role.arn,
        "RoleSessionName": role.session_name,
        "DurationSeconds": role.duration_seconds,
    }
    if role.external_id:
        request["ExternalId"] = role.external_id.reveal()
    try:
        credentials = client_factory(role, secrets, timeout).assume_role(**request)["Credentials"]
    except Exception as exc:
        report.problems.append(role_problem(exc, role, secrets, timeout))
        return None
    where = f" at {role.sts_endpoint}" if role.sts_endpoint else ""
    report.passed.append(
        f"Assumed role {role.arn} with STS{where} (session {role.session_name}, "
        f"{role.duration_seconds} s); the S3 checks below run as the role"
    )
    return DepotSecrets(
        aws_access_key=Secret(credentials["AccessKeyId"]),
        aws_secret_key=Secret(credentials["SecretAccessKey"]),
        aws_session_token=Secret(credentials["SessionToken"]),
    )


def role_problem(exc: Exception, role: AwsRole, secrets: DepotSecrets, timeout: float) -> str:
    """What an AssumeRole failure means, with the fix; no key, token or external id in it."""
    from botocore.exceptions import (
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        ReadTimeoutError,
    )

    arn = role.arn
    by = (
        "the depot's aws_access_key"
        if secrets.aws_access_key
        else "the default AWS credential chain (environment, web identity, instance profile)"
    )
    if isinstance(exc, NoCredentialsError):
        return (
            f"No AWS credentials to assume role {arn} with: the depot has no aws_access_key / "
            "aws_secret_key and the default AWS chain found none. Fix: add the keys of a user "
            "allowed to assume the role to the depot's secrets, or run where the chain finds "
            "credentials (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN on EKS, an instance profile)."
        )
    if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)):
        sts = role.sts_endpoint or f"AWS STS in {role.sts_region}"
        return (
            f"STS is unreachable: {sts} did not answer AssumeRole for role {arn} within "
            f"{timeout:g}s ({type(exc).__name__}). Fix: check the network (proxy, firewall, a "
            "VPC endpoint for STS) and, for an S3-compatible store, that it serves STS at "
            "spec.s3.endpoint."
        )
    if not isinstance(exc, ClientError):
        return f"AssumeRole for role {arn} failed: {type(exc).__name__}: {first_line(exc)}"
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    said = str(error.get("Message", "")).strip().splitlines()[0:1]
    aws_says = f" (STS said: {code}{': ' + said[0][:300] if said else ''})"
    if code == "AccessDenied":
        if role.external_id:
            fix = (
                "the depot's aws_external_id (value not shown) must equal the sts:ExternalId "
                "condition of the role's trust policy: correct aws_external_id in the depot's "
                "secrets or the profile, and check that the trust policy names this principal"
            )
        else:
            fix = (
                "allow this principal in the role's trust policy (Principal and Action "
                "sts:AssumeRole), give it sts:AssumeRole on the role in its own policy, and, if "
                "the trust policy has an sts:ExternalId condition, set aws_external_id"
            )
        return f"STS refused to let {by} assume role {arn}{aws_says}. Fix: {fix}."
    if code in ("InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken"):
        return (
            f"STS refused the credentials that assume role {arn}{aws_says}: they are not "
            "valid. Fix: correct the depot's aws_access_key / aws_secret_key (and "
            "aws_session_token if temporary), or the credentials the default chain finds."
        )
    if code == "ValidationError":
        return (
            f"STS refused AssumeRole for role {arn}{aws_says}. Fix: keep "
            "aws_role_duration_seconds within the role's maximum session duration (1 h unless "
            "raised), and check aws_role_arn and aws_role_session_name."
        )
    return f"AssumeRole for role {arn} failed{aws_says}."
