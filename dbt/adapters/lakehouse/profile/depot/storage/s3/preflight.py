"""The preflight of S3 storage, with boto3: the bucket exists and answers, its region is the
configured one, and the credentials may list, write and delete under the prefix (a tiny probe
object, removed again). Each failure S3 can answer with is explained with its fix. The client
is injected (`S3ClientFactory`), so the checks are tested without the outside world.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from dbt.adapters.lakehouse.profile.depot.model import DepotSecrets, S3Storage
from dbt.adapters.lakehouse.profile.depot.storage.report import StoreChecks, first_line, reveal

PROBE_NAME = ".dbt-lakehouse-preflight"

S3ClientFactory = Callable[[S3Storage, DepotSecrets, float], Any]


def boto3_session(secrets: DepotSecrets, region: str | None) -> Any:
    """A boto3 session signing with the depot's keys, or the default AWS chain without them."""
    import boto3

    return boto3.session.Session(
        aws_access_key_id=reveal(secrets.aws_access_key),
        aws_secret_access_key=reveal(secrets.aws_secret_key),
        aws_session_token=reveal(secrets.aws_session_token),
        region_name=region,
    )


def boto3_s3_client(storage: S3Storage, secrets: DepotSecrets, timeout: float) -> Any:
    """An S3 client configured like the JVM's s3a: same region, endpoint, path style, keys."""
    from botocore.config import Config

    session = boto3_session(secrets, storage.region)
    config = Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"max_attempts": 2, "mode": "standard"},
        s3={"addressing_style": "path"} if storage.endpoint else None,
        # Like s3a, send checksums only where S3 requires them: botocore >= 1.36 adds CRC
        # headers to every upload by default, which S3-compatible stores (S3Proxy, older
        # MinIO, Ceph) refuse with 501 NotImplemented, a false preflight failure.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return session.client("s3", endpoint_url=storage.endpoint, config=config)


class S3Checks(StoreChecks[S3Storage, S3ClientFactory]):
    """Bucket, region, and list/write/delete permission on the prefix, in that order.

    A later check only runs when the earlier ones passed: with no bucket, "cannot write" would
    only repeat the first problem.
    """

    # Whom the checks act as, in their messages (the kind names an IAM role it assumed).
    principal = "these credentials"

    @property
    def bucket(self) -> str:
        return self.storage.bucket

    def run(self) -> None:
        try:
            client = self.client(self.storage, self.secrets, self.timeout)
        except Exception as exc:  # boto3 refuses e.g. a malformed endpoint before any request
            self.report.problems.append(
                f"Cannot create an S3 client for bucket '{self.bucket}'{self.where}: "
                f"{first_line(exc)}. Fix: check spec.s3.endpoint / aws_endpoint and region."
            )
            return
        if not self._list(client):
            return
        self._region(client)
        self._write_and_delete(client)

    def _list(self, client: Any) -> bool:
        try:
            client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
        except Exception as exc:
            self.report.problems.append(self._s3_problem(exc, "ListBucket", self.location))
            return False
        self.report.passed.append(
            f"S3 bucket '{self.bucket}'{self.where} is reachable; ListBucket on {self.location} "
            "is allowed"
        )
        return True

    def _region(self, client: Any) -> None:
        actual = self._bucket_region(client)
        configured = self.storage.region
        if actual is None:
            self.report.passed.append(
                f"S3 bucket region: not reported by the store (configured: {configured})"
            )
        elif actual != configured:
            self.report.problems.append(
                f"Bucket '{self.bucket}' is in region {actual}, but the depot is configured for "
                f"region {configured}. Spark's S3 client signs for the configured region, so "
                f"requests fail or are redirected. Fix: set spec.s3.region: {actual} in the depot "
                f"(or profile aws_region: {actual}, which takes precedence)."
            )
        else:
            self.report.passed.append(
                f"S3 bucket '{self.bucket}' is in the configured region {configured}"
            )

    def _bucket_region(self, client: Any) -> str | None:
        try:
            response = client.head_bucket(Bucket=self.bucket)
        except Exception as exc:
            response = getattr(exc, "response", None) or {}
        headers = response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        region = headers.get("x-amz-bucket-region")
        if region:
            return str(region)
        try:
            location = client.get_bucket_location(Bucket=self.bucket)
        except Exception:
            return None  # not allowed or not implemented: the region stays unverified
        # S3 reports us-east-1 as an empty constraint and, historically, eu-west-1 as "EU".
        constraint = location.get("LocationConstraint") or "us-east-1"
        return "eu-west-1" if constraint == "EU" else str(constraint)

    def _write_and_delete(self, client: Any) -> None:
        key = f"{self.prefix}{PROBE_NAME}-{uuid.uuid4().hex[:12]}"
        probe = f"s3://{self.bucket}/{key}"
        try:
            client.put_object(Bucket=self.bucket, Key=key, Body=b"")
        except Exception as exc:
            self.report.problems.append(self._s3_problem(exc, "PutObject", self.location))
            return
        try:
            client.delete_object(Bucket=self.bucket, Key=key)
        except Exception as exc:
            self.report.problems.append(
                self._s3_problem(exc, "DeleteObject", self.location)
                + f"\nThe probe object {probe} (empty) was left behind; remove it by hand."
            )
            return
        self.report.passed.append(
            f"PutObject and DeleteObject on {self.location} are allowed (probe object removed)"
        )

    def _s3_problem(self, exc: Exception, action: str, location: str) -> str:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
        )

        bucket = self.bucket
        if isinstance(exc, NoCredentialsError):
            return (
                f"No AWS credentials for s3:{action} on {location}: the depot has no "
                "aws_access_key/aws_secret_key and the default AWS chain found none. Fix: add "
                "secrets.aws_access_key and secrets.aws_secret_key to the depot, or set "
                "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY."
            )
        if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)):
            endpoint = self.storage.endpoint or f"AWS S3 in {self.storage.region}"
            return (
                f"S3 is unreachable: {endpoint} did not answer s3:{action} on {location} "
                f"within {self.timeout:g}s ({type(exc).__name__}). Fix: check spec.s3.endpoint "
                "/ aws_endpoint, that the store is running, and the network (proxy, firewall)."
            )
        if isinstance(exc, BotoCoreError):
            return f"S3 s3:{action} on {location} failed: {first_line(exc)}."
        if not isinstance(exc, ClientError):
            return f"S3 s3:{action} on {location} failed: {type(exc).__name__}: {first_line(exc)}"
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = str(error.get("Message", "")).strip()
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        aws_says = f" (S3 said: {code}{': ' + message if message else ''})" if code else ""
        if code in ("NoSuchBucket", "404") and action == "ListBucket":
            return (
                f"Bucket '{bucket}' does not exist{self.where} (NoSuchBucket). Given: "
                f"spec.s3.bucket: {bucket}. Fix: create the bucket, or correct spec.s3.bucket "
                "in the depot (the bucket name only; the folder goes in relativePath)."
            )
        if code in (
            "PermanentRedirect",
            "AuthorizationHeaderMalformed",
            "301",
            "IllegalLocationConstraintException",
        ):
            headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
            actual = headers.get("x-amz-bucket-region") or error.get("Region")
            where = f"region {actual}" if actual else "another region"
            fix_region = actual or "<the bucket's region>"
            return (
                f"Bucket '{bucket}' is in {where}, but the depot is configured for region "
                f"{self.storage.region}{aws_says}. Fix: set spec.s3.region: {fix_region} in "
                f"the depot (or profile aws_region: {fix_region})."
            )
        if code == "SignatureDoesNotMatch":
            return (
                f"S3 refused s3:{action} on {location} with 403: the secret key does not match "
                f"the access key (SignatureDoesNotMatch). Fix: correct secrets.aws_secret_key "
                "in the depot (or AWS_SECRET_ACCESS_KEY)."
            )
        if code in ("InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "TokenRefreshRequired"):
            return (
                f"S3 refused s3:{action} on {location}: the credentials are not valid{aws_says}. "
                "Fix: correct secrets.aws_access_key (or AWS_ACCESS_KEY_ID), and renew "
                "aws_session_token if the credentials are temporary."
            )
        if status == 403 or code in ("AccessDenied", "403", "AllAccessDisabled"):
            return (
                f"S3 denied s3:{action} on {location} (403{_named(code)}). "
                f"Fix: grant s3:{action} on arn:aws:s3:::{bucket}"
                + ("" if action == "ListBucket" else f"/{self.prefix}*")
                + f" to {self.principal} (dbt-lakehouse needs s3:ListBucket, s3:GetObject, "
                "s3:PutObject and s3:DeleteObject on the prefix), or use keys that have it."
            )
        return f"S3 s3:{action} on {location} failed with HTTP {status}{aws_says}."


def _named(code: str) -> str:
    return "" if code in ("", "403") else f", {code}"
