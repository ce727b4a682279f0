"""Catalog and AWS errors explained: catalogs without views, Glue's missing databases, a
request signed for the wrong region, no credentials, a row-level operation overtaken."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.engine.diagnosis import explain_engine_error
from dbt.adapters.lakehouse.exceptions import CommitConflictError

# --- catalogs without views, Glue's missing databases, regions, credentials -----------------
# Captured from Spark 3.5.9 + Iceberg 1.10.2: a view model on a hadoop catalog, and sources in
# a Glue database that moto's Glue does not have
# (tests/functional/lakehouse/catalogs/test_catalogs.py).

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


def test_a_view_replaced_by_another_run_at_once_is_a_commit_conflict() -> None:
    from dbt.adapters.lakehouse.engine.diagnosis import engine_error_type

    text = (
        "org.apache.iceberg.exceptions.AlreadyExistsException: View was updated concurrently: "
        "s.stg_events"
    )
    assert engine_error_type(text) is CommitConflictError


# The xerial SQLite driver's words (SQLiteErrorCode: "[<code>] <its message> (<SQLite's>)"),
# once the busy timeout has passed with another process's write lock still held.
SQLITE_BUSY = (
    "org.apache.iceberg.jdbc.UncheckedSQLException: Failed to update table\n"
    "Caused by: org.sqlite.SQLiteException: [SQLITE_BUSY] The database file is locked "
    "(database is locked)"
)


def test_embedded_catalog_locked_past_the_wait() -> None:
    explained = explain_engine_error(SQLITE_BUSY)
    assert explained is not None
    assert "stayed locked by another process" in explained
    assert "LAKEHOUSE_CATALOG_WAIT" in explained and "Fix:" in explained
