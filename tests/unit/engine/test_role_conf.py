"""A depot's IAM role in the Spark plan: s3a's AssumedRoleCredentialProvider, Iceberg's
AssumeRoleAwsClientFactory, and the keys, external id and STS settings kept out of SparkConf."""

from __future__ import annotations

import re

from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from dbt.adapters.lakehouse.engine.sparkconf import S3_FILE_IO, build_spark_conf_plan
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.depot.storage.s3.role_conf import (
    ASSUME_ROLE_FACTORY,
    ASSUMED_ROLE_PROVIDER,
)
from dbt.adapters.lakehouse.profile.secrets import REDACTION_REGEX

C = "spark.sql.catalog.lh"
ACCESS_KEY = "AKIAFAKEROLEBASE12"
SECRET_KEY = "fakeRoleBaseSecret-3d"
EXTERNAL_ID = "xid-fake-9a8b7c"
ARN = "arn:aws:iam::123456789012:role/writer"
KEYS = DepotSecrets(aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY))
S3 = S3Storage("bkt", "wh", "eu-west-1", None)
MOTO = S3Storage("bkt", "wh", "us-east-1", "http://127.0.0.1:5000")

# Hadoop 3.3 (Spark 3.5) is built on the AWS SDK v1, Hadoop 3.4 (Spark 4.1) on the v2.
SDK_CHAIN_OF_THE_LINE = (
    "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
    if installed_line().spark == "3.5"
    else "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
)


def role(**changes: object) -> AwsRole:
    fields: dict[str, object] = {"arn": ARN, "session_name": "dbt", "duration_seconds": 1800}
    fields.update(changes)
    return AwsRole(**fields)  # type: ignore[arg-type]


def depot(
    catalog: CatalogSpec, the_role: AwsRole, secrets: DepotSecrets = KEYS, storage: S3Storage = S3
) -> Depot:
    return Depot("d", storage, catalog, secrets, "test", aws_role=the_role)


def test_s3a_assumes_the_role_with_the_depot_keys() -> None:
    the_role = role(sts_endpoint="http://127.0.0.1:5000", sts_region="us-east-1")
    plan = build_spark_conf_plan(depot(CatalogSpec("hadoop"), the_role, storage=MOTO), "lh")
    conf = plan.conf
    h = "spark.hadoop.fs.s3a."
    assert conf[f"{h}aws.credentials.provider"] == ASSUMED_ROLE_PROVIDER
    assert conf[f"{h}assumed.role.arn"] == ARN
    assert conf[f"{h}assumed.role.session.name"] == "dbt"
    assert conf[f"{h}assumed.role.session.duration"] == "1800s"
    assert conf[f"{h}assumed.role.sts.endpoint"] == "http://127.0.0.1:5000"
    assert conf[f"{h}assumed.role.sts.endpoint.region"] == "us-east-1"
    assert conf[f"{h}assumed.role.credentials.provider"].endswith("SimpleAWSCredentialsProvider")
    # The keys that sign the AssumeRole stay runtime-only.
    assert plan.secret_hadoop_conf["fs.s3a.access.key"] == ACCESS_KEY
    assert ACCESS_KEY not in repr(conf) and SECRET_KEY not in repr(conf)


def test_s3a_without_keys_assumes_the_role_from_the_default_chain() -> None:
    the_role = role(sts_region="eu-west-1")  # AWS's STS: no endpoint, so no signing region
    plan = build_spark_conf_plan(depot(CatalogSpec("hadoop"), the_role, DepotSecrets()), "lh")
    provider = plan.conf["spark.hadoop.fs.s3a.assumed.role.credentials.provider"]
    assert provider == SDK_CHAIN_OF_THE_LINE
    assert "spark.hadoop.fs.s3a.assumed.role.sts.endpoint" not in plan.conf
    assert "spark.hadoop.fs.s3a.assumed.role.sts.endpoint.region" not in plan.conf


def test_a_mounted_depot_s_role_is_its_catalog_s_own() -> None:
    main = Depot("main", S3Storage("other", "", "eu-west-1"), CatalogSpec("hadoop"), KEYS, "t")
    plan = build_spark_conf_plan(main, "lh", {"m": depot(CatalogSpec("hadoop"), role())})
    assert plan.conf["spark.sql.catalog.m.hadoop.fs.s3a.assumed.role.arn"] == ARN
    assert "spark.hadoop.fs.s3a.assumed.role.arn" not in plan.conf


def test_s3fileio_uses_iceberg_s_assume_role_factory() -> None:
    the_role = role(
        external_id=Secret(EXTERNAL_ID),
        sts_endpoint="http://127.0.0.1:5000",
        sts_region="us-east-1",
    )
    catalog = CatalogSpec("jdbc", "jdbc:h2:mem:x", None, {"io-impl": S3_FILE_IO})
    plan = build_spark_conf_plan(depot(catalog, the_role, storage=MOTO), "lh")
    conf = plan.conf
    assert conf[f"{C}.client.factory"] == ASSUME_ROLE_FACTORY
    assert conf[f"{C}.client.assume-role.arn"] == ARN
    assert conf[f"{C}.client.assume-role.region"] == "us-east-1"
    assert conf[f"{C}.client.assume-role.session-name"] == "dbt"
    assert conf[f"{C}.client.assume-role.timeout-sec"] == "1800"
    assert plan.secret_catalog_conf[f"{C}.client.assume-role.external-id"] == EXTERNAL_ID
    # S3FileIO gets no static keys: they only sign the AssumeRole, from the JVM's properties.
    assert f"{C}.s3.access-key-id" not in plan.secret_catalog_conf
    assert plan.secret_system_properties == {
        "aws.region": "us-east-1",
        "aws.endpointUrlSts": "http://127.0.0.1:5000",
        "aws.accessKeyId": ACCESS_KEY,
        "aws.secretAccessKey": SECRET_KEY,
    }
    assert "aws-sdk-v2" in plan.jar_needs
    for value in (ACCESS_KEY, SECRET_KEY, EXTERNAL_ID):
        assert value not in repr(conf)


def test_glue_clients_assume_the_role() -> None:
    plan = build_spark_conf_plan(depot(CatalogSpec("glue"), role()), "lh")
    assert plan.conf[f"{C}.client.factory"] == ASSUME_ROLE_FACTORY
    assert plan.conf[f"{C}.client.assume-role.region"] == "eu-west-1"
    assert "aws.endpointUrlSts" not in plan.secret_system_properties


def test_a_rest_catalog_with_s3a_builds_no_iceberg_aws_client() -> None:
    plan = build_spark_conf_plan(depot(CatalogSpec("rest", "http://c"), role()), "lh")
    assert f"{C}.client.factory" not in plan.conf
    assert plan.secret_system_properties == {}


def test_spark_redacts_the_external_id_key() -> None:
    assert re.search(REDACTION_REGEX, f"{C}.client.assume-role.external-id")
