"""The aws_role_* keys: read from a depot's secrets or the profile, checked, and kept secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import Depot, resolve_depot
from dbt.adapters.lakehouse.profile.depot.aws_role import sts_endpoint_for

ARN = "arn:aws:iam::123456789012:role/lakehouse-writer"
EXTERNAL_ID = "xid-fake-7c1e2b"
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"


def entry(secrets: dict[str, Any], endpoint: str | None = None, **catalog: Any) -> dict[str, Any]:
    s3 = {"bucket": "b", "relativePath": "wh", "region": "eu-west-1"}
    if endpoint:
        s3["endpoint"] = endpoint
    return {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": s3},
        "catalog": {"type": "jdbc", "uri": "jdbc:h2:mem:x", **catalog},
        "secrets": secrets,
    }


def resolve(depot: dict[str, Any], tmp_path: Path, **role: Any) -> Depot:
    return resolve_depot(
        depot=depot,
        depots_file=None,
        warehouse=None,
        aws_region=None,
        aws_endpoint=None,
        env={},
        cwd=tmp_path,
        home=tmp_path,
        aws_role=role,
    )


def s3fileio() -> dict[str, Any]:
    return {"properties": {"io-impl": S3_FILE_IO}}


def test_role_from_the_depot_secrets(tmp_path: Path) -> None:
    secrets = {
        "aws_role_arn": ARN,
        "aws_external_id": EXTERNAL_ID,
        "aws_role_session_name": "nightly",
        "aws_role_duration_seconds": 1800,
    }
    role = resolve(entry(secrets, **s3fileio()), tmp_path).aws_role
    assert role is not None
    assert (role.arn, role.session_name, role.duration_seconds) == (ARN, "nightly", 1800)
    assert role.external_id is not None and role.external_id.reveal() == EXTERNAL_ID
    assert role.sts_endpoint is None and role.sts_region == "eu-west-1"
    assert EXTERNAL_ID not in repr(role)


def test_no_role_keys_no_role(tmp_path: Path) -> None:
    assert resolve(entry({}), tmp_path).aws_role is None


def test_the_profile_wins_over_the_depot(tmp_path: Path) -> None:
    other = "arn:aws:iam::210987654321:role/other"
    depot = entry({"aws_role_arn": ARN, "aws_role_session_name": "from-depot"})
    role = resolve(depot, tmp_path, aws_role_arn=other).aws_role
    assert role is not None and role.arn == other and role.session_name == "from-depot"


def test_defaults(tmp_path: Path) -> None:
    role = resolve(entry({"aws_role_arn": ARN}), tmp_path).aws_role
    assert role is not None
    assert (role.session_name, role.duration_seconds, role.external_id) == (
        "dbt-lakehouse",
        3600,
        None,
    )


def test_every_problem_at_once_and_no_external_id_echoed(tmp_path: Path) -> None:
    secrets = {
        "aws_role_arn": "arn:aws:iam::12:user/me",
        "aws_role_session_name": "has spaces",
        "aws_role_duration_seconds": "60",
        "aws_external_id": "bad id " + EXTERNAL_ID,
    }
    with pytest.raises(DepotConfigError) as raised:
        resolve(entry(secrets, **s3fileio()), tmp_path)
    text = raised.value.msg
    assert "has 4 problems" in text, text
    assert "is not an IAM role ARN" in text
    assert "not a valid STS session name" in text
    assert "from 900 to 43200" in text
    assert "aws_external_id is not a valid STS external id (value not shown)" in text
    assert EXTERNAL_ID not in text


def test_options_without_an_arn_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError, match="without aws_role_arn"):
        resolve(entry({"aws_role_session_name": "x1"}), tmp_path)


def test_external_id_with_s3a_is_refused_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError) as raised:
        resolve(entry({"aws_role_arn": ARN, "aws_external_id": EXTERNAL_ID}), tmp_path)
    text = raised.value.msg
    assert "Hadoop 3.3.4's AssumedRoleCredentialProvider sends no external id" in text
    assert f"catalog.properties.io-impl: {S3_FILE_IO}" in text
    assert EXTERNAL_ID not in text


def test_external_id_with_glue_is_accepted(tmp_path: Path) -> None:
    depot = entry({"aws_role_arn": ARN, "aws_external_id": EXTERNAL_ID})
    depot["catalog"] = {"type": "glue"}
    role = resolve(depot, tmp_path).aws_role
    assert role is not None and role.external_id


def non_s3_spec(storage_type: str, tmp_path: Path) -> dict[str, Any]:
    sections = {
        "file": {"path": str(tmp_path / "wh")},
        "gcs": {"bucket": "lake-bucket", "relativePath": "wh"},
        "abfss": {"account": "mylakehouse", "container": "lake", "relativePath": "wh"},
    }
    return {"storageType": storage_type, storage_type: sections[storage_type]}


@pytest.mark.parametrize("storage_type", ["file", "gcs", "abfss"])
def test_a_role_in_the_secrets_needs_s3_storage(storage_type: str, tmp_path: Path) -> None:
    """Refused, not left unused: no client of these kinds would ever assume the role."""
    depot = {
        "type": "lakehouse",
        "spec": non_s3_spec(storage_type, tmp_path),
        "catalog": {"type": "hadoop"},
        "secrets": {"aws_role_arn": ARN},
    }
    expected = f"aws_role_arn needs S3 storage; got storageType {storage_type}"
    with pytest.raises(DepotConfigError, match=expected):
        resolve(depot, tmp_path)


def test_the_external_id_is_a_secret_of_the_depot(tmp_path: Path) -> None:
    depot = resolve(
        entry({"aws_role_arn": ARN, "aws_external_id": EXTERNAL_ID}, **s3fileio()), tmp_path
    )
    assert EXTERNAL_ID in depot.secret_values()
    assert EXTERNAL_ID not in repr(depot)


def test_unknown_role_key_gets_the_nearest_one(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError, match="Did you mean 'aws_role_arn'"):
        resolve(entry({"aws_role_ar": ARN}), tmp_path)


@pytest.mark.parametrize(
    ("endpoint", "sts"),
    [
        (None, None),
        ("https://s3.eu-west-1.amazonaws.com", None),
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("https://minio.internal", "https://minio.internal"),
    ],
)
def test_sts_is_the_store_s_own_endpoint_unless_aws(endpoint: str | None, sts: str | None) -> None:
    assert sts_endpoint_for(endpoint) == sts


def test_profile_keys_reach_resolution_and_the_external_id_is_not_shown() -> None:
    creds = LakehouseCredentials(
        database="lakehouse",
        schema="s",
        aws_role_arn=ARN,
        aws_external_id=EXTERNAL_ID,
        aws_role_duration_seconds=900,
    )
    assert creds.role_options() == {
        "aws_role_arn": ARN,
        "aws_external_id": EXTERNAL_ID,
        "aws_role_duration_seconds": 900,
    }
    shown = dict(creds.connection_info())
    assert shown["aws_role_arn"] == ARN
    assert "aws_external_id" not in shown and EXTERNAL_ID not in repr(creds)


@pytest.mark.parametrize("storage_type", ["file", "gcs", "abfss"])
def test_a_profile_role_with_a_depot_not_on_s3_is_refused(
    storage_type: str, tmp_path: Path
) -> None:
    depot = {
        "type": "lakehouse",
        "spec": non_s3_spec(storage_type, tmp_path),
        "catalog": {"type": "hadoop"},
    }
    expected = f"aws_role_arn needs S3 storage; got storageType {storage_type}"
    with pytest.raises(DepotConfigError, match=expected):
        resolve(depot, tmp_path, aws_role_arn=ARN)


def test_a_profile_role_without_a_depot_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError, match="names an AWS role .* but it has no depot"):
        resolve_depot(
            depot=None,
            depots_file=None,
            warehouse=str(tmp_path / "wh"),
            aws_region=None,
            aws_endpoint=None,
            env={},
            cwd=tmp_path,
            home=tmp_path,
            aws_role={"aws_role_arn": ARN},
        )
