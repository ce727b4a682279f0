"""The Spark configuration a Depot implies: SparkConf keys, runtime-only secrets, jar sets.

This module owns the mapping from a resolved `Depot` to Spark and Iceberg settings (the keys
verified in RUNTIME.md, "Catalogs" and "S3 from the JVM"). It keeps secrets out of `conf`:
SparkConf is visible in the Spark UI, event logs and `getConf()`, so keys, tokens and passwords
go to `secret_catalog_conf` / `secret_hadoop_conf`, which the session applies at runtime. It
starts nothing and reads no environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbt.adapters.lakehouse.depot import (
    Depot,
    DepotSecrets,
    S3Storage,
    Secret,
    is_secret_key,
    uri_has_secret,
)
from dbt.adapters.lakehouse.exceptions import DepotConfigError

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
JDBC_CATALOG = "org.apache.iceberg.jdbc.JdbcCatalog"
GLUE_CATALOG = "org.apache.iceberg.aws.glue.GlueCatalog"
NESSIE_CATALOG = "org.apache.iceberg.nessie.NessieCatalog"
HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
SIMPLE_CREDENTIALS = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
TEMPORARY_CREDENTIALS = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
# Spark's default is `(?i)secret|password|token|access[.]key`; ours adds the depot's words.
REDACTION_REGEX = r"(?i)secret|password|token|access[.]key|apikey|credential"

_CATALOG_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# A dead endpoint must fail within seconds, not after the clients' default retry storms
# (Iceberg's REST client: no connect timeout of its own, 5 retries; s3a in Hadoop 3.3: 20 SDK
# attempts x 7 s3a retries, 200 s socket timeout). Profile `spark.conf` or catalog properties
# override each of them.
REST_CLIENT_LIMITS = {
    "rest.client.connection-timeout-ms": "10000",
    "rest.client.socket-timeout-ms": "60000",
    "rest.client.max-retries": "3",
}
S3A_LIMITS = {
    "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
    "spark.hadoop.fs.s3a.connection.timeout": "60000",
    "spark.hadoop.fs.s3a.attempts.maximum": "3",
    "spark.hadoop.fs.s3a.retry.limit": "3",
    "spark.hadoop.fs.s3a.retry.interval": "500ms",
}


@dataclass(frozen=True)
class SparkConfPlan:
    """What a SparkSession for one depot needs.

    conf: safe to put into SparkConf; contains no secret.
    secret_catalog_conf: `spark.sql.catalog.<c>.*` secrets, set with spark.conf.set at runtime
        (catalogs are created lazily, on first use, so this happens in time).
    secret_hadoop_conf: Hadoop keys without the `spark.hadoop.` prefix, set on the
        SparkContext's Hadoop configuration at runtime.
    jar_needs: logical jar sets: iceberg (always), h2 (H2 JDBC catalog), s3a (S3 through
        hadoop-aws), aws-sdk-v2 (Iceberg S3FileIO and the Glue catalog).
    """

    conf: dict[str, str]
    secret_catalog_conf: dict[str, str]
    secret_hadoop_conf: dict[str, str]
    jar_needs: frozenset[str]


def build_spark_conf_plan(depot: Depot, catalog_name: str) -> SparkConfPlan:
    _check_catalog_name(catalog_name)
    prefix = f"spark.sql.catalog.{catalog_name}"
    catalog = depot.catalog
    storage = depot.storage
    secrets = depot.secrets
    conf: dict[str, str] = {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: SPARK_CATALOG,
        "spark.sql.defaultCatalog": catalog_name,
        f"{prefix}.warehouse": catalog.warehouse or storage.warehouse_uri,
        "spark.redaction.regex": REDACTION_REGEX,
        # Iceberg's CachingCatalog keeps serving a table's old metadata (up to 30 s) after
        # another process commits; a dbt run must see the table as it is now.
        f"{prefix}.cache-enabled": "false",
    }
    secret_catalog: dict[str, str] = {}
    secret_hadoop: dict[str, str] = {}
    needs = {"iceberg"}

    def put_uri(uri: str | None) -> None:
        if uri is not None:
            # A JDBC URL may carry ?password=, an HTTP one user:password@.
            target = secret_catalog if uri_has_secret(uri) else conf
            target[f"{prefix}.uri"] = uri

    if catalog.type == "jdbc":
        conf[f"{prefix}.catalog-impl"] = JDBC_CATALOG
        conf[f"{prefix}.jdbc.schema-version"] = "V1"
        put_uri(catalog.uri)
        _put_secret(secret_catalog, f"{prefix}.jdbc.user", secrets.jdbc_user)
        _put_secret(secret_catalog, f"{prefix}.jdbc.password", secrets.jdbc_password)
        if (catalog.uri or "").lower().startswith("jdbc:h2:"):
            needs.add("h2")
    elif catalog.type == "rest":
        conf[f"{prefix}.type"] = "rest"
        put_uri(catalog.uri)
        _put_secret(secret_catalog, f"{prefix}.token", secrets.apikey)
        conf.update({f"{prefix}.{key}": value for key, value in REST_CLIENT_LIMITS.items()})
    elif catalog.type == "hadoop":
        conf[f"{prefix}.type"] = "hadoop"
    elif catalog.type == "glue":
        if not isinstance(storage, S3Storage):
            raise DepotConfigError(
                f"The glue catalog of depot '{depot.name}' needs S3 storage; got a local "
                f"folder ({storage.warehouse_uri}). Accepted: storageType s3."
            )
        conf[f"{prefix}.catalog-impl"] = GLUE_CATALOG
        conf[f"{prefix}.client.region"] = storage.region
    elif catalog.type == "nessie":
        conf[f"{prefix}.catalog-impl"] = NESSIE_CATALOG
        conf[f"{prefix}.ref"] = "main"
        put_uri(catalog.uri)
        if secrets.apikey:
            conf[f"{prefix}.authentication.type"] = "BEARER"
            _put_secret(secret_catalog, f"{prefix}.authentication.token", secrets.apikey)
    else:
        raise DepotConfigError(
            f"Depot '{depot.name}' has catalog type {catalog.type!r}, which has no Spark "
            "configuration. Accepted: rest, hadoop, jdbc, glue, nessie."
        )

    if isinstance(storage, S3Storage):
        default_io = S3_FILE_IO if catalog.type == "glue" else HADOOP_FILE_IO
        io_impl = catalog.properties.get("io-impl", default_io)
        conf[f"{prefix}.io-impl"] = io_impl
        if io_impl == S3_FILE_IO:
            _s3fileio(storage, secrets, prefix, conf, secret_catalog)
            needs.add("aws-sdk-v2")
        else:
            _s3a(storage, secrets, conf, secret_hadoop)
            needs.add("s3a")
    if catalog.type == "glue":
        needs.add("aws-sdk-v2")

    # Passed-through properties win over what is derived above; secret-looking ones are
    # applied at runtime like the depot's own secrets.
    for key, value in catalog.properties.items():
        full_key = f"{prefix}.{key}"
        if is_secret_key(key):
            conf.pop(full_key, None)
            secret_catalog[full_key] = value
        else:
            secret_catalog.pop(full_key, None)
            conf[full_key] = value

    return SparkConfPlan(
        conf=conf,
        secret_catalog_conf=secret_catalog,
        secret_hadoop_conf=secret_hadoop,
        jar_needs=frozenset(needs),
    )


def _s3a(
    storage: S3Storage, secrets: DepotSecrets, conf: dict[str, str], secret_hadoop: dict[str, str]
) -> None:
    """Route 1: hadoop-aws s3a serves both s3:// and s3a:// through HadoopFileIO."""
    conf["spark.hadoop.fs.s3.impl"] = S3A_FILESYSTEM
    conf.update(S3A_LIMITS)
    conf["spark.hadoop.fs.s3a.endpoint.region"] = storage.region
    if storage.endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = storage.endpoint
        # S3-compatible stores (MinIO, moto) rarely have per-bucket DNS names.
        conf["spark.hadoop.fs.s3a.path.style.access"] = "true"
        if storage.endpoint.lower().startswith("http://"):
            conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false"
    if secrets.aws_access_key and secrets.aws_secret_key:
        secret_hadoop["fs.s3a.access.key"] = secrets.aws_access_key.reveal()
        secret_hadoop["fs.s3a.secret.key"] = secrets.aws_secret_key.reveal()
        provider = SIMPLE_CREDENTIALS
        if secrets.aws_session_token:
            secret_hadoop["fs.s3a.session.token"] = secrets.aws_session_token.reveal()
            provider = TEMPORARY_CREDENTIALS
        conf["spark.hadoop.fs.s3a.aws.credentials.provider"] = provider
    # Without keys the provider stays unset: s3a's default chain (env, profile, instance role).


def _s3fileio(
    storage: S3Storage,
    secrets: DepotSecrets,
    prefix: str,
    conf: dict[str, str],
    secret_catalog: dict[str, str],
) -> None:
    """Route 2: Iceberg's own S3FileIO (AWS SDK v2), configured as catalog properties."""
    conf[f"{prefix}.client.region"] = storage.region
    if storage.endpoint:
        conf[f"{prefix}.s3.endpoint"] = storage.endpoint
        conf[f"{prefix}.s3.path-style-access"] = "true"
    if secrets.aws_access_key and secrets.aws_secret_key:
        secret_catalog[f"{prefix}.s3.access-key-id"] = secrets.aws_access_key.reveal()
        secret_catalog[f"{prefix}.s3.secret-access-key"] = secrets.aws_secret_key.reveal()
        _put_secret(secret_catalog, f"{prefix}.s3.session-token", secrets.aws_session_token)


def _put_secret(target: dict[str, str], key: str, secret: Secret | None) -> None:
    if secret:
        target[key] = secret.reveal()


def _check_catalog_name(catalog_name: str) -> None:
    if catalog_name == "spark_catalog":
        raise DepotConfigError(
            "The catalog name (profile `database`) cannot be 'spark_catalog': that is Spark's "
            "built-in session catalog, which an Iceberg SparkCatalog must not replace. "
            "Accepted: any other name, e.g. lakehouse (the default)."
        )
    if not _CATALOG_NAME_RE.match(catalog_name or ""):
        raise DepotConfigError(
            f"The catalog name (profile `database`) {catalog_name!r} cannot be a Spark catalog "
            "name: it becomes part of the conf key spark.sql.catalog.<name>. Accepted: a letter "
            "or '_' followed by letters, digits, '_' or '-', e.g. lakehouse."
        )
