"""The GCS preflight against a scripted JSON API: what passes, what each refusal says and its
fix, the token exchange of a service-account key, and no secret in any line."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping

import pytest

from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    GcsStorage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.storage.gcs.token import TokenError, default_chain_token
from dbt.adapters.lakehouse.profile.preflight import run_preflight
from unit.profile.gcs_key import service_account_key

TOKEN_URI = "https://token.example/token"
EMULATOR = "http://127.0.0.1:4443"


class FakeGcs:
    """Answers the JSON API and the token endpoint from a table of (method, path prefix)."""

    def __init__(self, **statuses: int) -> None:
        self.statuses = {"list": 200, "create": 200, "delete": 204, "token": 200, **statuses}
        self.calls: list[tuple[str, str, dict[str, str]]] = []

    def __call__(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout: float
    ) -> tuple[int, bytes]:
        self.calls.append((method, url, dict(headers)))
        if url == TOKEN_URI:
            assert body is not None and b"jwt-bearer" in body
            status = self.statuses["token"]
            answer = {"access_token": "ya29.fake"} if status == 200 else {"error": "invalid_grant"}
            return status, json.dumps(answer).encode()
        op = {"GET": "list", "POST": "create", "DELETE": "delete"}[method]
        status = self.statuses[op]
        if status == -1:
            raise ConnectionRefusedError("refused")
        body = {} if status < 300 else {"error": {"code": status, "message": f"{op} said no"}}
        return status, json.dumps(body).encode()


def depot(key: str | None = None, endpoint: str | None = EMULATOR) -> Depot:
    secrets = DepotSecrets(gcs_key_json=Secret(key) if key else None)
    storage = GcsStorage("lake-bucket", "wh", "p", endpoint)
    return Depot("lake", storage, CatalogSpec("hadoop"), secrets, "test")


def test_emulator_without_a_key_passes_unauthenticated() -> None:
    fake = FakeGcs()
    report = run_preflight(depot(), gcs_request=fake)
    assert report.ok, report.problems
    assert [c[0] for c in fake.calls] == ["GET", "POST", "DELETE"]
    assert all("Authorization" not in c[2] for c in fake.calls)
    assert fake.calls[0][1].startswith(f"{EMULATOR}/storage/v1/b/lake-bucket/o?maxResults=1")
    assert "name=wh%2F.dbt-lakehouse-preflight-" in fake.calls[1][1]
    assert report.passed[-1] == (
        "storage.objects.create and storage.objects.delete on gs://lake-bucket/wh/ are allowed "
        "(probe object removed)"
    )


def test_a_key_is_exchanged_for_a_token_signed_with_it() -> None:
    key = service_account_key(TOKEN_URI)
    fake = FakeGcs()
    report = run_preflight(depot(key, endpoint=None), gcs_request=fake)
    assert report.ok, report.problems
    token_call, list_call = fake.calls[0], fake.calls[1]
    assert token_call[1] == TOKEN_URI
    assert list_call[1].startswith("https://storage.googleapis.com/storage/v1/b/lake-bucket/o")
    assert list_call[2]["Authorization"] == "Bearer ya29.fake"
    assert "GCS credentials from the depot's service-account key give an access token" in (
        report.passed
    )


def test_the_jwt_names_the_key_and_is_verifiable() -> None:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    key = service_account_key(TOKEN_URI)
    seen: list[bytes] = []

    def capture(method: str, url: str, headers: Mapping[str, str], body: bytes | None, t: float):
        seen.append(body or b"")
        return 200, b'{"access_token": "t"}'

    from dbt.adapters.lakehouse.profile.depot.storage.gcs.token import key_token

    assert key_token(key, capture, 1.0, "k") == "t"
    assertion = seen[0].decode().split("assertion=")[1]
    head, claims, signature = assertion.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(claims + "=="))
    assert decoded["iss"] == json.loads(key)["client_email"] and decoded["aud"] == TOKEN_URI
    private = serialization.load_pem_private_key(json.loads(key)["private_key"].encode(), None)
    private.public_key().verify(  # type: ignore[union-attr,call-arg]
        base64.urlsafe_b64decode(signature + "=="),
        f"{head}.{claims}".encode(),
        padding.PKCS1v15(),  # type: ignore[arg-type]
        hashes.SHA256(),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ({"list": 404}, "GCS bucket 'lake-bucket' does not exist at http://127.0.0.1:4443 (404)"),
        ({"list": 403}, "GCS denied storage.objects.list on gs://lake-bucket/wh/ (403)"),
        ({"list": 401}, "GCS refused the credentials for storage.objects.list"),
        ({"create": 403}, "GCS denied storage.objects.create on gs://lake-bucket/wh/ (403)"),
        ({"delete": 403}, "The probe object gs://lake-bucket/wh/.dbt-lakehouse-preflight-"),
        ({"list": -1}, "GCS is unreachable: http://127.0.0.1:4443 did not answer"),
        ({"list": 500}, "GCS storage.objects.list on gs://lake-bucket/wh/ failed with HTTP 500"),
    ],
)
def test_each_refusal_says_what_and_how_to_fix(statuses: dict[str, int], expected: str) -> None:
    report = run_preflight(depot(), gcs_request=FakeGcs(**statuses))
    (problem,) = report.problems
    assert expected in problem, problem
    assert "Fix" in problem or "failed with HTTP" in problem


def test_a_refused_key_names_the_fix_and_never_the_key() -> None:
    key = service_account_key(TOKEN_URI)
    report = run_preflight(depot(key), gcs_request=FakeGcs(token=400))
    (problem,) = report.problems
    assert "Google refused the service-account key (invalid_grant)" in problem
    assert "create a new key" in problem
    private = json.loads(key)["private_key"]
    assert all(line not in problem for line in private.splitlines()[1:-1])


def test_no_credentials_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)

    def nothing(method: str, url: str, headers: Mapping[str, str], body: bytes | None, t: float):
        raise OSError("no metadata server")

    with pytest.raises(TokenError) as info:
        default_chain_token(nothing, 1.0, env={})
    assert "No Google credentials" in str(info.value)
    assert "GOOGLE_APPLICATION_CREDENTIALS=<key file>" in str(info.value)
    report = run_preflight(depot(endpoint=None), gcs_request=nothing)
    assert report.problems and "No Google credentials" in report.problems[0]
