"""Fault and bad-input cases of the production depot path, each asserting the message a user gets.

Real `dbt debug` / `dbt run` invocations against the real test servers (moto S3 and the Iceberg
REST catalog of tests/functional/infra/). `dbt debug` runs the preflight before Spark starts, so
most cases cost no SparkSession; the `dbt run` cases restart the shared session with the broken
depot, and the next test's run restores the good one.

Wrong secret key: moto accepts any key pair unless IAM authentication is switched on, which is
server-wide (it would break every other test on the shared server). So these cases get their own
moto server, with IAM users, switched to authenticating every request (`/moto-api/reset-auth`).
Its signature check works for boto3 (the preflight gets a real SignatureDoesNotMatch, and a real
AccessDenied for a read-only user), but it rejects every request the JVM's AWS SDK v1 (s3a)
signs, even with the right key (moto recomputes the signature over a HEAD request's
Content-Type differently). So the `dbt run` case below proves that a 403 during a run is
reported with its action and path; it cannot also prove that the right key passes there.
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from dbt.adapters.factory import get_adapter_by_type, register_adapter, reset_adapters
from dbt.context.providers import generate_runtime_macro_context
from dbt.mp_context import get_mp_context
from dbt.tests.util import run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.profile.depot import resolve_depot
from dbt.adapters.lakehouse.profile.preflight import run_preflight
from functional.infra.depots import inline_depot
from functional.infra.processes import free_port
from functional.infra.servers import S3Server
from functional.lakehouse.shared.dbt_output import output_text

MODEL_SQL = "select 1 as id"
# A dead endpoint must fail fast (the REST client's connect timeout is 10 s, retries 3).
BOUNDED_S = 60.0
MISSING_BUCKET = "no-such-bucket-" + secrets.token_hex(4)


def target(depot: dict[str, Any], schema: str) -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "threads": 1,
        "schema": schema,
        "depot": depot,
        "spark": {"master": "local[2]", "driver_memory": "2g"},
    }


def profiles_with(default: dict[str, Any], schema: str, **targets: dict[str, Any]) -> dict:
    default = {**default, "schema": schema}
    return {"test": {"outputs": {"default": default, **targets}, "target": "default"}}


def dbt(args: list[str]) -> tuple[str, float]:
    """Run dbt expecting failure: what the user is shown, and how long it took."""
    started = time.monotonic()
    try:
        _, stdout = run_dbt_and_capture(args, expect_pass=False)
        text = output_text(stdout)
    except DbtRuntimeError as exc:  # what stopped the command; dbt prints it as it is
        text = str(exc)
    return text, time.monotonic() - started


@pytest.fixture(scope="module")
def models() -> dict[str, str]:
    return {"one.sql": MODEL_SQL}


@pytest.fixture(autouse=True)
def default_adapter_after(adapter: Any) -> Iterator[None]:
    """Each dbt command registers the adapter of its target; the project's teardown must find
    the default target's again, not a broken one."""
    yield
    reset_adapters()
    register_adapter(adapter.config, get_mp_context())
    get_adapter_by_type(adapter.type()).set_macro_context_generator(generate_runtime_macro_context)


# --- depot configuration errors: no server involved, every profile -------------------------


class TestDepotConfigErrors:
    @pytest.fixture(scope="class")
    @classmethod
    def profiles_config_update(cls, dbt_profile_target: dict, unique_schema: str) -> dict:
        s3 = {"bucket": "some-bucket", "relativePath": "wh", "region": "us-east-1"}
        spec = {"storageType": "s3", "s3": s3}
        no_apikey = {
            "type": "lakehouse",
            "spec": spec,
            "catalog": {"type": "rest", "uri": "http://127.0.0.1:9/api"},
        }
        no_uri = {
            "type": "lakehouse",
            "spec": spec,
            "catalog": {"type": "rest"},
            "secrets": {"apikey": "not-used-" + secrets.token_hex(4)},
        }
        return profiles_with(
            dbt_profile_target,
            unique_schema,
            no_apikey=target(no_apikey, unique_schema),
            no_metastore=target(no_uri, unique_schema),
        )

    def test_missing_apikey(self, project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("LAKEHOUSE_APIKEY", raising=False)
        for command in ("debug", "run"):
            text, _ = dbt([command, "--target", "no_apikey"])
            assert "'apikey' is required in Lakehouse depot secret." in text, text
            assert "LAKEHOUSE_APIKEY" in text

    def test_missing_metastore_url(self, project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("METASTORE_URL", raising=False)
        for command in ("debug", "run"):
            text, _ = dbt([command, "--target", "no_metastore"])
            assert "METASTORE_URL environment variable is required for Lakehouse destination" in (
                text
            ), text


# --- the shared servers: bucket, region, catalog down, token rejected ----------------------


@pytest.mark.only_profile("s3_rest")
class TestStorageAndCatalogFaults:
    """Broken variants of the s3_rest depot; each differs from the good one in one thing."""

    @pytest.fixture(scope="class")
    @classmethod
    def dead_port(cls) -> int:
        return free_port()  # free a moment ago: nothing listens there

    @pytest.fixture(scope="class")
    @classmethod
    def profiles_config_update(
        cls,
        dbt_profile_target: dict,
        unique_schema: str,
        s3_server: Any,
        rest_catalog: Any,
        dead_port: int,
    ) -> dict:
        def variant(**changes: Any) -> dict[str, Any]:
            options: dict[str, Any] = {
                "bucket": s3_server.bucket,
                "endpoint": s3_server.endpoint,
                "access_key": s3_server.access_key,
                "secret_key": s3_server.secret_key,
                "region": s3_server.region,
                "catalog": {"type": "rest", "uri": rest_catalog.uri},
                "apikey": rest_catalog.token,
            }
            options.update(changes)
            return target(inline_depot(**options), unique_schema)

        return profiles_with(
            dbt_profile_target,
            unique_schema,
            missing_bucket=variant(bucket=MISSING_BUCKET),
            wrong_region=variant(region="eu-west-1"),
            bad_token=variant(apikey="rejected-token-" + secrets.token_hex(8)),
            rest_down=variant(catalog={"type": "rest", "uri": f"http://127.0.0.1:{dead_port}/api"}),
        )

    def test_missing_bucket(self, project: Any, s3_server: Any) -> None:
        bucket = MISSING_BUCKET
        text, _ = dbt(["debug", "--target", "missing_bucket"])
        assert f"Bucket '{bucket}' does not exist at {s3_server.endpoint} (NoSuchBucket)" in text, (
            text
        )
        assert "Fix: create the bucket, or correct spec.s3.bucket" in text
        # Only the bucket is wrong: the catalog check passed and says so.
        assert "the token was accepted" in text

    def test_wrong_region(self, project: Any, s3_server: Any) -> None:
        text, _ = dbt(["debug", "--target", "wrong_region"])
        assert (
            f"Bucket '{s3_server.bucket}' is in region {s3_server.region}, but the depot is "
            "configured for region eu-west-1" in text
        ), text
        assert f"Fix: set spec.s3.region: {s3_server.region}" in text

    def test_catalog_rejects_the_token(self, project: Any, rest_catalog: Any) -> None:
        text, _ = dbt(["debug", "--target", "bad_token"])
        assert (
            f"The Iceberg REST catalog at {rest_catalog.uri} rejected the token (401 NotAuthorized)"
            in text
        ), text
        assert "Fix: set secrets.apikey in the depot (or LAKEHOUSE_APIKEY)" in text
        # In a run, the engine's own error is explained the same way.
        text, _ = dbt(["run", "--target", "bad_token"])
        assert f"The Iceberg REST catalog at {rest_catalog.uri} rejected the token" in text, text
        assert "rejected-token-" not in text

    def test_rest_server_down(self, project: Any, dead_port: int) -> None:
        uri = f"http://127.0.0.1:{dead_port}/api"
        text, seconds = dbt(["debug", "--target", "rest_down"])
        assert f"The Iceberg REST catalog at {uri} is unreachable: connection refused" in text, text
        assert seconds < BOUNDED_S
        text, seconds = dbt(["run", "--target", "rest_down"])
        assert f"The Iceberg REST catalog at {uri} is unreachable (Connection refused)" in text, (
            text
        )
        assert seconds < BOUNDED_S, f"a dead catalog took {seconds:.0f}s to report"


# --- wrong keys: a moto server of its own, with IAM authentication on -----------------------


@dataclass
class AuthS3:
    server: S3Server
    writer: tuple[str, str]  # may do everything on S3
    reader: tuple[str, str]  # may list and read, not write


def _iam_user(iam: Any, name: str, actions: list[str]) -> tuple[str, str]:
    iam.create_user(UserName=name)
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}],
    }
    iam.put_user_policy(UserName=name, PolicyName=f"{name}-s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


@pytest.fixture(scope="module")
def auth_s3(lakehouse_root: Path) -> Iterator[AuthS3]:
    server = S3Server(lakehouse_root / "servers-auth", bucket="auth-bucket").start()
    try:
        iam = boto3.client(
            "iam",
            endpoint_url=server.endpoint,
            region_name=server.region,
            aws_access_key_id=server.access_key,
            aws_secret_access_key=server.secret_key,
        )
        writer = _iam_user(iam, "writer", ["s3:*"])
        reader = _iam_user(iam, "reader", ["s3:ListBucket", "s3:GetObject", "s3:GetBucketLocation"])
        # From here on every request must be signed by an IAM user's key and be allowed.
        request = urllib.request.Request(
            f"{server.endpoint}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request, timeout=10).close()
        yield AuthS3(server, writer, reader)
    finally:
        server.stop()


@pytest.mark.only_profile("s3_rest")
class TestWrongKeys:
    @pytest.fixture(scope="class")
    @classmethod
    def profiles_config_update(
        cls, dbt_profile_target: dict, unique_schema: str, auth_s3: AuthS3
    ) -> dict:
        def variant(keys: tuple[str, str]) -> dict[str, Any]:
            depot = inline_depot(
                bucket=auth_s3.server.bucket,
                endpoint=auth_s3.server.endpoint,
                access_key=keys[0],
                secret_key=keys[1],
                region=auth_s3.server.region,
                catalog={"type": "hadoop"},
                prefix="wh/keys",
            )
            return target(depot, unique_schema)

        return profiles_with(
            dbt_profile_target,
            unique_schema,
            wrong_secret=variant((auth_s3.writer[0], "wrong-secret-" + secrets.token_hex(8))),
            read_only=variant(auth_s3.reader),
        )

    def test_the_right_keys_pass_the_preflight(self, auth_s3: AuthS3) -> None:
        """The control: with authentication on, the writer's keys pass every S3 check."""
        depot = resolve_depot(
            depot=inline_depot(
                bucket=auth_s3.server.bucket,
                endpoint=auth_s3.server.endpoint,
                access_key=auth_s3.writer[0],
                secret_key=auth_s3.writer[1],
                catalog={"type": "hadoop"},
                prefix="wh/keys",
            ),
            depots_file=None,
            warehouse=None,
            aws_region=None,
            aws_endpoint=None,
        )
        report = run_preflight(depot)
        assert report.ok, report.problems
        assert any(
            "PutObject and DeleteObject on s3://auth-bucket/wh/keys/" in p for p in report.passed
        )

    def test_wrong_secret_key_names_the_action_and_prefix(self, project: Any) -> None:
        text, _ = dbt(["debug", "--target", "wrong_secret"])
        assert (
            "S3 refused s3:ListBucket on s3://auth-bucket/wh/keys/ with 403: the secret key does "
            "not match the access key (SignatureDoesNotMatch)" in text
        ), text
        assert "Fix: correct secrets.aws_secret_key" in text
        assert "wrong-secret-" not in text

    def test_missing_write_permission_names_put_object(self, project: Any) -> None:
        text, _ = dbt(["debug", "--target", "read_only"])
        assert "S3 denied s3:PutObject on s3://auth-bucket/wh/keys/ (403, AccessDenied)" in text, (
            text
        )
        assert "Fix: grant s3:PutObject on arn:aws:s3:::auth-bucket/wh/keys/*" in text

    def test_a_403_during_a_run_names_the_action_and_path(self, project: Any) -> None:
        text, seconds = dbt(["run", "--target", "wrong_secret"])
        assert "S3 denied s3:GetObject / s3:ListBucket on s3://auth-bucket/wh/keys" in text, text
        assert "(403 FORBIDDEN)" in text
        assert "wrong-secret-" not in text
        assert seconds < BOUNDED_S
