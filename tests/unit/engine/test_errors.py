"""Engine errors mapped at one place: S3 403s and an unreachable or refusing REST catalog, each
explained with the fix, and the connection's exception handler putting that first, without
secrets."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from dbt.adapters.lakehouse import connections
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.diagnosis import explain_engine_error, s3_action_for
from dbt.adapters.lakehouse.exceptions import CommitConflictError, LakehouseDatabaseError
from unit.engine.engine_texts import (
    CONFLICT,
    HEAD_403,
    HEAD_403_SDK_V2,
    PUT_403,
    REST_401,
    REST_403,
    REST_DOWN,
    SIGNATURE_403,
)

# --- explain_engine_error ----------------------------------------------------------------


def test_head_403_names_action_prefix_and_both_causes() -> None:
    text = explain_engine_error(HEAD_403)
    assert text is not None
    assert text.startswith(
        "S3 denied s3:GetObject / s3:ListBucket on s3://bkt/wh/s (403 FORBIDDEN): "
    )
    assert "the keys are wrong or lack the permission" in text
    assert "`dbt debug` tells which" in text


@pytest.mark.parametrize("engine_text", [HEAD_403, HEAD_403_SDK_V2], ids=["sdk-v1", "sdk-v2"])
def test_head_403_reads_the_same_on_both_aws_sdks(engine_text: str) -> None:
    text = explain_engine_error(engine_text)
    assert text is not None
    assert text.startswith(
        "S3 denied s3:GetObject / s3:ListBucket on s3://bkt/wh/s (403 FORBIDDEN)"
    )


def test_put_403_is_put_object_and_a_grant() -> None:
    text = explain_engine_error(PUT_403)
    assert text == (
        "S3 denied s3:PutObject on s3://bkt/wh/s/t/data/00000-1.parquet (403 AccessDenied): the "
        "credentials lack the permission. Fix: grant s3:PutObject on that prefix to these "
        "credentials."
    )


def test_signature_mismatch_points_at_the_secret_key() -> None:
    text = explain_engine_error(SIGNATURE_403) or ""
    assert "the secret key does not match the access key" in text
    assert "secrets.aws_secret_key" in text


@pytest.mark.parametrize(
    ("operation", "action"),
    [
        ("getFileStatus", "s3:GetObject / s3:ListBucket"),
        ("PUT 0-byte object ", "s3:PutObject"),
        ("Writing Object", "s3:PutObject"),
        ("innerMkdirs", "s3:PutObject"),
        ("delete", "s3:DeleteObject"),
        ("listObjects", "s3:ListBucket"),
        ("open", "s3:GetObject"),
        ("rename", "s3:GetObject + s3:PutObject"),
        ("frobnicate", "the S3 request behind s3a's 'frobnicate'"),
        (None, "an S3 request"),
    ],
)
def test_s3a_operations_map_to_iam_actions(operation: str | None, action: str) -> None:
    assert s3_action_for(operation) == action


def test_rest_down_names_the_catalog_uri() -> None:
    uri = "http://127.0.0.1:55387/api"
    text = explain_engine_error(REST_DOWN, uri) or ""
    assert text.startswith(
        f"The Iceberg REST catalog at {uri} is unreachable (Connection refused). Fix:"
    )
    assert "METASTORE_URL" in text
    # Without the depot's uri the host from the engine's text is named.
    assert "at http://127.0.0.1:55387 is unreachable" in (explain_engine_error(REST_DOWN) or "")


def test_rejected_token_and_forbidden() -> None:
    text = explain_engine_error(REST_401, "https://cat.example/api") or ""
    assert text.startswith(
        "The Iceberg REST catalog at https://cat.example/api rejected the token "
        "(401 NotAuthorized: Token is invalid)."
    )
    assert "LAKEHOUSE_APIKEY" in text
    forbidden = explain_engine_error(REST_403) or ""
    assert "accepted the token but refused the operation (403 Forbidden: no CREATE on ns)" in (
        forbidden
    )


def test_other_errors_are_left_alone() -> None:
    assert explain_engine_error("[TABLE_OR_VIEW_NOT_FOUND] The table `x` cannot be found") is None
    assert explain_engine_error(CONFLICT) is None


# --- the exception handler -----------------------------------------------------------------

APIKEY = "handlerApiKey-77aa"
SECRET_KEY = "handlerSecretKey-88bb"


class _Profile:
    def __init__(self, credentials: LakehouseCredentials) -> None:
        self.credentials = credentials


def manager(**extra: Any) -> LakehouseConnectionManager:
    creds = LakehouseCredentials.from_dict(
        {
            **extra,
            "type": "lakehouse",
            "schema": "s",
            "depot": {
                "type": "lakehouse",
                "spec": {
                    "storageType": "s3",
                    "s3": {"bucket": "bkt", "relativePath": "wh", "region": "us-east-1"},
                },
                "catalog": {"type": "rest", "uri": "http://user:pw@127.0.0.1:55387/api"},
                "secrets": {
                    "aws_access_key": "AKIAHANDLER",
                    "aws_secret_key": SECRET_KEY,
                    "apikey": APIKEY,
                },
            },
        }
    )
    return LakehouseConnectionManager(_Profile(creds), multiprocessing.get_context("spawn"))  # type: ignore[arg-type]


def test_with_two_remote_catalogs_no_uri_is_guessed() -> None:
    # The engine's text does not say which catalog answered: name the host it gives, never
    # the profile depot's uri for what may be a mounted depot's failure.
    other = {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "s3": {"bucket": "raw", "region": "us-east-1"}},
        "catalog": {"type": "rest", "uri": "http://127.0.0.1:55387/raw"},
        "secrets": {"apikey": "rawApiKey-99cc"},
    }
    with pytest.raises(LakehouseDatabaseError) as info:
        with manager(depots={"raw": other}).exception_handler("show namespaces in raw"):
            raise RuntimeError(f"{REST_DOWN} (token rawApiKey-99cc)")
    first = info.value.msg.splitlines()[0]
    assert first.startswith("The Iceberg REST catalog at http://127.0.0.1:55387 is unreachable")
    assert "/api" not in first and "rawApiKey-99cc" not in info.value.msg


def test_handler_explains_first_and_hides_secrets() -> None:
    with pytest.raises(LakehouseDatabaseError) as info:
        with manager().exception_handler("show namespaces"):
            raise RuntimeError(f"{REST_DOWN}\nwhile using token {APIKEY} and {SECRET_KEY}")
    message = info.value.msg
    first = message.splitlines()[0]
    assert first.startswith("The Iceberg REST catalog at http://127.0.0.1:55387/api is unreachable")
    assert "Connection refused" in message  # the engine's own text follows
    assert APIKEY not in message and SECRET_KEY not in message and "pw@" not in message


def test_a_lost_commit_race_keeps_its_message_and_logs_what_iceberg_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logged: list[str] = []
    monkeypatch.setattr(connections.logger, "debug", logged.append)
    iceberg = (
        "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can "
        f"contain records matching true: [s3://bkt/wh/s/t/data/00000-1.parquet] ({APIKEY})"
    )
    lost = CommitConflictError("Commit conflict on table t: ...\nFix: run the model again", iceberg)
    handler = manager().exception_handler
    with pytest.raises(CommitConflictError) as info:
        with handler("merge into t"), handler("merge into lakehouse.s.t using src on false"):
            raise lost  # through two handlers, as a statement dbt executes goes
    assert info.value is lost  # the console's message, unchanged
    [entry] = logged
    assert "merge into lakehouse.s.t" in entry and "s3://bkt/wh/s/t/data/00000-1.parquet" in entry
    assert APIKEY not in entry
