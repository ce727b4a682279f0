"""`dbt debug` with a depot's IAM role: STS is asked first, then S3 is checked as the role."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.preflight import run_preflight

ACCESS_KEY = "AKIAROLEPREFLIGHT1"
SECRET_KEY = "rolePreflightSecret-7f"
EXTERNAL_ID = "xid-preflight-5e4d"
TEMP_KEY = "ASIATEMPROLEKEY0001"
TEMP_SECRET = "tempRoleSecret-a1b2c3"
TEMP_TOKEN = "tempRoleToken-d4e5f6"
HIDDEN = (ACCESS_KEY, SECRET_KEY, EXTERNAL_ID, TEMP_KEY, TEMP_SECRET, TEMP_TOKEN)
ARN = "arn:aws:iam::123456789012:role/writer"
KEYS = DepotSecrets(aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY))
S3 = S3Storage("lake-bucket", "wh", "us-east-1", "http://127.0.0.1:9")


def role_depot(external_id: str | None = EXTERNAL_ID, secrets: DepotSecrets = KEYS) -> Depot:
    role = AwsRole(
        ARN,
        "dbt",
        900,
        Secret(external_id) if external_id else None,
        "http://127.0.0.1:9",
        "us-east-1",
    )
    return Depot("lake", S3, CatalogSpec("hadoop"), secrets, "test", aws_role=role)


def client_error(code: str, message: str, status: int = 403) -> ClientError:
    response = {"Error": {"Code": code, "Message": message}}
    response["ResponseMetadata"] = {"HTTPStatusCode": status, "HTTPHeaders": {}}  # type: ignore[assignment]
    return ClientError(response, "AssumeRole")  # type: ignore[arg-type]


class ScriptedSts:
    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure
        self.requests: list[dict[str, Any]] = []

    def assume_role(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        if self.failure is not None:
            raise self.failure
        return {
            "Credentials": {
                "AccessKeyId": TEMP_KEY,
                "SecretAccessKey": TEMP_SECRET,
                "SessionToken": TEMP_TOKEN,
            }
        }


class DenyingS3:
    """Refuses ListBucket, echoing every key it was given into the message, as a careless
    store might: the report must still show none of them."""

    def __init__(self, secrets: DepotSecrets) -> None:
        self.secrets = secrets

    def list_objects_v2(self, **kwargs: Any) -> Any:
        given = " ".join(s.reveal() for s in (self.secrets.aws_access_key,) if s)
        raise client_error("AccessDenied", f"denied for {given}")


def preflight(sts: ScriptedSts, seen: list[DepotSecrets], depot: Depot) -> PreflightReport:
    def s3_factory(storage: S3Storage, secrets: DepotSecrets, timeout: float) -> Any:
        seen.append(secrets)
        return DenyingS3(secrets)

    return run_preflight(
        depot,
        s3_client_factory=s3_factory,
        sts_client_factory=lambda role, secrets, timeout: sts,
        timeout=2.0,
    )


def assert_hidden(report: PreflightReport) -> None:
    text = "\n".join(report.passed + report.problems)
    for value in HIDDEN:
        assert value not in text, value


def test_s3_is_checked_as_the_role_and_its_403_names_role_and_bucket() -> None:
    sts, seen = ScriptedSts(), []
    report = preflight(sts, seen, role_depot())
    assert sts.requests == [
        {
            "RoleArn": ARN,
            "RoleSessionName": "dbt",
            "DurationSeconds": 900,
            "ExternalId": EXTERNAL_ID,
        }
    ]
    assert [s.aws_access_key.reveal() for s in seen if s.aws_access_key] == [TEMP_KEY]
    assert seen[0].aws_session_token and seen[0].aws_session_token.reveal() == TEMP_TOKEN
    assert any(line.startswith(f"Assumed role {ARN} with STS at") for line in report.passed)
    (problem,) = report.problems
    assert "S3 denied s3:ListBucket on s3://lake-bucket/wh/" in problem
    assert f"to role {ARN}" in problem and "arn:aws:s3:::lake-bucket" in problem
    assert_hidden(report)


def test_a_wrong_external_id_stops_at_sts_naming_the_fix() -> None:
    refusal = client_error(
        "AccessDenied",
        "User: arn:aws:iam::123456789012:user/base is not authorized to perform: sts:AssumeRole",
    )
    seen: list[DepotSecrets] = []
    report = preflight(ScriptedSts(refusal), seen, role_depot())
    assert seen == []  # no S3 check without the role
    (problem,) = report.problems
    assert f"STS refused to let the depot's aws_access_key assume role {ARN}" in problem
    assert "correct aws_external_id" in problem and "(value not shown)" in problem
    assert_hidden(report)


def test_without_an_external_id_the_fix_mentions_the_trust_policy() -> None:
    report = preflight(ScriptedSts(client_error("AccessDenied", "no")), [], role_depot(None))
    assert "allow this principal in the role's trust policy" in report.problems[0]


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (NoCredentialsError(), "No AWS credentials to assume role"),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:9"), "STS is unreachable"),
        (client_error("InvalidClientTokenId", "bad"), "they are not valid"),
        (client_error("ValidationError", "too long", 400), "maximum session duration"),
    ],
)
def test_sts_failures_are_explained(failure: Exception, expected: str) -> None:
    report = preflight(ScriptedSts(failure), [], role_depot(secrets=DepotSecrets()))
    assert expected in report.problems[0], report.problems
    assert_hidden(report)


def test_without_a_role_s3_is_checked_with_the_keys() -> None:
    seen: list[DepotSecrets] = []
    plain = Depot("lake", S3, CatalogSpec("hadoop"), KEYS, "test")
    report = preflight(ScriptedSts(), seen, plain)
    assert seen == [KEYS]
    assert "to these credentials" in report.problems[0]
