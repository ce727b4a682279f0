"""A moto server that enforces IAM, with a user that may assume two roles: one whose policy
allows the server's bucket, one with no S3 permission. Both trust the user only with the
right external id (moto checks a trust policy's sts:ExternalId condition).

The accounts, roles and bucket are made while moto still accepts every request; then
`/moto-api/reset-auth` with 0 turns enforcement on, so every later request (S3, STS, IAM) is
signed and checked against the caller's policies. `admin_client` holds keys allowed anything,
for the tests' own looks into the bucket.
"""

from __future__ import annotations

import json
import secrets
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from functional.infra.servers import S3Server

ACCOUNT = "123456789012"  # moto's default account


def _policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


@dataclass
class IamS3Server(S3Server):
    """moto with IAM enforced: `base_*` keys assume `writer_role` / `denied_role`."""

    bucket: str = "lakehouse-role-test"
    external_id: str = field(default_factory=lambda: "xid-" + secrets.token_hex(8))
    base_access_key: str = ""
    base_secret_key: str = ""
    admin_keys: tuple[str, str] = ("", "")

    @property
    def writer_role(self) -> str:
        return f"arn:aws:iam::{ACCOUNT}:role/lakehouse-writer"

    @property
    def denied_role(self) -> str:
        return f"arn:aws:iam::{ACCOUNT}:role/lakehouse-no-s3"

    def start(self) -> IamS3Server:
        super().start()  # creates the bucket, while moto accepts any key
        iam = self._boto("iam", self.access_key, self.secret_key)
        admin = self._user(iam, "admin", {"Effect": "Allow", "Action": "*", "Resource": "*"})
        self.admin_keys = admin
        allow_assume = {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}
        self.base_access_key, self.base_secret_key = self._user(iam, "dbt-base", allow_assume)
        trust = _policy(
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/dbt-base"},
                "Action": "sts:AssumeRole",
                "Condition": {"StringEquals": {"sts:ExternalId": self.external_id}},
            }
        )
        bucket_arn = f"arn:aws:s3:::{self.bucket}"
        for name, statements in (
            (
                "lakehouse-writer",
                [
                    {
                        "Effect": "Allow",
                        "Action": "s3:*",
                        "Resource": [bucket_arn, f"{bucket_arn}/*"],
                    }
                ],
            ),
            (
                "lakehouse-no-s3",
                [{"Effect": "Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"}],
            ),
        ):
            iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust)
            iam.put_role_policy(RoleName=name, PolicyName="s3", PolicyDocument=_policy(*statements))
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request, timeout=10).close()
        return self

    def admin_client(self) -> Any:
        return self.client(
            aws_access_key_id=self.admin_keys[0], aws_secret_access_key=self.admin_keys[1]
        )

    def _user(self, iam: Any, name: str, statement: dict[str, Any]) -> tuple[str, str]:
        iam.create_user(UserName=name)
        iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=_policy(statement))
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return key["AccessKeyId"], key["SecretAccessKey"]

    def _boto(self, service: str, access_key: str, secret_key: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
        )
