"""`dbt debug` preflight: each S3 and REST catalog failure explained with its fix, no secret shown.

The S3 side runs against a scripted client that raises botocore's own `ClientError` with the
responses S3 sends; the REST side against a real HTTP server on 127.0.0.1
and an injected `http_get` for the statuses.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from dbt.adapters.lakehouse.exceptions import PreflightError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight import PROBE_NAME, boto3_s3_client
from dbt.adapters.lakehouse.profile.preflight import run_preflight
from dbt.adapters.lakehouse.profile.preflight_catalog import urllib_get

ACCESS_KEY = "AKIAPREFLIGHTKEY77"
SECRET_KEY = "preflightSecret-0a9b8c"
APIKEY = "preflightApiKey-5d6e7f"
SECRETS = DepotSecrets(
    aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY), apikey=Secret(APIKEY)
)
S3 = S3Storage("lake-bucket", "warehouse/dev", "eu-west-1", "http://127.0.0.1:9")
REST = CatalogSpec("rest", "http://127.0.0.1:9/catalog", None, {})


def depot(storage: S3Storage | LocalStorage = S3, catalog: CatalogSpec = REST) -> Depot:
    return Depot("lake", storage, catalog, SECRETS, "test")


def client_error(code: str, status: int, op: str, headers: dict[str, str] | None = None) -> Any:
    response = {
        "Error": {"Code": code, "Message": f"{code} message"},
        "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": headers or {}},
    }
    return ClientError(response, op)


class ScriptedS3:
    """An S3 client whose answers are given per operation; records the calls made."""

    def __init__(self, region: str = "eu-west-1", **failures: Exception) -> None:
        self.region = region
        self.failures = failures
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.objects: set[str] = set()

    def _call(self, op: str, kwargs: dict[str, Any]) -> None:
        self.calls.append((op, kwargs))
        if op in self.failures:
            raise self.failures[op]

    def list_objects_v2(self, **kwargs: Any) -> dict[str, Any]:
        self._call("list_objects_v2", kwargs)
        return {"KeyCount": 0}

    def head_bucket(self, **kwargs: Any) -> dict[str, Any]:
        self._call("head_bucket", kwargs)
        headers = {"x-amz-bucket-region": self.region} if self.region else {}
        return {"ResponseMetadata": {"HTTPStatusCode": 200, "HTTPHeaders": headers}}

    def get_bucket_location(self, **kwargs: Any) -> dict[str, Any]:
        self._call("get_bucket_location", kwargs)
        return {"LocationConstraint": None}

    def put_object(self, **kwargs: Any) -> dict[str, Any]:
        self._call("put_object", kwargs)
        self.objects.add(kwargs["Key"])
        return {}

    def delete_object(self, **kwargs: Any) -> dict[str, Any]:
        self._call("delete_object", kwargs)
        self.objects.discard(kwargs["Key"])
        return {}


def ok_http(status: int = 200, body: bytes = b'{"defaults": {}, "overrides": {}}') -> Callable:
    seen: list[tuple[str, Mapping[str, str]]] = []

    def get(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, bytes]:
        seen.append((url, dict(headers)))
        return status, body

    get.seen = seen  # type: ignore[attr-defined]
    return get


def preflight(
    client: ScriptedS3, http: Callable | None = None, the_depot: Depot | None = None
) -> PreflightReport:
    return run_preflight(
        the_depot or depot(),
        s3_client_factory=lambda storage, secrets, timeout: client,
        http_get=http or ok_http(),
        timeout=2.0,
    )


def assert_no_secret(report: PreflightReport) -> None:
    text = "\n".join(report.passed + report.problems)
    for value in (ACCESS_KEY, SECRET_KEY, APIKEY):
        assert value not in text


# --- S3 ------------------------------------------------------------------------------------


def test_all_checks_pass_and_the_probe_object_is_removed() -> None:
    client = ScriptedS3()
    http = ok_http()
    report = preflight(client, http)
    assert report.ok, report.problems
    assert client.objects == set()
    put = next(kwargs for op, kwargs in client.calls if op == "put_object")
    assert put["Bucket"] == "lake-bucket"
    assert put["Key"].startswith(f"warehouse/dev/{PROBE_NAME}-")
    listed = next(kwargs for op, kwargs in client.calls if op == "list_objects_v2")
    assert listed["Prefix"] == "warehouse/dev/"
    text = "\n".join(report.passed)
    assert "is in the configured region eu-west-1" in text
    assert "PutObject and DeleteObject on s3://lake-bucket/warehouse/dev/" in text
    assert "the token was accepted" in text
    url, headers = http.seen[0]  # type: ignore[attr-defined]
    assert (
        url
        == "http://127.0.0.1:9/catalog/v1/config?warehouse=s3%3A%2F%2Flake-bucket%2Fwarehouse%2Fdev"
    )
    assert headers["Authorization"] == f"Bearer {APIKEY}"
    assert_no_secret(report)
    report.raise_for_problems("dataos://lake")  # nothing to raise


def test_missing_bucket_is_explained_and_stops_the_s3_checks() -> None:
    client = ScriptedS3(list_objects_v2=client_error("NoSuchBucket", 404, "ListObjectsV2"))
    report = preflight(client)
    assert len(report.problems) == 1
    problem = report.problems[0]
    assert "Bucket 'lake-bucket' does not exist at http://127.0.0.1:9 (NoSuchBucket)" in problem
    assert "Fix: create the bucket, or correct spec.s3.bucket" in problem
    assert [op for op, _ in client.calls] == ["list_objects_v2"]


def test_region_mismatch_names_both_regions() -> None:
    report = preflight(ScriptedS3(region="us-west-2"))
    (problem,) = report.problems
    assert "Bucket 'lake-bucket' is in region us-west-2" in problem
    assert "configured for region eu-west-1" in problem
    assert "spec.s3.region: us-west-2" in problem


def test_region_from_get_bucket_location_when_head_has_no_header() -> None:
    report = preflight(ScriptedS3(region=""))
    (problem,) = report.problems
    # An empty LocationConstraint is us-east-1.
    assert "is in region us-east-1, but the depot is configured for region eu-west-1" in problem


def test_redirect_to_another_region_is_a_region_problem() -> None:
    redirect = client_error(
        "PermanentRedirect", 301, "ListObjectsV2", {"x-amz-bucket-region": "ap-south-1"}
    )
    (problem,) = preflight(ScriptedS3(list_objects_v2=redirect)).problems
    assert "is in region ap-south-1, but the depot is configured for region eu-west-1" in problem


@pytest.mark.parametrize(
    ("failing_op", "action"),
    [
        ("list_objects_v2", "ListBucket"),
        ("put_object", "PutObject"),
        ("delete_object", "DeleteObject"),
    ],
)
def test_access_denied_names_the_action_and_the_prefix(failing_op: str, action: str) -> None:
    client = ScriptedS3(**{failing_op: client_error("AccessDenied", 403, failing_op)})
    report = preflight(client)
    (problem,) = report.problems
    assert (
        f"S3 denied s3:{action} on s3://lake-bucket/warehouse/dev/ (403, AccessDenied)" in problem
    )
    assert f"Fix: grant s3:{action} on arn:aws:s3:::lake-bucket" in problem
    if failing_op == "delete_object":
        assert "was left behind" in problem
    assert_no_secret(report)


def test_wrong_secret_key_says_so_with_action_and_prefix() -> None:
    wrong = client_error("SignatureDoesNotMatch", 403, "ListObjectsV2")
    (problem,) = preflight(ScriptedS3(list_objects_v2=wrong)).problems
    assert "S3 refused s3:ListBucket on s3://lake-bucket/warehouse/dev/ with 403" in problem
    assert "the secret key does not match the access key (SignatureDoesNotMatch)" in problem
    assert "secrets.aws_secret_key" in problem


def test_unknown_access_key() -> None:
    wrong = client_error("InvalidAccessKeyId", 403, "ListObjectsV2")
    (problem,) = preflight(ScriptedS3(list_objects_v2=wrong)).problems
    assert "the credentials are not valid (S3 said: InvalidAccessKeyId" in problem


def test_unreachable_endpoint_and_missing_credentials() -> None:
    down = EndpointConnectionError(endpoint_url="http://127.0.0.1:9/lake-bucket")
    (problem,) = preflight(ScriptedS3(list_objects_v2=down)).problems
    assert "S3 is unreachable: http://127.0.0.1:9 did not answer s3:ListBucket" in problem
    (problem,) = preflight(ScriptedS3(list_objects_v2=NoCredentialsError())).problems
    assert "No AWS credentials for s3:ListBucket on s3://lake-bucket/warehouse/dev/" in problem


def test_secret_in_an_s3_message_is_masked() -> None:
    leaky = ClientError(
        {"Error": {"Code": "Weird", "Message": f"key {ACCESS_KEY} secret {SECRET_KEY}"}},
        "ListObjectsV2",
    )
    report = preflight(ScriptedS3(list_objects_v2=leaky))
    assert report.problems and "****" in report.problems[0]
    assert_no_secret(report)


def test_local_storage_skips_s3_and_other_catalogs_skip_rest(tmp_path: Path) -> None:
    http = ok_http()
    local = depot(LocalStorage(tmp_path), CatalogSpec("hadoop", None, None, {}))
    report = run_preflight(
        local,
        s3_client_factory=lambda *a: pytest.fail("no S3 client for local storage"),
        http_get=http,
    )
    assert report.ok and report.passed == [] and http.seen == []  # type: ignore[attr-defined]


# --- REST catalog --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "rejected the token (401 NotAuthorized) (catalog said: bad token)"),
        (403, "accepted the token but refused access (403 Forbidden)"),
        (404, "No Iceberg REST catalog at http://127.0.0.1:9/catalog: GET /v1/config answered 404"),
        (503, "answered 503 to GET /v1/config"),
    ],
)
def test_rest_status_is_explained(status: int, expected: str) -> None:
    body = b'{"error": {"message": "bad token", "type": "NotAuthorizedException", "code": 401}}'
    report = preflight(ScriptedS3(), ok_http(status, body))
    (problem,) = report.problems
    assert expected in problem
    assert "Fix:" in problem
    assert_no_secret(report)


def test_rest_token_from_catalog_properties_wins_and_is_not_shown() -> None:
    catalog = CatalogSpec(
        "rest", "https://user:pw@rest.example/api/", "wh", {"token": "propTok-1234"}
    )
    http = ok_http(401, b"not json")
    report = preflight(ScriptedS3(), http, depot(catalog=catalog))
    url, headers = http.seen[0]  # type: ignore[attr-defined]
    assert url == "https://user:pw@rest.example/api/v1/config?warehouse=wh"
    assert headers["Authorization"] == "Bearer propTok-1234"
    (problem,) = report.problems
    assert "The Iceberg REST catalog at https://rest.example/api rejected the token" in problem
    assert "Given: catalog.properties.token." in problem
    assert "propTok-1234" not in problem and "pw@" not in problem


@pytest.fixture
def http_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on loopback that accepts one token only."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            seen.append(self.path)
            if self.headers.get("Authorization") == f"Bearer {APIKEY}":
                self.send_response(200)
                payload = b'{"defaults": {}, "overrides": {}}'
            else:
                self.send_response(401)
                payload = b'{"error": {"message": "Not authorized", "type": "x", "code": 401}}'
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api", seen
    finally:
        server.shutdown()
        server.server_close()


def rest_only(uri: str, apikey: str) -> Depot:
    secrets = DepotSecrets(apikey=Secret(apikey))
    catalog = CatalogSpec("rest", uri, "s3://b/wh", {})
    return Depot("lake", LocalStorage(Path("/tmp/unused")), catalog, secrets, "test")


def test_real_http_token_accepted_and_rejected(http_server: tuple[str, list[str]]) -> None:
    uri, seen = http_server
    good = run_preflight(rest_only(uri, APIKEY), http_get=urllib_get, timeout=5)
    assert good.ok, good.problems
    assert seen[-1] == "/api/v1/config?warehouse=s3%3A%2F%2Fb%2Fwh"
    bad = run_preflight(rest_only(uri, "wrongApiKey-0000"), http_get=urllib_get, timeout=5)
    (problem,) = bad.problems
    assert f"The Iceberg REST catalog at {uri} rejected the token (401 NotAuthorized)" in problem
    assert "wrongApiKey-0000" not in problem


def test_real_connection_refused_names_the_uri() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    uri = f"http://127.0.0.1:{port}/api"
    report = run_preflight(rest_only(uri, APIKEY), http_get=urllib_get, timeout=5)
    (problem,) = report.problems
    assert f"The Iceberg REST catalog at {uri} is unreachable: connection refused" in problem
    assert "METASTORE_URL" in problem


def test_timeout_is_reported_as_such() -> None:
    def slow(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, bytes]:
        raise TimeoutError("timed out")

    report = run_preflight(rest_only("http://10.255.255.1/api", APIKEY), http_get=slow, timeout=3)
    (problem,) = report.problems
    assert "unreachable: no answer within 3s (timed out)" in problem


def test_raise_lists_every_problem_under_the_depot_name() -> None:
    client = ScriptedS3(region="us-west-2")
    report = preflight(client, ok_http(401, b""))
    assert len(report.problems) == 2
    with pytest.raises(PreflightError) as info:
        report.raise_for_problems("dataos://lake")
    text = str(info.value)
    assert "Preflight of the depot (dataos://lake) found 2 problem(s):" in text
    assert "- Bucket 'lake-bucket' is in region us-west-2" in text
    assert "- The Iceberg REST catalog at http://127.0.0.1:9/catalog rejected the token" in text


def test_the_s3_client_sends_checksums_only_where_s3_requires_them() -> None:
    """S3-compatible stores refuse botocore's default upload CRCs (501): sent as s3a does."""
    client = boto3_s3_client(S3, SECRETS, timeout=1.0)
    assert client.meta.config.request_checksum_calculation == "when_required"
    assert client.meta.config.response_checksum_validation == "when_required"
    assert client.meta.config.s3 == {"addressing_style": "path"}
