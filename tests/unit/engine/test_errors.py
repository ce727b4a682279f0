"""Engine errors mapped at one place: S3 403s, an unreachable or refusing REST catalog, and a
commit race lost after every retry, each explained with the fix and without secrets.

The engine texts below were captured from the real stack (Spark 3.5 + Iceberg 1.10.2 + s3a
against moto with IAM auth on, and the REST client against a closed port and a 401 server).
The retry loop is pure logic and runs on a scripted session with an injected sleep.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
from typing import Any

import pytest
from pyspark.sql import Row

from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.cursor import LakehouseCursor, write_target
from dbt.adapters.lakehouse.engine.diagnosis import explain_engine_error, s3_action_for
from dbt.adapters.lakehouse.exceptions import CommitConflictError, LakehouseDatabaseError

HEAD_403 = (
    "java.io.UncheckedIOException: java.nio.file.AccessDeniedException: s3://bkt/wh/s: "
    "getFileStatus on s3://bkt/wh/s: com.amazonaws.services.s3.model.AmazonS3Exception: "
    "FORBIDDEN (Service: Amazon S3; Status Code: 403; Error Code: 403 FORBIDDEN; Request ID: "
    "null; S3 Extended Request ID: null; Proxy: null), S3 Extended Request ID: null:403 FORBIDDEN"
)
PUT_403 = (
    "org.apache.spark.SparkException: Job aborted.\n  caused by: "
    "java.nio.file.AccessDeniedException: s3://bkt/wh/s/t/data/00000-1.parquet: PUT 0-byte "
    "object  on s3://bkt/wh/s/t/data/00000-1.parquet: com.amazonaws.services.s3.model."
    "AmazonS3Exception: Access Denied (Service: Amazon S3; Status Code: 403; Error Code: "
    "AccessDenied; Request ID: 1)"
)
SIGNATURE_403 = PUT_403.replace("Error Code: AccessDenied", "Error Code: SignatureDoesNotMatch")
REST_DOWN = (
    "org.apache.iceberg.exceptions.RESTException: Error occurred while processing GET request\n"
    "  caused by: org.apache.iceberg.shaded.org.apache.hc.client5.http.HttpHostConnectException: "
    "Connect to http://127.0.0.1:55387 failed: Connection refused"
)
REST_401 = "org.apache.iceberg.exceptions.NotAuthorizedException: Not authorized: Token is invalid"
REST_403 = "org.apache.iceberg.exceptions.ForbiddenException: Forbidden: no CREATE on ns"
CONFLICT = (
    "org.apache.iceberg.exceptions.CommitFailedException: Commit failed: Requirement failed: "
    "branch main has changed: expected id 111 != 222"
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


# --- commit conflicts ----------------------------------------------------------------------


class ScriptedSpark:
    """Raises a commit conflict for the first `conflicts` writes, then succeeds."""

    def __init__(self, conflicts: int, snapshot: Row | None) -> None:
        self.conflicts = conflicts
        self.snapshot = snapshot
        self.statements: list[str] = []
        self.sparkContext = self

    def setJobGroup(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 - Spark's name
        pass

    def sql(self, statement: str, args: Any = None) -> Any:
        self.statements.append(statement)
        if statement.endswith(".snapshots order by committed_at desc limit 1"):
            return _Collected([self.snapshot] if self.snapshot else [])
        if self.conflicts > 0:
            self.conflicts -= 1
            raise RuntimeError(CONFLICT)
        return _Collected([])


class _Collected:
    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def collect(self) -> list[Row]:
        return self.rows


MERGE = "/* dbt */ merge into `lakehouse`.`s`.`orders` as t using src on t.id = src.id"
SNAPSHOT = Row(
    snapshot_id=222,
    operation="overwrite",
    committed_millis=int(dt.datetime(2026, 11, 23, 4, 5, 6, tzinfo=dt.UTC).timestamp() * 1000),
    summary={"added-records": "10", "deleted-records": "2", "total-records": "108"},
)


def test_conflicts_are_retried_with_growing_backoff() -> None:
    sleeps: list[float] = []
    spark = ScriptedSpark(conflicts=3, snapshot=SNAPSHOT)
    cursor = LakehouseCursor(spark, "g", commit_retries=4, sleep=sleeps.append)  # type: ignore[arg-type]
    cursor.execute(MERGE)
    assert spark.statements == [MERGE] * 4
    assert len(sleeps) == 3
    # 0.25 * 2**n, jittered by a factor in [0.5, 1.5): the ranges do not overlap for n = 1..3.
    for n, delay in enumerate(sleeps, start=1):
        assert 0.25 * 2**n * 0.5 <= delay < 0.25 * 2**n * 1.5


def test_final_conflict_names_the_table_and_the_other_writers_commit() -> None:
    sleeps: list[float] = []
    spark = ScriptedSpark(conflicts=10, snapshot=SNAPSHOT)
    cursor = LakehouseCursor(spark, "g", commit_retries=2, sleep=sleeps.append)  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError) as info:
        cursor.execute(MERGE)
    message = info.value.msg
    assert len(sleeps) == 2
    assert message.startswith(
        "Commit conflict on table `lakehouse`.`s`.`orders`: another writer committed to it "
        "first, and 2 retries also lost the race. This statement changed nothing."
    )
    assert (
        "The other writer's commit is the table's latest: snapshot 222 (overwrite, committed "
        "2026-11-23 04:05:06 UTC; rows added 10, rows deleted 2, rows in total 108)."
    ) in message
    assert "Iceberg said: org.apache.iceberg.exceptions.CommitFailedException" in message
    assert "`lakehouse`.`s`.`orders`.snapshots" in spark.statements[-1]


def test_final_conflict_without_snapshots_uses_icebergs_ids() -> None:
    spark = ScriptedSpark(conflicts=10, snapshot=None)
    cursor = LakehouseCursor(spark, "g", commit_retries=0, sleep=lambda s: None)  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError) as info:
        cursor.execute(MERGE)
    assert "The other writer moved the table from snapshot 111 to 222." in info.value.msg


def test_non_conflicts_are_not_retried() -> None:
    class Failing(ScriptedSpark):
        def sql(self, statement: str, args: Any = None) -> Any:
            self.statements.append(statement)
            raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] nope")

    spark = Failing(conflicts=0, snapshot=None)
    cursor = LakehouseCursor(spark, "g", sleep=lambda s: pytest.fail("no retry"))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        cursor.execute(MERGE)
    assert spark.statements == [MERGE]


@pytest.mark.parametrize(
    ("statement", "table"),
    [
        ("insert overwrite table a.b select 1", "a.b"),
        ("-- lakehouse:conf k=v\ninsert into `x` . `y` values (1)", "`x`.`y`"),
        ("create or replace table lakehouse.s.t using iceberg as select 1", "lakehouse.s.t"),
        ("delete from c.s.t where id = 1", "c.s.t"),
        ("select 1", None),
    ],
)
def test_write_target(statement: str, table: str | None) -> None:
    assert write_target(statement) == table


def test_rest_connect_timeout_is_unreachable_too() -> None:
    text = (
        "org.apache.iceberg.exceptions.RESTException: Error occurred while processing GET request"
        "\n  caused by: org.apache.iceberg.shaded.org.apache.hc.client5.http."
        "ConnectTimeoutException: Connect to http://10.1.2.3:8181 [/10.1.2.3] failed: "
        "Connect timed out"
    )
    explained = explain_engine_error(text) or ""
    assert explained.startswith(
        "The Iceberg REST catalog at http://10.1.2.3:8181 is unreachable (Connect timed out)."
    )


# --- catalogs without views, Glue's missing databases, regions, credentials -----------------
# Captured from Spark 3.5.9 + Iceberg 1.10.2: a view model on a hadoop catalog, and sources in
# a Glue database that moto's Glue does not have (tests/functional/lakehouse/test_catalogs.py).

VIEW_ON_HADOOP = "Replacing a view is not supported by catalog: lakehouse"
GLUE_MISSING = (
    "[TABLE_OR_VIEW_NOT_FOUND] The table or view `lakehouse`.`no_such_db`.`orders` cannot be "
    "found. Verify the spelling and correctness of the schema and catalog.; line 11 pos 14;\n"
    "'ReplaceTableAsSelect TableSpec(Map(),Some(iceberg),Map(),None,None,None,false)"
)
# AWS's texts for a request signed for the wrong region (S3 through SDK v2 and v1, Glue).
S3_WRONG_REGION = (
    "software.amazon.awssdk.services.s3.model.S3Exception: The authorization header is "
    "malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1' (Service: S3, Status "
    "Code: 400, Request ID: 1)"
)
S3A_REDIRECT = (
    "org.apache.hadoop.fs.s3a.AWSRedirectException: getFileStatus on s3a://bkt/wh: "
    "Received permanent redirect response to region [eu-central-1].  This likely indicates "
    "that the S3 endpoint configured in fs.s3a.endpoint does not match the AWS region"
)
GLUE_SCOPE = (
    "software.amazon.awssdk.services.glue.model.GlueException: Credential should be scoped to "
    "a valid region. (Service: Glue, Status Code: 400, Request ID: 2)"
)
NO_CREDENTIALS = (
    "software.amazon.awssdk.core.exception.SdkClientException: Unable to load credentials "
    "from system settings. Access key must be specified either via environment variable "
    "(AWS_ACCESS_KEY_ID) or system property (aws.accessKeyId)."
)


def _glue_catalogs() -> dict[str, Any]:
    from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext

    return {
        "lakehouse": CatalogContext(
            "lakehouse", "glue", "prod", "us-east-1", "http://127.0.0.1:5000", default=True
        ),
        "eu": CatalogContext("eu", "glue", "archive", "eu-west-1"),
        "raw": CatalogContext("raw", "rest", "raw-depot"),
    }


def test_a_catalog_without_views_says_so_and_how_to_fix_it() -> None:
    from dbt.adapters.lakehouse.engine.diagnosis import engine_error_type
    from dbt.adapters.lakehouse.exceptions import ViewsUnsupportedError

    assert engine_error_type(VIEW_ON_HADOOP) is ViewsUnsupportedError
    text = explain_engine_error(VIEW_ON_HADOOP) or ""
    assert text.startswith("The catalog 'lakehouse' cannot hold views: Iceberg's hadoop and glue")
    assert "materialized='table'" in text and "jdbc, rest or nessie" in text
    spark_own = "[MISSING_CATALOG_ABILITY.VIEWS] Catalog x does not support VIEWS."
    assert engine_error_type(spark_own) is ViewsUnsupportedError
    assert (explain_engine_error(spark_own) or "").startswith("This catalog cannot hold views")


def test_glue_missing_database_names_catalog_region_and_endpoint() -> None:
    text = explain_engine_error(GLUE_MISSING, catalogs=_glue_catalogs()) or ""
    assert text.startswith(
        "Not found in Iceberg catalog 'lakehouse': Glue database 'no_such_db' or its table "
        "'orders' does not exist in the glue catalog of depot 'prod', region us-east-1, "
        "endpoint http://127.0.0.1:5000."
    )
    assert "Given: region us-east-1. Accepted:" in text
    # A mounted glue catalog without an endpoint: the region's own; a two-part name and a
    # missing schema: the default catalog's.
    other = GLUE_MISSING.replace("`lakehouse`", "`eu`")
    assert "endpoint AWS's Glue endpoint of eu-west-1" in (
        explain_engine_error(other, catalogs=_glue_catalogs()) or ""
    )
    two_part = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `sales`.`orders` cannot be found."
    assert "Glue database 'sales' or its table 'orders'" in (
        explain_engine_error(two_part, catalogs=_glue_catalogs()) or ""
    )
    schema = "[SCHEMA_NOT_FOUND] The schema `lakehouse`.`sales` cannot be found."
    assert "Glue database 'sales' does not exist" in (
        explain_engine_error(schema, catalogs=_glue_catalogs()) or ""
    )


def test_missing_relations_elsewhere_are_left_alone() -> None:
    rest = GLUE_MISSING.replace("`lakehouse`", "`raw`")
    assert explain_engine_error(rest, catalogs=_glue_catalogs()) is None
    assert explain_engine_error(GLUE_MISSING, catalogs={}) is None


def test_only_a_glue_catalog_gets_the_glue_explanation() -> None:
    from pathlib import Path

    from dbt.adapters.lakehouse.engine.sparkconf import catalog_context
    from dbt.adapters.lakehouse.profile.depot import (
        CatalogSpec,
        Depot,
        DepotSecrets,
        LocalStorage,
        S3Storage,
    )

    glue = Depot(
        "prod",
        S3Storage("bkt", "wh", "ap-south-1"),
        CatalogSpec("glue", properties={"glue.endpoint": "http://glue.local:4566"}),
        DepotSecrets(),
        "inline depot",
    )
    catalogs = {"lakehouse": catalog_context(glue, "lakehouse", default=True)}
    assert "region ap-south-1, endpoint http://glue.local:4566" in (
        explain_engine_error(GLUE_MISSING, catalogs=catalogs) or ""
    )
    hadoop = Depot("dev", LocalStorage(Path("/wh")), CatalogSpec("hadoop"), DepotSecrets(), "x")
    catalogs = {"lakehouse": catalog_context(hadoop, "lakehouse", default=True)}
    assert explain_engine_error(GLUE_MISSING, catalogs=catalogs) is None
    assert explain_engine_error(GLUE_MISSING) is None  # no catalogs known: nothing to say


def test_wrong_region_names_given_and_expected() -> None:
    text = explain_engine_error(S3_WRONG_REGION) or ""
    assert text.startswith(
        "AWS refused a request signed for region us-east-1: the bucket (or service endpoint) "
        "is in eu-west-1. Given: region us-east-1. Accepted: eu-west-1."
    )
    assert "spec.s3.region (or the profile's aws_region) to eu-west-1" in text
    redirect = explain_engine_error(S3A_REDIRECT) or ""
    assert redirect.startswith("S3 redirected the request: the bucket is in eu-central-1")
    assert "Credential should be scoped" not in (explain_engine_error(GLUE_SCOPE) or "")
    assert "client's region is not the region of the endpoint" in (
        explain_engine_error(GLUE_SCOPE) or ""
    )


def test_no_aws_credentials_points_at_the_depot_keys() -> None:
    text = explain_engine_error(NO_CREDENTIALS) or ""
    assert text.startswith("The AWS SDK found no credentials for Iceberg's Glue or S3 client")
    assert "secrets.aws_access_key" in text


def test_a_row_level_operation_overtaken_by_another_commit_is_a_commit_conflict() -> None:
    from dbt.adapters.lakehouse.engine.diagnosis import engine_error_type

    text = (
        "java.lang.IllegalStateException: Runtime file filtering is not possible: the table has "
        "been concurrently modified. Row-level operation scan snapshot ID: 1, current table "
        "snapshot ID: 2."
    )
    assert engine_error_type(text) is CommitConflictError
