"""The jar sets a session may need, each pinned by SHA-256 per source, in preference order.

Maven Central first; where another registry has a build of the same jars, it follows as the
fallback (docs/runtime.md, "Jars"). Also which `spark.jars.packages` coordinates replace a set.
The sets are the installed PySpark's engine line's (lines.py): its Spark, Scala and Hadoop.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars.cache import CachedJarSet, JarSource, PinnedJar
from dbt.adapters.lakehouse.engine.jars.fetch import (
    debian_package,
    maven_central,
    pypi_sdist,
)
from dbt.adapters.lakehouse.engine.jars.lines import (
    COMET_LINES,
    COMET_VERSION,
    ICEBERG_VERSION,
    installed_line,
)

LINE = installed_line()
SPARK_BINARY_VERSION = LINE.spark
SCALA_BINARY_VERSION = LINE.scala
# Iceberg's runtime for each line (Maven Central's bytes).
_ICEBERG_RUNTIME_SHA256 = {
    "3.5": "8dd8c90e54ed1a20f2461309d047a255ee56382eb7c0a46162b27a4936fd86dc",
    "4.1": "3123c3798af642dd537230923548e013ef41cc28b6626e5225808cf5670a0f82",
}


def maven_jar(
    group: str, artifact: str, version: str, sha256: str, env_override: str, classifier: str = ""
) -> JarSource:
    """One Maven Central artifact as a source, pinned by its sha256."""
    filename = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"
    coordinates = f"{group}:{artifact}:{version}{':' + classifier if classifier else ''}"
    return JarSource(
        origin=f"Maven Central {coordinates}",
        jars=(PinnedJar(filename, sha256, filename, env_override),),
        fetch=maven_central(group, artifact, version, classifier),
    )


def _debian_jar(
    package: str, version: str, member: str, filename: str, sha256: str, env_override: str
) -> JarSource:
    """One jar inside a Debian package, cached under a name of its own: another build than
    Maven Central's, so it never passes for the canonical file."""
    return JarSource(
        origin=f"Debian package {package} {version}",
        jars=(PinnedJar(filename, sha256, member, env_override),),
        fetch=debian_package(package, version),
    )


def _maven_jars(*sources: JarSource) -> JarSource:
    """Several Maven artifacts as one source: the set is cached whole or not at all."""

    def fetch(scratch: Path) -> Path:
        for source in sources:
            source.fetch(scratch)
        return scratch

    return JarSource(
        origin=" + ".join(source.origin for source in sources),
        jars=tuple(jar for source in sources for jar in source.jars),
        fetch=fetch,
    )


ICEBERG_RUNTIME = f"iceberg-spark-runtime-{SPARK_BINARY_VERSION}_{SCALA_BINARY_VERSION}"
ICEBERG_JARS = CachedJarSet(
    need="iceberg",
    sources=(
        maven_jar(
            "org.apache.iceberg",
            ICEBERG_RUNTIME,
            ICEBERG_VERSION,
            _ICEBERG_RUNTIME_SHA256[LINE.spark],
            "LAKEHOUSE_ICEBERG_JAR",
        ),
    ),
)

H2_JARS = CachedJarSet(
    need="h2",
    sources=(
        maven_jar(
            "com.h2database",
            "h2",
            "2.1.214",
            "d623cdc0f61d218cf549a8d09f1c391ff91096116b22e2475475fce4fbe72bd0",
            "LAKEHOUSE_H2_JAR",
        ),
        _debian_jar(
            "libh2-java",
            "2.1.214-1",
            member="usr/share/java/h2-2.1.214.jar",
            filename="h2-2.1.214-debian.jar",
            sha256="19654e17771f88dadc5444ca12db2269f2ba8747c00087e18f298dfd53017014",
            env_override="LAKEHOUSE_H2_JAR",
        ),
    ),
)

# The embedded lakehouse's catalog driver (dbt/adapters/lakehouse/embedded/), and any jdbc depot's
# on a SQLite file. Maven Central only: Debian's libxerial-sqlite-jdbc-java is built without the
# native SQLite libraries the jar loads (they are in libxerial-sqlite-jdbc-jni, installed as a
# system library a jar set cannot point the JVM at), so it cannot serve as a fallback.
SQLITE_JARS = CachedJarSet(
    need="sqlite",
    sources=(
        maven_jar(
            "org.xerial",
            "sqlite-jdbc",
            "3.54.1.0",
            "f8dce420a6016278497f4f0560f65602b9db858de141b541cf91a4644ebe4639",
            "LAKEHOUSE_SQLITE_JAR",
        ),
    ),
)

# The JDBC catalog's driver for a PostgreSQL database (a jdbc depot whose uri is
# jdbc:postgresql:...).
POSTGRESQL_JARS = CachedJarSet(
    need="postgresql",
    sources=(
        maven_jar(
            "org.postgresql",
            "postgresql",
            "42.7.14",
            "73914527305a40cce504b0d3d90b23caf565136912d607ae8ae7c5895512332c",
            "LAKEHOUSE_POSTGRESQL_JAR",
        ),
        _debian_jar(
            "libpostgresql-jdbc-java",
            "42.5.5-0+deb12u1",
            member="usr/share/java/postgresql.jar",
            filename="postgresql-42.5.5-debian.jar",
            sha256="e68b153660caa7f47505d323829e995bd84fec7a30d2160f3ca272f774569a22",
            env_override="LAKEHOUSE_POSTGRESQL_JAR",
        ),
    ),
)

# The AWS SDK v2 (2.54.17), unshaded, as Iceberg's S3FileIO and GlueCatalog load it (Iceberg's
# aws classes are in the runtime jar; the bundle holds only the SDK). No other registry ships the
# SDK unshaded: there is no fallback, and the error names the profile's `spark.jars` instead.
_ICEBERG_AWS_BUNDLE = maven_jar(
    "org.apache.iceberg",
    "iceberg-aws-bundle",
    ICEBERG_VERSION,
    "dd7e49ffa4ac9b215bed846581991259e3aec9bb2fa08d6cec029c46cd66d957",
    "LAKEHOUSE_ICEBERG_AWS_BUNDLE_JAR",
)
AWS_SDK_V2_JARS = CachedJarSet(need="aws-sdk-v2", sources=(_ICEBERG_AWS_BUNDLE,), required=False)

# docs/runtime.md, "S3 through s3a": hadoop-aws of the Hadoop version inside pyspark's wheel,
# with the AWS SDK it was built against. Hadoop 3.3 (Spark 3.5) uses the SDK v1 bundle; Hadoop
# 3.4 (Spark 4.1) the SDK v2, whose classes come from the Iceberg AWS bundle (AWS_SDK_V2_JARS)
# plus the transfer manager and Apache HTTP client it lacks, of the same SDK version (2.54.17),
# instead of the 600 MB `software.amazon.awssdk:bundle` hadoop-aws's POM names.
HADOOP_VERSION = LINE.hadoop
_HADOOP_AWS_SHA256 = {
    "3.3.4": "53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a",
    "3.4.2": "d2d24e6b715b5656b9d238bf13b6682a07e2004dd36aad74a73aeb854319f4d9",
}


def hadoop_aws(hadoop: str) -> JarSource:
    return maven_jar(
        "org.apache.hadoop",
        "hadoop-aws",
        hadoop,
        _HADOOP_AWS_SHA256[hadoop],
        "LAKEHOUSE_HADOOP_AWS_JAR",
    )


def s3a_jars(hadoop: str) -> CachedJarSet:
    """hadoop-aws of a Hadoop version with the SDK it was built against."""
    if hadoop.startswith("3.3."):
        return CachedJarSet(
            need="s3a",
            sources=(
                _maven_jars(
                    hadoop_aws(hadoop),
                    maven_jar(
                        "com.amazonaws",
                        "aws-java-sdk-bundle",
                        "1.12.262",
                        "873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5",
                        "LAKEHOUSE_AWS_SDK_JAR",
                    ),
                ),
                # The fallback: hadoop-aws 3.3.1 (works with the 3.3.4 client) inside a PyPI
                # sdist that pins pyspark 3.3.0, so it is downloaded, never installed.
                JarSource(
                    origin="PyPI sdist sagemaker_pyspark==1.4.5",
                    jars=(
                        PinnedJar(
                            filename="hadoop-aws-3.3.1.jar",
                            sha256="6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e",
                            member="deps/jars/hadoop-aws-3.3.1.jar",
                            env_override="LAKEHOUSE_HADOOP_AWS_JAR",
                        ),
                        PinnedJar(
                            filename="aws-java-sdk-bundle-1.11.901.jar",
                            sha256="b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead",
                            member="deps/jars/aws-java-sdk-bundle-1.11.901.jar",
                            env_override="LAKEHOUSE_AWS_SDK_JAR",
                        ),
                    ),
                    fetch=pypi_sdist(
                        "sagemaker_pyspark==1.4.5",
                        [
                            "deps/jars/hadoop-aws-3.3.1.jar",
                            "deps/jars/aws-java-sdk-bundle-1.11.901.jar",
                        ],
                    ),
                ),
            ),
        )
    return CachedJarSet(
        need="s3a",
        sources=(
            _maven_jars(
                hadoop_aws(hadoop),
                _ICEBERG_AWS_BUNDLE,
                maven_jar(
                    "software.amazon.awssdk",
                    "s3-transfer-manager",
                    "2.54.17",
                    "7bef0ea4efd5e0860bab63e08317040951edb51b72a5be734284c28b8324ab87",
                    "LAKEHOUSE_S3_TRANSFER_MANAGER_JAR",
                ),
                # s3a's synchronous client: the SDK's Apache HTTP client (httpclient 4.5 itself
                # is in pyspark 4.1's jars), which the Iceberg bundle leaves out.
                maven_jar(
                    "software.amazon.awssdk",
                    "apache-client",
                    "2.54.17",
                    "0b00ae3d55c3d1213ca47b5651dc4c2a0080fc9b6192dde3d53c3da6c1811bcb",
                    "LAKEHOUSE_AWS_APACHE_CLIENT_JAR",
                ),
            ),
        ),
    )


S3A_JARS = s3a_jars(HADOOP_VERSION)

# ADLS Gen2 through Hadoop's ABFS: hadoop-azure of pyspark's Hadoop. Its other dependencies
# are in pyspark's wheel (Jackson 1.x, httpclient, Hadoop's shaded Guava) or unused by ABFS
# (azure-storage and jetty-util-ajax serve wasb://, wildfly-openssl is skipped by JSSE mode).
ABFS_JARS = CachedJarSet(
    need="abfs",
    sources=(
        maven_jar(
            "org.apache.hadoop",
            "hadoop-azure",
            HADOOP_VERSION,
            {
                "3.3.4": "37adcc23d4db068834acf2b21b6931b609a43cf0a9b4926c440f472af7abad01",
                "3.4.2": "f02ab756037abaecc45ea1869144ad3a69e25ccd84062bc37805837ca254e21c",
            }[HADOOP_VERSION],
            "LAKEHOUSE_HADOOP_AZURE_JAR",
        ),
    ),
    required=False,
)

# GCS (docs/runtime.md, "GCS"): Hadoop's GCS connector, the hadoop3 build with its Google
# client shaded in (it brings no dependency of its own), for HadoopFileIO over gs://. 2.2.x is the
# line built for Hadoop 3.3 (pyspark's 3.3.4 client); only Maven Central ships it.
GCS_CONNECTOR_JARS = CachedJarSet(
    need="gcs-connector",
    sources=(
        maven_jar(
            "com.google.cloud.bigdataoss",
            "gcs-connector",
            "hadoop3-2.2.33",
            "cd47e5ef4d18a97576e0421b74812b87b2cb0d580c59bbc7113f5f526d46e48b",
            "LAKEHOUSE_GCS_CONNECTOR_JAR",
            classifier="shaded",
        ),
    ),
    required=False,
)

# The Azure SDK for Iceberg's ADLSFileIO (whose classes are in the runtime jar). 1.10.0 is the
# newest Azure bundle Maven Central serves (Iceberg published none for 1.11 or 1.12); it holds
# only the SDK, like the AWS bundle, and serves the 1.12 runtime (tests/functional, abfss).
AZURE_SDK_JARS = CachedJarSet(
    need="azure-sdk",
    sources=(
        maven_jar(
            "org.apache.iceberg",
            "iceberg-azure-bundle",
            "1.10.0",
            "f143be94b94bb380e76d1c45ee9a63e143f4a7f813c6aa1ed72f5bfd44f52d05",
            "LAKEHOUSE_ICEBERG_AZURE_BUNDLE_JAR",
        ),
    ),
    required=False,
)

# The Google Cloud SDK, as Iceberg's GCSFileIO loads it (its classes are in the runtime jar).
# Like the AWS bundle it holds only the SDK; the 1.10.0 bundle serves the 1.12 runtime
# (tests/functional, GCS depots).
GCP_BUNDLE_JARS = CachedJarSet(
    need="gcp-bundle",
    sources=(
        maven_jar(
            "org.apache.iceberg",
            "iceberg-gcp-bundle",
            "1.10.0",
            "a5c623768c28335161fc4802df88308f81701a156dec596a60ad42e1f047d5e1",
            "LAKEHOUSE_ICEBERG_GCP_BUNDLE_JAR",
        ),
    ),
    required=False,
)

# Native execution (engine/native.py): Apache DataFusion Comet's Spark plugin, its native library
# (Linux amd64 and aarch64) inside; 99 MB. Only the 4.1 line offers it (a 3.5 session asking for
# it is refused), so only the 4.1 line fetches it; optional, as only a profile with
# `engine: {native: comet}` loads it.
COMET_JARS = CachedJarSet(
    need="comet",
    sources=(
        maven_jar(
            "org.apache.datafusion",
            f"comet-spark-spark{SPARK_BINARY_VERSION}_{SCALA_BINARY_VERSION}",
            COMET_VERSION,
            "5055c43dca9e8cce83c33b1ff25646d1436c94698ca48beb3475bf60843b8d37",
            "LAKEHOUSE_COMET_JAR",
        ),
    ),
    required=False,
)

CACHED_JARS: dict[str, CachedJarSet] = {
    s.need: s
    for s in (
        ICEBERG_JARS,
        H2_JARS,
        SQLITE_JARS,
        POSTGRESQL_JARS,
        S3A_JARS,
        AWS_SDK_V2_JARS,
        ABFS_JARS,
        AZURE_SDK_JARS,
        GCS_CONNECTOR_JARS,
        GCP_BUNDLE_JARS,
        *((COMET_JARS,) if LINE.spark in COMET_LINES else ()),
    )
}

# What the embedded lakehouse (a profile with no depot) loads: the Iceberg runtime and the
# SQLite driver of its catalog. README command 1 fetches these alone; a depot's other sets are
# fetched when a session first needs them, or all ahead by `dbt-lakehouse install`.
EMBEDDED_NEEDS: tuple[str, ...] = ("iceberg", "sqlite")

# `spark.jars.packages` coordinates (group:artifact prefixes) that replace a set: Spark resolves
# them and their dependencies itself (hadoop-aws brings its SDK bundle).
PACKAGES_REPLACING: dict[str, tuple[str, ...]] = {
    "iceberg": (f"org.apache.iceberg:{ICEBERG_RUNTIME}:",),
    "h2": ("com.h2database:h2:",),
    "sqlite": ("org.xerial:sqlite-jdbc:",),
    "postgresql": ("org.postgresql:postgresql:",),
    "s3a": ("org.apache.hadoop:hadoop-aws:",),
    "aws-sdk-v2": ("org.apache.iceberg:iceberg-aws-bundle:", "software.amazon.awssdk:"),
    "abfs": ("org.apache.hadoop:hadoop-azure:",),
    "azure-sdk": ("org.apache.iceberg:iceberg-azure-bundle:", "com.azure:"),
    "gcs-connector": ("com.google.cloud.bigdataoss:gcs-connector:",),
    "comet": ("org.apache.datafusion:comet-spark-",),
    "gcp-bundle": (
        "org.apache.iceberg:iceberg-gcp-bundle:",
        "com.google.cloud:google-cloud-storage:",
    ),
}


def packages_cover(need: str, packages: Iterable[str]) -> bool:
    """True when the profile's `spark.jars.packages` coordinates provide the set `need`."""
    prefixes = PACKAGES_REPLACING.get(need, ())
    return any(p.strip().startswith(prefixes) for p in packages if p.strip())
