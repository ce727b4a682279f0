"""S3 in the Spark configuration (sparkconf.py's S3 half): the two routes to a bucket, hadoop-aws
s3a under Iceberg's HadoopFileIO and Iceberg's own S3FileIO, with their limits, and the rule
that two depots sharing a bucket share its settings. Keys go to the runtime-only secret maps.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import Depot, DepotSecrets, S3Storage
from dbt.adapters.lakehouse.profile.secrets import Secret

S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
SIMPLE_CREDENTIALS = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
TEMPORARY_CREDENTIALS = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
# s3a in Hadoop 3.3: 20 SDK attempts x 7 s3a retries and a 200 s socket timeout by default; a
# dead endpoint must fail within seconds. Profile `spark.conf` overrides each.
S3A_LIMITS = {
    "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
    "spark.hadoop.fs.s3a.connection.timeout": "60000",
    "spark.hadoop.fs.s3a.attempts.maximum": "3",
    "spark.hadoop.fs.s3a.retry.limit": "3",
    "spark.hadoop.fs.s3a.retry.interval": "500ms",
}
# Keep directory markers (Hadoop 3.4's default; understood by the 3.3 client in pyspark): with
# 3.3's `delete`, every file written costs a bulk DELETE of its parents' markers, which Iceberg's
# object layout never needs, and which stores backed by a file system (S3Proxy) refuse with
# 500s that s3a retries for seconds per file.
S3A_MARKERS = {"spark.hadoop.fs.s3a.directory.marker.retention": "keep"}


def claim_bucket(owners: dict[str, tuple[str, Depot]], catalog_name: str, depot: Depot) -> None:
    """Hadoop caches one S3 client per bucket (scheme, bucket, user), built from the settings of
    whichever catalog reached the bucket first: two depots on one bucket must agree on them."""
    storage = depot.storage
    assert isinstance(storage, S3Storage)  # the registry hands it S3 depots only
    earlier = owners.get(storage.bucket)
    if earlier is None:
        owners[storage.bucket] = (catalog_name, depot)
        return
    other_name, other = earlier
    other_storage = other.storage
    assert isinstance(other_storage, S3Storage)
    same = (
        (other_storage.region, other_storage.endpoint) == (storage.region, storage.endpoint)
        and other.secrets.aws_access_key == depot.secrets.aws_access_key
        and other.secrets.aws_secret_key == depot.secrets.aws_secret_key
        and other.secrets.aws_session_token == depot.secrets.aws_session_token
    )
    if not same:
        raise DepotConfigError(
            f"Depots '{other.name}' (catalog {other_name}) and '{depot.name}' (catalog "
            f"{catalog_name}) both use bucket '{storage.bucket}' with different credentials, "
            "region or endpoint; Hadoop keeps one S3 client per bucket, so one bucket has one set. "
            "Accepted: depots on different buckets, or the same settings for a shared bucket."
        )


def s3a_conf(
    storage: S3Storage,
    secrets: DepotSecrets,
    conf: dict[str, str],
    secret_hadoop: dict[str, str],
    secret_catalog: dict[str, str],
    catalog_prefix: str | None = None,
) -> str:
    """Route 1: hadoop-aws s3a serves both s3:// and s3a:// through HadoopFileIO; returns the
    prefix its settings went under (the caller adds the credentials provider of a role).

    With `catalog_prefix`, every setting is a catalog property (`<prefix>.hadoop.fs.s3a.*`):
    Iceberg applies it to that catalog's Hadoop conf alone, which its FileIO carries to the
    executors, so the catalog keeps its own keys and endpoint beside the session's.
    """
    if catalog_prefix is None:
        scope, secret_scope, secret_target = "spark.hadoop.fs.s3a.", "fs.s3a.", secret_hadoop
    else:
        scope = secret_scope = f"{catalog_prefix}.hadoop.fs.s3a."
        secret_target = secret_catalog
    conf["spark.hadoop.fs.s3.impl"] = S3A_FILESYSTEM
    conf.update(S3A_LIMITS)
    conf.update(S3A_MARKERS)
    conf[f"{scope}endpoint.region"] = storage.region
    if storage.endpoint:
        conf[f"{scope}endpoint"] = storage.endpoint
        # S3-compatible stores (MinIO, moto) rarely have per-bucket DNS names.
        conf[f"{scope}path.style.access"] = "true"
        if storage.endpoint.lower().startswith("http://"):
            conf[f"{scope}connection.ssl.enabled"] = "false"
    if secrets.aws_access_key and secrets.aws_secret_key:
        secret_target[f"{secret_scope}access.key"] = secrets.aws_access_key.reveal()
        secret_target[f"{secret_scope}secret.key"] = secrets.aws_secret_key.reveal()
        provider = SIMPLE_CREDENTIALS
        if secrets.aws_session_token:
            secret_target[f"{secret_scope}session.token"] = secrets.aws_session_token.reveal()
            provider = TEMPORARY_CREDENTIALS
        conf[f"{scope}aws.credentials.provider"] = provider
    return scope


def s3fileio_conf(
    storage: S3Storage,
    secrets: DepotSecrets,
    prefix: str,
    conf: dict[str, str],
    secret_catalog: dict[str, str],
    with_keys: bool = True,
) -> None:
    """Route 2: Iceberg's S3FileIO (SDK v2) as catalog properties; no keys with a role."""
    conf[f"{prefix}.client.region"] = storage.region
    if storage.endpoint:
        conf[f"{prefix}.s3.endpoint"] = storage.endpoint
        conf[f"{prefix}.s3.path-style-access"] = "true"
    if with_keys and secrets.aws_access_key and secrets.aws_secret_key:
        secret_catalog[f"{prefix}.s3.access-key-id"] = secrets.aws_access_key.reveal()
        secret_catalog[f"{prefix}.s3.secret-access-key"] = secrets.aws_secret_key.reveal()
        put_secret(secret_catalog, f"{prefix}.s3.session-token", secrets.aws_session_token)


def put_secret(target: dict[str, str], key: str, secret: Secret | None) -> None:
    if secret:
        target[key] = secret.reveal()
