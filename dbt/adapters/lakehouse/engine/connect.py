"""A Spark Connect client session (`spark.master: sc://host:port`), set up from the profile.

The driver runs in the Connect server's process: what Spark reads at launch (jars, SQL
extensions, driver options) is the server's, and must be there when it starts. What a session
may set at runtime is sent here: the depot's catalogs with their secrets, the SQL settings, and
the Hadoop settings (a session's SQL conf entries are laid over its Hadoop conf, so `fs.s3a.*`
reach the file systems its catalogs open). Every catalog is loaded at once, so a server without
the Iceberg runtime or a rejected token fails the start with the reason, not a later model.
"""

from __future__ import annotations

import socket
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.diagnosis import engine_error_text, explain_engine_error
from dbt.adapters.lakehouse.engine.spec import EngineSpec, catalog_contexts
from dbt.adapters.lakehouse.exceptions import ConnectUnsupportedError, EngineSetupError
from dbt.adapters.lakehouse.profile.secrets import safe_url

logger = AdapterLogger("Lakehouse")

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
_HADOOP_PREFIX = "spark.hadoop."
# Static SQL settings the adapter's conf holds: read at the server's start, refused per session.
_STATIC_SQL_KEYS = frozenset(
    {"spark.sql.extensions", "spark.sql.catalogImplementation", "spark.sql.warehouse.dir"}
)


def session_conf(spec: EngineSpec) -> tuple[dict[str, str], list[str]]:
    """(what the client session sets, the keys only the server's launch can take)."""
    sent: dict[str, str] = {}
    launch_only: list[str] = []
    for key, value in spec.conf:
        if key.startswith("spark.sql."):
            sent[key] = value
        elif key.startswith(_HADOOP_PREFIX):
            sent[key[len(_HADOOP_PREFIX) :]] = value
        else:
            launch_only.append(key)
    sent.update(spec.secret_catalog_conf)
    sent.update(spec.secret_hadoop_conf)
    return sent, launch_only


def start_connect_session(spec: EngineSpec) -> Any:
    """The client session for `spec.master`, configured, with every catalog loaded."""
    shown = safe_url(spec.master)
    if spec.secret_system_properties:
        raise ConnectUnsupportedError(
            f"Depot {spec.depot_label} gives a glue catalog AWS keys, or an IAM role to "
            "Iceberg's AWS clients, which the adapter hands them as system properties of the "
            f"driver's JVM; under Spark Connect ({shown}) that JVM is the server's. Fix: give "
            "the server the keys or role (its environment, or an instance role) and leave "
            "them out of the depot."
        )
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError as exc:
        raise EngineSetupError(
            f"spark.master {shown} needs the Spark Connect client, whose packages are not "
            f"installed ({exc}). Fix: pip install 'dbt-lakehouse[connect]'."
        ) from None
    host, port = runtime.connect_address(spec.master)
    try:
        with socket.create_connection((host, port), timeout=5.0):
            pass
    except OSError as exc:
        raise EngineSetupError(
            f"The Spark Connect server {shown} is unreachable from this machine ({host}:{port}: "
            f"{exc.strerror or exc}). Fix: start it (sbin/start-connect-server.sh with the "
            "Iceberg runtime jar and Iceberg's SQL extensions), or correct spark.master in the "
            "profile (sc://host:port, 15002 by default)."
        ) from None
    if spec.local_storage:
        logger.warning(
            f"Spark Connect server {shown} with depot {spec.depot_label}, whose "
            "tables are in a folder on this machine: the server opens that path on its own "
            "machine, so it must be this one (or share the folder at the same path). Use an S3 "
            "depot with a remote server."
        )
    spark = ConnectSession.builder.remote(spec.master).getOrCreate()
    try:
        _configure(spark, spec, shown)
    except BaseException:
        spark.stop()
        raise
    return spark


def _configure(spark: Any, spec: EngineSpec, shown: str) -> None:
    sent, launch_only = session_conf(spec)
    static: list[str] = []
    for key, value in sent.items():
        if key in _STATIC_SQL_KEYS:  # the server's launch set them; a SET would be refused
            static.append(key)
            continue
        try:
            spark.conf.set(key, value)
        except Exception as exc:
            if "static config" not in str(exc):
                raise
            static.append(key)
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    if ICEBERG_EXTENSIONS not in extensions:
        raise EngineSetupError(
            f"The Spark Connect server {shown} runs without Iceberg's SQL extensions "
            f"(spark.sql.extensions = {extensions or 'unset'!r}): MERGE INTO, Iceberg's "
            "procedures and branches need them, and only the server's start can set them. Fix: "
            f"start it with --conf spark.sql.extensions={ICEBERG_EXTENSIONS} and the Iceberg "
            "runtime jar (--jars or --packages org.apache.iceberg:iceberg-spark-runtime-3.5_2.12"
            ":1.10.2)."
        )
    logger.debug(
        f"Spark Connect {shown} (Spark {spark.version}); session conf set: "
        f"{len(sent) - len(static)}; left to the server's launch: "
        f"{', '.join(sorted(launch_only + static)) or 'none'}"
    )
    for catalog in spec.catalogs:
        try:
            spark.sql(f"show namespaces in `{catalog.name}`").collect()
        except Exception as exc:
            text = engine_error_text(exc)
            explained = explain_engine_error(
                text, catalog.uri, catalog_contexts(spec)
            ) or _connect_hint(text)
            raise EngineSetupError(
                f"The Iceberg catalog '{catalog.name}' of depot {catalog.depot_label} could not "
                f"be loaded on the Spark Connect server {shown}: {explained}"
            ) from None


def _connect_hint(text: str) -> str:
    first = text.splitlines()[0] if text else "unknown error"
    missing_class = ("ClassNotFoundException", "NoClassDefFoundError", "Cannot find catalog plugin")
    if any(sign in text for sign in missing_class):
        return (
            f"{first}. A class the catalog needs is not on the server's classpath. Fix: start "
            "the server with the Iceberg runtime jar (and iceberg-aws-bundle for S3FileIO or "
            "Glue, the JDBC driver for a jdbc catalog)."
        )
    return first
