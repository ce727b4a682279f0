"""The Spark configuration a Depot implies: SparkConf keys, runtime-only secrets, jar sets.

This module owns the mapping from a resolved `Depot` to Spark and Iceberg settings (the keys
verified in docs/runtime.md, "Catalogs" and "S3 configuration"; each storage's own settings are its
kind's, from profile/depot/storage/'s registry). It keeps secrets out of `conf`:
SparkConf is visible in the Spark UI, event logs and `getConf()`, so keys, tokens and passwords go
to `secret_catalog_conf` / `secret_hadoop_conf`, which the session applies at runtime. It starts
nothing and reads no environment. `catalog_context` says what an error message may tell of a catalog
(name, type, depot, region, Glue endpoint; no secrets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import Depot
from dbt.adapters.lakehouse.profile.depot.storage.kind import ConfParts, Owners
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
from dbt.adapters.lakehouse.profile.depot.storage.s3.conf import put_secret
from dbt.adapters.lakehouse.profile.depot.storage.s3.role_conf import BASE_KEY_PROPERTIES
from dbt.adapters.lakehouse.profile.secrets import (
    REDACTION_REGEX,
    is_secret_key,
    uri_has_secret,
)

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
JDBC_CATALOG = "org.apache.iceberg.jdbc.JdbcCatalog"
GLUE_CATALOG = "org.apache.iceberg.aws.glue.GlueCatalog"
NESSIE_CATALOG = "org.apache.iceberg.nessie.NessieCatalog"
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
# Iceberg's Glue client (AWS SDK v2) takes credentials only from a provider class with a static
# `create()` / `create(Map)` (`client.credentials-provider`), and no class in the Iceberg runtime
# or the AWS bundle holds static keys that way. So the depot's keys reach it as the driver JVM's
# system properties, read by the first provider of the SDK's default chain (this class) when
# the client signs a request. The chain stays the default: without them (a depot without keys,
# or an engine that does not set them) it goes on to the variables, profile and role, as before.
SYSTEM_PROPERTY_CREDENTIALS = (
    "software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider"
)
GLUE_KEY_PROPERTIES = BASE_KEY_PROPERTIES

_CATALOG_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# A dead endpoint must fail within seconds, not after the client's default retry storm
# (Iceberg's REST client: no connect timeout of its own, 5 retries; s3a's: storage/s3/conf.py).
# Catalog properties override each of them.
REST_CLIENT_LIMITS = {
    "rest.client.connection-timeout-ms": "10000",
    "rest.client.socket-timeout-ms": "60000",
    "rest.client.max-retries": "3",
}


@dataclass(frozen=True)
class SparkConfPlan:
    """What a SparkSession for one depot needs.

    conf: safe to put into SparkConf; contains no secret.
    secret_catalog_conf: `spark.sql.catalog.<c>.*` secrets, set with spark.conf.set at runtime
        (catalogs are created lazily, on first use, so this happens in time).
    secret_hadoop_conf: Hadoop keys without the `spark.hadoop.` prefix, set on the
        SparkContext's Hadoop configuration at runtime.
    jar_needs: logical jar sets: iceberg (always), h2 / sqlite / postgresql (a JDBC catalog's
        driver),
        s3a (S3 through hadoop-aws), aws-sdk-v2 (Iceberg S3FileIO and the Glue catalog),
        gcs-connector / gcp-bundle (GCS, profile/depot/storage/gcs/conf.py).
    secret_system_properties: the driver JVM's system properties a glue catalog's client reads
        its keys from (GLUE_KEY_PROPERTIES), set with java.lang.System.setProperty before the
        catalog's first request and cleared when the session stops. One JVM has one set, so
        the depots of one session must agree on them (build_spark_conf_plan checks).
    """

    conf: dict[str, str]
    secret_catalog_conf: dict[str, str]
    secret_hadoop_conf: dict[str, str]
    jar_needs: frozenset[str]
    secret_system_properties: dict[str, str] = field(default_factory=dict)


def build_spark_conf_plan(
    depot: Depot, catalog_name: str, mounted: Mapping[str, Depot] | None = None
) -> SparkConfPlan:
    """The plan for a session whose default catalog `catalog_name` is `depot`, with the
    depots in `mounted` (catalog name -> depot) beside it, each keeping its own S3 settings
    and credentials."""
    plan = _catalog_plan(depot, catalog_name, default=True)
    # Each kind's claims apart: a bucket name means one thing to S3, another to GCS.
    owners: dict[str, Owners] = {}
    _claim(owners, catalog_name, depot)
    for name, other in (mounted or {}).items():
        if name == catalog_name:
            raise DepotConfigError(
                f"Profile `depots:` mounts a depot as catalog '{name}', the name the profile's "
                "own depot is mounted as (profile `database`). Accepted: any other catalog name."
            )
        _claim(owners, name, other)
        plan = _merged(plan, _catalog_plan(other, name, default=False), other, name)
    return plan


def _claim(owners: dict[str, Owners], catalog_name: str, depot: Depot) -> None:
    kind = kind_of(depot.storage)
    kind.claim(owners.setdefault(kind.storage_type, {}), catalog_name, depot)


def catalog_context(depot: Depot, catalog_name: str, default: bool) -> CatalogContext:
    """What a message may say about where the catalog looks things up (no secrets)."""
    where = kind_of(depot.storage).error_context(depot)
    glue = depot.catalog.type == "glue"
    return CatalogContext(
        name=catalog_name,
        kind=depot.catalog.type,
        depot=depot.name,
        region=where.get("region"),
        endpoint=depot.catalog.properties.get("glue.endpoint") if glue else None,
        default=default,
        bucket=where.get("bucket"),
        role_arn=depot.aws_role.arn if depot.aws_role else None,
    )


def _merged(
    first: SparkConfPlan, second: SparkConfPlan, depot: Depot, catalog_name: str
) -> SparkConfPlan:
    ours, theirs = first.secret_system_properties, second.secret_system_properties
    if ours and theirs and ours != theirs:
        raise DepotConfigError(
            f"Depot '{depot.name}' (catalog {catalog_name}) is a glue catalog with other AWS keys "
            "than another glue catalog of this profile; Iceberg's Glue client reads its keys "
            "from the driver JVM's system properties, so one session has one set. Accepted: "
            "glue depots with the same keys (or none, for the default AWS chain), or one glue "
            "depot per profile."
        )
    return SparkConfPlan(
        conf={**first.conf, **second.conf},
        secret_catalog_conf={**first.secret_catalog_conf, **second.secret_catalog_conf},
        secret_hadoop_conf={**first.secret_hadoop_conf, **second.secret_hadoop_conf},
        jar_needs=first.jar_needs | second.jar_needs,
        secret_system_properties={
            **first.secret_system_properties,
            **second.secret_system_properties,
        },
    )


def _catalog_plan(depot: Depot, catalog_name: str, default: bool) -> SparkConfPlan:
    _check_catalog_name(catalog_name)
    prefix = f"spark.sql.catalog.{catalog_name}"
    catalog = depot.catalog
    storage = depot.storage
    secrets = depot.secrets
    conf: dict[str, str] = {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: SPARK_CATALOG,
        f"{prefix}.warehouse": catalog.warehouse or storage.warehouse_uri,
        "spark.redaction.regex": REDACTION_REGEX,
        # Iceberg's CachingCatalog keeps serving a table's old metadata (up to 30 s) after
        # another process commits; a dbt run must see the table as it is now.
        f"{prefix}.cache-enabled": "false",
    }
    if default:
        conf["spark.sql.defaultCatalog"] = catalog_name
    secret_catalog: dict[str, str] = {}
    secret_hadoop: dict[str, str] = {}
    secret_system: dict[str, str] = {}
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
        put_secret(secret_catalog, f"{prefix}.jdbc.user", secrets.jdbc_user)
        put_secret(secret_catalog, f"{prefix}.jdbc.password", secrets.jdbc_password)
        driver = jdbc_driver_need(catalog.uri)
        if driver:
            needs.add(driver)
    elif catalog.type == "rest":
        conf[f"{prefix}.type"] = "rest"
        put_uri(catalog.uri)
        put_secret(secret_catalog, f"{prefix}.token", secrets.apikey)
        conf.update({f"{prefix}.{key}": value for key, value in REST_CLIENT_LIMITS.items()})
    elif catalog.type == "hadoop":
        conf[f"{prefix}.type"] = "hadoop"
    elif catalog.type == "glue":
        # Its region, keys and SDK are the S3 kind's: depot resolution refuses glue on other
        # storage (storage/s3's check_catalog), so a resolved glue Depot is an S3 one.
        conf[f"{prefix}.catalog-impl"] = GLUE_CATALOG
    elif catalog.type == "nessie":
        conf[f"{prefix}.catalog-impl"] = NESSIE_CATALOG
        conf[f"{prefix}.ref"] = "main"
        # Nessie's default client on Java 11+ (the JDK HttpClient) once failed a commit with
        # "header parser received no bytes" on a pooled connection under two dbt threads
        # (CommitStateUnknownException); Nessie's client docs name URLConnection as the fix.
        conf[f"{prefix}.client-builder-name"] = "URLConnection"
        put_uri(catalog.uri)
        if secrets.apikey:
            conf[f"{prefix}.authentication.type"] = "BEARER"
            put_secret(secret_catalog, f"{prefix}.authentication.token", secrets.apikey)
    else:
        raise DepotConfigError(
            f"Depot '{depot.name}' has catalog type {catalog.type!r}, which has no Spark "
            "configuration. Accepted: rest, hadoop, jdbc, glue, nessie."
        )

    parts = ConfParts(conf, secret_catalog, secret_hadoop, secret_system, needs)
    kind_of(storage).add_catalog_conf(depot, prefix, default, parts)

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
        secret_system_properties=secret_system,
    )


# The JDBC drivers the adapter fetches itself, by the URL's subprotocol; another database's
# driver goes into the profile's `spark.jars`.
JDBC_DRIVER_NEEDS = {"h2": "h2", "sqlite": "sqlite", "postgresql": "postgresql"}


def jdbc_driver_need(uri: str | None) -> str | None:
    """The jar set holding the driver for a JDBC catalog uri (jdbc:<subprotocol>:...)."""
    scheme, _, rest = (uri or "").partition(":")
    subprotocol = rest.partition(":")[0].lower()
    return JDBC_DRIVER_NEEDS.get(subprotocol) if scheme.lower() == "jdbc" else None


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
