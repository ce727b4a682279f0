"""The depots and catalogs the Spark conf plan tests build plans for."""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from dbt.adapters.lakehouse.engine.sparkconf import (
    SparkConfPlan,
    build_spark_conf_plan,
)
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    Secret,
)
from dbt.adapters.lakehouse.profile.depot.storage.s3.conf import S3A_LIMITS, S3A_MARKERS
from unit.profile.depots import (
    ACCESS_KEY,
    APIKEY,
    JDBC_PASSWORD,
    JDBC_USER,
    SECRET_KEY,
    SESSION_TOKEN,
)

C = "spark.sql.catalog.lh"
ALL_SECRETS = DepotSecrets(
    aws_access_key=Secret(ACCESS_KEY),
    aws_secret_key=Secret(SECRET_KEY),
    aws_session_token=Secret(SESSION_TOKEN),
    apikey=Secret(APIKEY),
    jdbc_user=Secret(JDBC_USER),
    jdbc_password=Secret(JDBC_PASSWORD),
)
KEYS_ONLY = DepotSecrets(aws_access_key=Secret(ACCESS_KEY), aws_secret_key=Secret(SECRET_KEY))

S3 = S3Storage("bkt", "wh/", "eu-west-1", None)
LOCAL = LocalStorage(Path("/data/wh"))
CATALOGS = {
    "rest": CatalogSpec("rest", "https://rest.example/api", None, {}),
    "hadoop": CatalogSpec("hadoop", None, None, {}),
    "jdbc": CatalogSpec("jdbc", "jdbc:postgresql://db:5432/ice", None, {}),
    "glue": CatalogSpec("glue", None, None, {}),
    "nessie": CatalogSpec("nessie", "http://nessie:19120/api/v2", None, {}),
}

# Hadoop 3.3 (Spark 3.5) is built on the AWS SDK v1, Hadoop 3.4 (Spark 4.1) on the v2.
SDK_CHAIN_OF_THE_LINE = (
    "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
    if installed_line().spark == "3.5"
    else "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
)


def depot(
    catalog: CatalogSpec | str,
    storage: S3Storage | LocalStorage = S3,
    secrets: DepotSecrets = DepotSecrets(),  # noqa: B008 - frozen, so sharing is safe
) -> Depot:
    spec = CATALOGS[catalog] if isinstance(catalog, str) else catalog
    return Depot("d", storage, spec, secrets, "inline depot", embedded=False)


def plan_for(*args: object, **kwargs: object) -> SparkConfPlan:
    return build_spark_conf_plan(depot(*args, **kwargs), "lh")  # type: ignore[arg-type]


def s3a_keys(plan: SparkConfPlan) -> set[str]:
    """The s3a keys the depot decides (the fixed limits and marker policy left out)."""
    fixed = S3A_LIMITS.keys() | S3A_MARKERS.keys()
    return {k for k in plan.conf if k.startswith("spark.hadoop.") and k not in fixed}
