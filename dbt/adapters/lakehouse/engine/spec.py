"""The engine spec: everything a SparkSession is built from, as a profile implies it.

Equal specs share one session (lifecycle.py), so the spec holds every setting that takes part:
the master, Spark's conf with the adapter's defaults under the user's, the jars, the catalogs
(CatalogMount: what a message may say of each) and the secrets, which are applied at runtime,
never put into the SparkConf.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.embedded import EmbeddedCatalog
from dbt.adapters.lakehouse.engine.diagnosis import CatalogContext
from dbt.adapters.lakehouse.engine.jars import COMET_JARS, resolve_jars
from dbt.adapters.lakehouse.engine.native import comet_conf, native_engine
from dbt.adapters.lakehouse.engine.runtime import is_connect_master
from dbt.adapters.lakehouse.engine.sparkconf import (
    SparkConfPlan,
    build_spark_conf_plan,
    catalog_context,
)
from dbt.adapters.lakehouse.profile.depot import Depot
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
from dbt.adapters.lakehouse.profile.secrets import safe_url

_LOG4J_CONFIG = Path(__file__).parent / "resources" / "log4j2.properties"

SLOW_EVENT_LOG = "spark.scheduler.listenerbus.logSlowEvent"
# Defaults a user may override through `spark.conf`; chosen for dbt-sized local work.
_DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    # Spark logs a listener event processed in over a second whole, and a job's event holds the
    # session's SQL conf, where a catalog's token is (session_catalogs.py): not into spark.log.
    SLOW_EVENT_LOG: "false",
    "spark.ui.showConsoleProgress": "false",
    # No Hive metastore: the Iceberg catalog is the only persistent one (no metastore_db/).
    "spark.sql.catalogImplementation": "in-memory",
    "spark.sql.session.timeZone": "UTC",
    # Static: a user's INSERT OVERWRITE without a partition clause replaces the whole table. The
    # `replace` and `insert_overwrite` strategies do not rely on it: each sets the mode for its
    # own statement (cursor.py, statement-scoped conf).
    "spark.sql.sources.partitionOverwriteMode": "static",
    "spark.sql.legacy.createHiveTableByDefault": "false",
}
_LOCAL_DEFAULT_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # 200 shuffle partitions is a cluster default; on one machine it is pure overhead.
    "spark.sql.shuffle.partitions": "8",
}


@dataclass(frozen=True)
class CatalogMount:
    """One Iceberg catalog of the session: its name, the depot behind it, and the uri a
    message may show (remote catalogs; never one carrying credentials)."""

    name: str
    depot_label: str
    uri: str | None = None
    has_secrets: bool = False
    # What an engine error's explanation may say of it (kind, region, Glue endpoint).
    context: CatalogContext | None = None


@dataclass(frozen=True)
class EngineSpec:
    """Everything a SparkSession is built from; equal specs share one session."""

    master: str
    app_name: str
    conf: tuple[tuple[str, str], ...]
    secret_catalog_conf: tuple[tuple[str, str], ...]
    secret_hadoop_conf: tuple[tuple[str, str], ...]
    jars: tuple[str, ...]
    depot_label: str
    embedded_catalog: EmbeddedCatalog | None = None
    catalogs: tuple[CatalogMount, ...] = ()
    executor_timeout_seconds: int = 120
    # The depot's tables are in a folder on this machine (embedded or a `file` depot).
    local_storage: bool = False
    # Driver JVM system properties holding secrets (a glue catalog's AWS keys), set at start.
    secret_system_properties: tuple[tuple[str, str], ...] = ()
    # The profile's `engine: keep_warm_minutes` (None: the default for its master). Not part of
    # the session: a command with another idle time still uses the same engine and session.
    keep_warm_minutes: float | None = field(default=None, compare=False)
    # The profile's `engine: warm_up_seconds` (None: the default for its master); the same.
    warm_up_seconds: float | None = field(default=None, compare=False)

    @property
    def fingerprint(self) -> str:
        # Secrets take part through a digest only, so the fingerprint itself is printable.
        payload = json.dumps(
            [
                self.master,
                self.conf,
                self.jars,
                self.secret_catalog_conf,
                self.secret_hadoop_conf,
                self.secret_system_properties,
            ]
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")

    @property
    def is_connect(self) -> bool:
        """A Spark Connect client (sc://): the driver, its jars and JVM are the server's."""
        return is_connect_master(self.master)


def engine_spec(
    creds: LakehouseCredentials,
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
    *,
    depot: Depot,
    mounted: Mapping[str, Depot] | None = None,
) -> EngineSpec:
    """The session a profile needs, with its resolved `depot` and the depots `mounted`
    (catalog -> depot) beside it; the setup layer resolves them (profile/resolved.py)."""
    plan: SparkConfPlan = build_spark_conf_plan(depot, creds.database, mounted)
    options = creds.spark
    connect = is_connect_master(options.master)
    packages = options.conf.get("spark.jars.packages", "").split(",")
    native = native_engine(creds.engine.native, connect)
    needs = set(plan.jar_needs) | ({COMET_JARS.need} if native else set())
    # A Connect server brings its own jars: none are fetched for a driver that is not here.
    jars = (
        []
        if connect
        else resolve_jars(
            needs, options.jars, env=env, fetch_missing=fetch_missing, packages=packages
        )
    )
    conf: dict[str, str] = dict(_DEFAULT_CONF)
    if options.master.startswith("local"):
        conf.update(_LOCAL_DEFAULT_CONF)
    conf.update(plan.conf)
    conf["spark.jars"] = ",".join(str(p) for p in jars)
    java_options = [f"-Dlog4j.configurationFile={_LOG4J_CONFIG.as_uri()}"]
    embedded_catalog = None
    local_folder = kind_of(depot.storage).local_folder(depot)
    if depot.embedded and not connect and local_folder is not None:
        embedded_catalog = EmbeddedCatalog(name=creds.database, warehouse=local_folder)
    if options.driver_memory:
        conf["spark.driver.memory"] = options.driver_memory
    if options.driver_host and not options.master.startswith("local"):
        conf["spark.driver.host"] = options.driver_host
    conf.update({str(k): str(v) for k, v in options.conf.items()})
    user_java_options = conf.get("spark.driver.extraJavaOptions", "")
    conf["spark.driver.extraJavaOptions"] = " ".join(java_options + [user_java_options]).strip()
    if native:
        comet_jar = COMET_JARS.locate(env)
        conf = comet_conf(conf, comet_jar[0] if comet_jar else None, options.master)
    return EngineSpec(
        master=options.master,
        app_name=options.app_name,
        conf=tuple(sorted(conf.items())),
        secret_catalog_conf=tuple(sorted(plan.secret_catalog_conf.items())),
        secret_hadoop_conf=tuple(sorted(plan.secret_hadoop_conf.items())),
        secret_system_properties=tuple(sorted(plan.secret_system_properties.items())),
        jars=tuple(str(p) for p in jars),
        depot_label=f"{depot.name} ({depot.source})",
        executor_timeout_seconds=options.executor_timeout_seconds,
        keep_warm_minutes=creds.engine.keep_warm_minutes,
        warm_up_seconds=creds.engine.warm_up_seconds,
        local_storage=local_folder is not None,
        embedded_catalog=embedded_catalog,
        catalogs=tuple(
            _catalog_mount(name, catalog_depot, plan, default=name == creds.database)
            for name, catalog_depot in {creds.database: depot, **(mounted or {})}.items()
        ),
    )


def catalog_contexts(spec: EngineSpec) -> dict[str, CatalogContext]:
    """The session's catalogs by name, for explain_engine_error."""
    return {m.name: m.context for m in spec.catalogs if m.context is not None}


def _catalog_mount(name: str, depot: Depot, plan: SparkConfPlan, default: bool) -> CatalogMount:
    remote = depot.catalog.type in ("rest", "nessie") and depot.catalog.uri
    prefix = f"spark.sql.catalog.{name}."
    return CatalogMount(
        name=name,
        depot_label=f"'{depot.name}' ({depot.source})",
        uri=safe_url(depot.catalog.uri) if remote and depot.catalog.uri else None,
        has_secrets=any(key.startswith(prefix) for key in plan.secret_catalog_conf),
        context=catalog_context(depot, name, default),
    )
