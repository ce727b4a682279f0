"""The Spark, Hadoop and JVM settings that make a depot's AWS clients act as its IAM role.

Two routes, as engine/sparkconf.py chooses them (docs/profiles-and-depots.md, "AWS roles"):
- s3a (HadoopFileIO): hadoop-aws's AssumedRoleCredentialProvider, which assumes the role with
  the depot's keys (or the SDK's default chain) and renews the session before it expires.
  Hadoop 3.3.4 sends no external id; depot resolution refuses that combination.
- Iceberg's AWS clients (S3FileIO, Glue): AssumeRoleAwsClientFactory (`client.factory`) with
  `client.assume-role.*`; the SDK's StsAssumeRoleCredentialsProvider renews the session. Its
  STS client is built from the SDK's defaults alone, so the keys it assumes the role with, its
  region and, for an S3-compatible store, its endpoint reach it as the driver JVM's system
  properties (aws.accessKeyId..., aws.region, aws.endpointUrlSts).
Nothing here is logged; the external id and keys go only to the secret parts of the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from dbt.adapters.lakehouse.profile.depot.aws_role import AwsRole
from dbt.adapters.lakehouse.profile.depot.model import DepotSecrets
from dbt.adapters.lakehouse.profile.depot.storage.s3.conf import (
    SIMPLE_CREDENTIALS,
    TEMPORARY_CREDENTIALS,
)

ASSUMED_ROLE_PROVIDER = "org.apache.hadoop.fs.s3a.auth.AssumedRoleCredentialProvider"
# The AWS SDK's default chain: environment, system properties, web identity (EKS), profile,
# container and instance credentials. Also s3a's provider for a depot with neither keys nor a
# role: s3a's own default list (Hadoop 3.3.4) has no web identity and no ~/.aws profile. Hadoop
# 3.3 (Spark 3.5) is built on the SDK v1, Hadoop 3.4 (Spark 4.1) on the SDK v2.
SDK_DEFAULT_CHAIN = (
    "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
    if installed_line().hadoop.startswith("3.3.")
    else "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
)
ASSUME_ROLE_FACTORY = "org.apache.iceberg.aws.AssumeRoleAwsClientFactory"
# The SDK v2's service-specific endpoint override (read when a client is built).
STS_ENDPOINT_PROPERTY = "aws.endpointUrlSts"
REGION_PROPERTY = "aws.region"
ROLE_SYSTEM_PROPERTIES = (REGION_PROPERTY, STS_ENDPOINT_PROPERTY)
BASE_KEY_PROPERTIES = {
    "aws_access_key": "aws.accessKeyId",
    "aws_secret_key": "aws.secretAccessKey",
    "aws_session_token": "aws.sessionToken",
}


def s3a_role_conf(role: AwsRole, secrets: DepotSecrets, scope: str) -> dict[str, str]:
    """s3a keys under `scope` (`spark.hadoop.fs.s3a.` or `<catalog>.hadoop.fs.s3a.`) that
    assume `role`; the depot's keys, if any, stay where _s3a put them and sign the AssumeRole."""
    if secrets.aws_access_key and secrets.aws_secret_key:
        base = TEMPORARY_CREDENTIALS if secrets.aws_session_token else SIMPLE_CREDENTIALS
    else:
        base = SDK_DEFAULT_CHAIN
    conf = {
        f"{scope}aws.credentials.provider": ASSUMED_ROLE_PROVIDER,
        f"{scope}assumed.role.arn": role.arn,
        f"{scope}assumed.role.session.name": role.session_name,
        f"{scope}assumed.role.session.duration": f"{role.duration_seconds}s",
        f"{scope}assumed.role.credentials.provider": base,
    }
    if role.sts_endpoint:
        # s3a signs for this region (required with an endpoint); without one, AWS's STS.
        conf[f"{scope}assumed.role.sts.endpoint"] = role.sts_endpoint
        conf[f"{scope}assumed.role.sts.endpoint.region"] = role.sts_region or "us-east-1"
    return conf


@dataclass(frozen=True)
class IcebergRoleConf:
    """Catalog properties (conf: plain, secret: runtime-only) and JVM system properties."""

    conf: dict[str, str]
    secret: dict[str, str] = field(default_factory=dict)
    system_properties: dict[str, str] = field(default_factory=dict)


def iceberg_role_conf(
    role: AwsRole, secrets: DepotSecrets, prefix: str, region: str
) -> IcebergRoleConf:
    """Catalog `prefix`'s Iceberg AWS clients (S3FileIO, Glue) as `role`, in `region`."""
    conf = {
        f"{prefix}.client.factory": ASSUME_ROLE_FACTORY,
        f"{prefix}.client.assume-role.arn": role.arn,
        f"{prefix}.client.assume-role.region": region,
        f"{prefix}.client.assume-role.session-name": role.session_name,
        f"{prefix}.client.assume-role.timeout-sec": str(role.duration_seconds),
    }
    secret: dict[str, str] = {}
    if role.external_id:
        secret[f"{prefix}.client.assume-role.external-id"] = role.external_id.reveal()
    system: dict[str, str] = {REGION_PROPERTY: role.sts_region or region}
    if role.sts_endpoint:
        system[STS_ENDPOINT_PROPERTY] = role.sts_endpoint
    if secrets.aws_access_key and secrets.aws_secret_key:
        for name, prop in BASE_KEY_PROPERTIES.items():
            value = getattr(secrets, name)
            if value:
                system[prop] = value.reveal()
    return IcebergRoleConf(conf=conf, secret=secret, system_properties=system)
