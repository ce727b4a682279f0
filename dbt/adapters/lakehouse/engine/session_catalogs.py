"""What a new session does to its catalogs before dbt's first statement runs.

A catalog that cannot be used should fail the start with its reason, not some model later: the
catalogs with secrets are loaded at once, the glue catalog's AWS keys are set where the AWS SDK
reads them first, and the embedded catalog's SQLite file is made before
the session starts and loaded as it does.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.embedded import EmbeddedCatalog, prepare_catalog
from dbt.adapters.lakehouse.engine.diagnosis import engine_error_text, explain_engine_error
from dbt.adapters.lakehouse.engine.runtime import java_class
from dbt.adapters.lakehouse.engine.sparkconf import GLUE_KEY_PROPERTIES
from dbt.adapters.lakehouse.engine.spec import EngineSpec, catalog_contexts
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.profile.depot.storage.s3.role_conf import ROLE_SYSTEM_PROPERTIES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")


def set_system_properties(spark: SparkSession, spec: EngineSpec) -> None:
    """The glue catalog's AWS keys, where the SDK's default chain reads them first
    (sparkconf.GLUE_KEY_PROPERTIES says why). The JVM's previous session may have set others:
    every property a glue catalog could read is set or cleared, so no stale key signs."""
    system = java_class(spark.sparkContext._jvm, "java.lang.System")
    wanted = dict(spec.secret_system_properties)
    for prop in GLUE_KEY_PROPERTIES.values():
        if prop in wanted:
            system.setProperty(prop, wanted[prop])
        else:
            system.clearProperty(prop)
    # A role's STS region and endpoint (storage/s3/role_conf.py): cleared only when an earlier
    # session of this JVM set them, so a user's own -Daws.region stays.
    for prop in ROLE_SYSTEM_PROPERTIES:
        if prop in wanted:
            system.setProperty(prop, wanted[prop])
            _ROLE_PROPERTIES_SET.add(prop)
        elif prop in _ROLE_PROPERTIES_SET:
            system.clearProperty(prop)
            _ROLE_PROPERTIES_SET.discard(prop)


_ROLE_PROPERTIES_SET: set[str] = set()


def initialize_s3a_credentials(spark: SparkSession, spec: EngineSpec) -> None:
    """Open each s3a warehouse once, here, before any task does.

    Hadoop caches one S3AFileSystem per bucket for the JVM, and its credentials provider
    initializes on first use without a lock: with temporary keys, two tasks of one stage using it
    first at once can see it half-initialized ("TemporaryAWSCredentialsProvider has no
    credentials", a seed's write refused). Used once on this thread first, it is ready for them.
    A failure here is left to the statement that meets it, which reports it with its table.
    """
    jvm = spark.sparkContext._jvm  # type: ignore[union-attr]
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    keys = [k for k, _ in (*spec.conf, *spec.secret_catalog_conf)]
    for key, value in spec.conf:
        if key.startswith("spark.sql.catalog.") and key.endswith(".warehouse"):
            # Only warehouses the session's own Hadoop conf serves: a catalog with Hadoop settings
            # of its own (its own keys) would be cached here with the wrong ones.
            own = key[: -len("warehouse")] + "hadoop."
            if value.lower().startswith(("s3://", "s3a://")) and not any(
                k.startswith(own) for k in keys
            ):
                try:
                    path = jvm.org.apache.hadoop.fs.Path(value)  # type: ignore[union-attr]
                    path.getFileSystem(hadoop_conf).exists(path)
                except Exception:
                    pass


def load_catalogs_with_secrets(spark: SparkSession, spec: EngineSpec) -> None:
    """Hand the catalogs their secrets and load them now.

    A catalog that cannot load (unreachable, token rejected) fails the start with the reason,
    not some later statement. The secrets must stay in the runtime conf afterwards: Spark
    plans CACHE TABLE, and re-caches after every write to a cached query's tables, in a
    cloned session (AQE off) whose catalogs load afresh from the conf; without the token
    there, a REST catalog answers 401 (`cache table` of an incremental model's batch, for
    one). The conf is not SparkConf: it stays out of the UI and event logs, and SET redacts
    it (spark.redaction.regex). On failure nothing is left behind.
    """
    if not spec.secret_catalog_conf:
        return
    for key, value in spec.secret_catalog_conf:
        spark.conf.set(key, value)
    manager = spark._jsparkSession.sessionState().catalogManager()  # type: ignore[attr-defined]
    for catalog in spec.catalogs:
        if not catalog.has_secrets:
            continue
        try:
            manager.catalog(catalog.name)
        except Exception as exc:
            for key, _ in spec.secret_catalog_conf:
                spark.conf.unset(key)
            text = engine_error_text(exc)
            explained = (
                explain_engine_error(text, catalog.uri, catalog_contexts(spec))
                or text.splitlines()[0]
            )
            raise EngineSetupError(
                f"The Iceberg catalog '{catalog.name}' of depot {catalog.depot_label} could not "
                f"be loaded: {explained}"
            ) from None


def prepare_embedded_catalog(catalog: EmbeddedCatalog) -> None:
    """Before Spark starts: the catalog file exists."""
    try:
        prepare_catalog(catalog)
    except OSError as exc:
        raise EngineSetupError(
            f"The embedded lakehouse catalog {catalog.database_file} could not be created: "
            f"{exc}. Fix: make {catalog.folder} writable for this user, and check free disk "
            "space."
        ) from None


def open_embedded_catalog(spark: SparkSession, catalog: EmbeddedCatalog) -> None:
    """Load the embedded catalog now rather than in the first statement, so a catalog that
    cannot be opened fails the start with its reason, not some model later."""
    manager = spark._jsparkSession.sessionState().catalogManager()  # type: ignore[attr-defined]
    began = time.monotonic()
    try:
        manager.catalog(catalog.name)
    except Exception as exc:
        lines = engine_error_text(exc).splitlines()
        cause = f" ({lines[-1].strip()})" if len(lines) > 1 else ""
        raise EngineSetupError(
            f"The embedded lakehouse catalog {catalog.database_file} could not be opened: "
            f"{lines[0] if lines else exc}{cause}"
        ) from None
    logger.debug(
        f"embedded catalog {catalog.database_file} open after {time.monotonic() - began:.1f}s"
    )
