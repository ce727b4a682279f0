"""An S3 or STS refusal in a session whose depot has a role names the role and the bucket."""

from __future__ import annotations

from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext, explain_engine_error

ARN = "arn:aws:iam::123456789012:role/lakehouse-no-s3"
ROLE_CATALOG = CatalogContext(
    name="lakehouse", kind="jdbc", depot="inline", bucket="lake-bucket", role_arn=ARN, default=True
)
PLAIN_CATALOG = CatalogContext(name="other", kind="rest", depot="o", bucket="other-bucket")
SDK_V2_DENIED = (
    "software.amazon.awssdk.services.s3.model.S3Exception: Access Denied (Service: S3, "
    "Status Code: 403, Request ID: r1)"
)
S3A_DENIED = (
    "java.nio.file.AccessDeniedException: s3a://lake-bucket/wh/t/data/f.parquet: getFileStatus "
    "on s3a://lake-bucket/wh/t/data/f.parquet: com.amazonaws.services.s3.model."
    "AmazonS3Exception: Access Denied (Service: Amazon S3; Status Code: 403; Error Code: "
    "AccessDenied; Request ID: r2)"
)
STS_DENIED = (
    "software.amazon.awssdk.services.sts.model.StsException: User: "
    "arn:aws:iam::123456789012:user/base is not authorized to perform: sts:AssumeRole "
    "(Service: Sts, Status Code: 403, Request ID: r3)"
)


def test_s3fileio_403_names_the_role_and_the_bucket() -> None:
    text = explain_engine_error(SDK_V2_DENIED, None, {"lakehouse": ROLE_CATALOG})
    assert text is not None
    assert text.startswith(f"S3 refused role {ARN} (catalog `lakehouse`, depot 'inline') on ")
    assert "bucket 'lake-bucket'" in text and "arn:aws:s3:::lake-bucket/<prefix>*" in text


def test_s3a_403_picks_the_catalog_of_the_bucket_in_the_path() -> None:
    catalogs = {"lakehouse": ROLE_CATALOG, "other": PLAIN_CATALOG}
    text = explain_engine_error(S3A_DENIED, None, catalogs)
    assert text is not None and f"S3 refused role {ARN}" in text
    assert "(s3a://lake-bucket/wh/t/data/f.parquet) (403, AccessDenied)" in text
    assert "aws_access_key" not in text  # the keys only assume the role


def test_sts_refusal_is_told_apart() -> None:
    text = explain_engine_error(STS_DENIED, None, {"lakehouse": ROLE_CATALOG})
    assert text is not None
    assert text.startswith(f"AWS STS refused to let the depot's credentials assume role {ARN}")
    assert "aws_external_id" in text and "bucket 'lake-bucket'" in text


def test_without_a_role_the_403_reads_as_before() -> None:
    text = explain_engine_error(S3A_DENIED, None, {"other": PLAIN_CATALOG})
    assert text is not None and text.startswith("S3 denied s3:GetObject / s3:ListBucket")
    assert "role" not in text


def test_a_403_on_a_bucket_of_no_role_catalog_is_not_blamed_on_the_role() -> None:
    elsewhere = S3A_DENIED.replace("lake-bucket", "third-bucket")
    text = explain_engine_error(elsewhere, None, {"lakehouse": ROLE_CATALOG})
    assert text is not None and ARN not in text
