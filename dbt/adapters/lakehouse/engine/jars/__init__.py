"""Where the JVM jars come from: pinned artifacts, a user cache, and the fetch that fills it.

Every jar comes from its home, Maven Central: the Iceberg Spark runtime and `iceberg-aws-bundle`
(the AWS SDK v2 for S3FileIO and the Glue catalog), `hadoop-aws` of pyspark's own Hadoop version
with the AWS SDK v1 bundle it was built against (S3 through s3a), `hadoop-azure` of the same
Hadoop (ADLS Gen2 through ABFS) and `iceberg-azure-bundle` (the Azure SDK for ADLSFileIO),
Hadoop's GCS connector and `iceberg-gcp-bundle` (GCS), the SQLite JDBC driver (the embedded
catalog's store) and the H2 one (jdbc depots on H2 files). Where Maven Central cannot be
reached, each set but the cloud SDKs, hadoop-azure, the GCS connector and SQLite has a fallback
through another registry (docs/runtime.md, "Jars"): the Iceberg runtime from a PyPI wheel, H2
from Debian's `libh2-java`, s3a from a PyPI sdist. Each fetched jar is checked against a pinned
SHA-256 before it is cached; a present, verified jar is never fetched again. Every cached jar
can be replaced by a file of the user's through an env variable, and a profile that names
`spark.jars.packages` coordinates for a set replaces it (Spark resolves those).
"""

from dbt.adapters.lakehouse.engine.jars.cache import (
    CachedJarSet,
    JarSource,
    PinnedJar,
    cache_dir,
    sha256_of,
)
from dbt.adapters.lakehouse.engine.jars.fetch import (
    MAVEN_CENTRAL,
    extract_members,
    maven_central,
    maven_repository,
    pip_download_command,
)
from dbt.adapters.lakehouse.engine.jars.resolve import (
    InstallReport,
    iceberg_runtime_jar,
    install_all,
    resolve_jars,
    user_supplies_hadoop_aws,
)
from dbt.adapters.lakehouse.engine.jars.sets import (
    ABFS_JARS,
    AWS_SDK_V2_JARS,
    AZURE_SDK_JARS,
    CACHED_JARS,
    COMET_JARS,
    EMBEDDED_NEEDS,
    GCP_BUNDLE_JARS,
    GCS_CONNECTOR_JARS,
    H2_JARS,
    HADOOP_VERSION,
    ICEBERG_JARS,
    ICEBERG_RUNTIME,
    ICEBERG_VERSION,
    PACKAGES_REPLACING,
    POSTGRESQL_JARS,
    S3A_JARS,
    SCALA_BINARY_VERSION,
    SPARK_BINARY_VERSION,
    SQLITE_JARS,
    maven_jar,
    packages_cover,
)

__all__ = [
    "ABFS_JARS",
    "AWS_SDK_V2_JARS",
    "AZURE_SDK_JARS",
    "CACHED_JARS",
    "COMET_JARS",
    "EMBEDDED_NEEDS",
    "GCP_BUNDLE_JARS",
    "GCS_CONNECTOR_JARS",
    "H2_JARS",
    "HADOOP_VERSION",
    "ICEBERG_JARS",
    "ICEBERG_RUNTIME",
    "ICEBERG_VERSION",
    "MAVEN_CENTRAL",
    "PACKAGES_REPLACING",
    "POSTGRESQL_JARS",
    "S3A_JARS",
    "SQLITE_JARS",
    "SCALA_BINARY_VERSION",
    "SPARK_BINARY_VERSION",
    "CachedJarSet",
    "InstallReport",
    "JarSource",
    "PinnedJar",
    "cache_dir",
    "extract_members",
    "iceberg_runtime_jar",
    "install_all",
    "maven_central",
    "maven_jar",
    "maven_repository",
    "packages_cover",
    "pip_download_command",
    "resolve_jars",
    "sha256_of",
    "user_supplies_hadoop_aws",
]
