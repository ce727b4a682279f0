"""The SparkSession lifecycle: one per process, built from a profile, shared by all dbt threads.

Starting Spark costs seconds, so the session outlives adapters and connections: dbt's threads,
and every dbt invocation inside one process (the test suite), reuse it while the configuration
it was built from stays the same. It stops at interpreter exit. The JVM's console output goes to
a log file, not dbt's output; secrets are applied at runtime, never put into the SparkConf. On
the embedded lakehouse the session also holds the process's lease on the warehouse's catalog
(engine/embedded_catalog.py) and opens the catalog as it starts.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine import class_archive as classarchive
from dbt.adapters.lakehouse.engine.connect import start_connect_session
from dbt.adapters.lakehouse.engine.embedded_catalog import (
    DEFAULT_WAIT_SECONDS,
    CatalogLease,
    CatalogUnavailable,
    EmbeddedCatalog,
)
from dbt.adapters.lakehouse.engine.jars import H2_JARS, cache_dir, resolve_jars
from dbt.adapters.lakehouse.engine.masters import (
    await_executors,
    check_master_reachable,
    local_storage_warning,
    master_addresses_of,
    start_timeout_message,
)
from dbt.adapters.lakehouse.engine.runtime import is_connect_master
from dbt.adapters.lakehouse.engine.sparkconf import (
    GLUE_KEY_PROPERTIES,
    SparkConfPlan,
    build_spark_conf_plan,
    catalog_context,
)
from dbt.adapters.lakehouse.exceptions import (
    CatalogContext,
    EngineSetupError,
    engine_error_text,
    explain_engine_error,
)
from dbt.adapters.lakehouse.profile.depot import Depot, resolve_depot
from dbt.adapters.lakehouse.profile.depot.model import S3Storage
from dbt.adapters.lakehouse.profile.secrets import safe_url

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")

_LOG4J_CONFIG = Path(__file__).parent / "resources" / "log4j2.properties"

# Defaults a user may override through `spark.conf`; chosen for dbt-sized local work.
_DEFAULT_CONF = {
    "spark.ui.enabled": "false",
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


def resolve_profile_depot(creds: LakehouseCredentials) -> Depot:
    return resolve_depot(
        depot=creds.depot,
        depots_file=creds.depots_file,
        warehouse=creds.warehouse,
        aws_region=creds.aws_region,
        aws_endpoint=creds.aws_endpoint,
    )


def engine_spec(
    creds: LakehouseCredentials,
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
    depot: Depot | None = None,
    mounted: Mapping[str, Depot] | None = None,
) -> EngineSpec:
    """The session a profile needs; `depot` and `mounted` (catalog -> depot) when the caller
    has resolved them already (profile/resolved.py), else the profile's depot alone."""
    depot = resolve_profile_depot(creds) if depot is None else depot
    plan: SparkConfPlan = build_spark_conf_plan(depot, creds.database, mounted)
    options = creds.spark
    connect = is_connect_master(options.master)
    packages = options.conf.get("spark.jars.packages", "").split(",")
    # A Connect server brings its own jars: none are fetched for a driver that is not here.
    jars = (
        []
        if connect
        else resolve_jars(
            plan.jar_needs, options.jars, env=env, fetch_missing=fetch_missing, packages=packages
        )
    )
    conf: dict[str, str] = dict(_DEFAULT_CONF)
    if options.master.startswith("local"):
        conf.update(_LOCAL_DEFAULT_CONF)
    conf.update(plan.conf)
    conf["spark.jars"] = ",".join(str(p) for p in jars)
    java_options = [f"-Dlog4j.configurationFile={_LOG4J_CONFIG.as_uri()}"]
    embedded_catalog = None
    if depot.embedded and not connect:
        # The catalog holder's AUTO_SERVER listens on loopback only; this JVM names the same
        # address, or H2 reads the lock file as another machine's.
        java_options.append("-Dh2.bindAddress=127.0.0.1")
        embedded_catalog = EmbeddedCatalog(
            name=creds.database, url=str(depot.catalog.uri), h2_jar=_h2_jar(jars, env)
        )
    if options.driver_memory:
        conf["spark.driver.memory"] = options.driver_memory
    if options.driver_host and not options.master.startswith("local"):
        conf["spark.driver.host"] = options.driver_host
    conf.update({str(k): str(v) for k, v in options.conf.items()})
    user_java_options = conf.get("spark.driver.extraJavaOptions", "")
    conf["spark.driver.extraJavaOptions"] = " ".join(java_options + [user_java_options]).strip()
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
        local_storage=not isinstance(depot.storage, S3Storage),
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


def _h2_jar(jars: list[Path], env: Mapping[str, str] | None) -> str:
    located = H2_JARS.locate(env)
    if located:
        return str(located[0])
    # resolve_jars found it a moment ago; only a jar deleted in between lands here.
    raise EngineSetupError(
        f"The H2 driver for the embedded catalog is missing (jars: {', '.join(map(str, jars))}). "
        "Fix: run `dbt-lakehouse install`, or set LAKEHOUSE_H2_JAR to h2-2.1.214.jar."
    )


def catalog_wait_seconds(env: Mapping[str, str] | None = None) -> float:
    """How long a process waits for the embedded catalog (LAKEHOUSE_CATALOG_WAIT, seconds)."""
    given = (os.environ if env is None else env).get("LAKEHOUSE_CATALOG_WAIT", "").strip()
    if not given:
        return DEFAULT_WAIT_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise EngineSetupError(
            f"LAKEHOUSE_CATALOG_WAIT must be a number of seconds above 0; got {given!r}. "
            f"Accepted: e.g. 300 (unset: {DEFAULT_WAIT_SECONDS:.0f})."
        )
    return seconds


def _java_executable() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def spark_log_path() -> Path:
    """Where the JVM's console output goes (beside dbt's own logs by default)."""
    configured = os.environ.get("LAKEHOUSE_SPARK_LOG")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("DBT_LOG_PATH") or "logs"
    return Path(base).absolute() / "spark.log"


class _Engine:
    """The process-wide session and the spec it was built from."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spark: SparkSession | None = None
        self._spec: EngineSpec | None = None
        self._gateway: Any = None
        self._launch: tuple[tuple[str, str], ...] = ()  # what the running JVM was launched with
        self._log_handle: Any = None
        self._lease: CatalogLease | None = None
        self._early_failure: tuple[EngineSpec, BaseException] | None = None

    def start_early(self, spec: EngineSpec) -> None:
        """Start the session for `spec` on a daemon thread, so the JVM boots while dbt parses.

        The first connection's `get` waits on the lock for it; a failure is kept and raised
        there, to the node that needs the session.
        """

        def start() -> None:
            with self._lock:
                try:
                    self._session_for(spec)
                except BaseException as exc:
                    self._early_failure = (spec, exc)

        threading.Thread(target=start, name="lakehouse-engine-start", daemon=True).start()

    def get(self, spec: EngineSpec) -> SparkSession:
        with self._lock:
            failed, self._early_failure = self._early_failure, None
            if failed is not None and failed[0] == spec:
                # The early start already failed for this spec: its error, not a second wait.
                raise failed[1]
            return self._session_for(spec)

    def _session_for(self, spec: EngineSpec) -> SparkSession:
        """The session built from `spec`, started or restarted as needed; under the lock."""
        if self._spark is not None and self._spec == spec:
            return self._spark
        if self._spark is not None:
            logger.debug(
                f"profile changed ({self._spec and self._spec.fingerprint} -> "
                f"{spec.fingerprint}); restarting the SparkSession"
            )
            self._stop_session()
        self._spark = self._start(spec)
        self._spec = spec
        return self._spark

    @property
    def active(self) -> SparkSession | None:
        return self._spark

    def _start(self, spec: EngineSpec) -> SparkSession:
        if spec.is_connect:
            # No JVM here, and no catalog lease: the server's driver opens the catalog.
            return start_connect_session(spec)  # type: ignore[no-any-return]
        java = _java_executable()
        if java is None:
            raise EngineSetupError(
                "Spark needs Java 17 (11 and 21 work too), and no `java` was found on PATH or "
                "in JAVA_HOME. Fix: install a JDK/JRE (Debian/Ubuntu: `apt-get install "
                "openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) or set JAVA_HOME."
            )
        if not spec.is_local:
            # Before anything starts (the catalog holder, the JVM), so a master that does not
            # answer fails at once and the warning shows whatever happens next.
            if spec.local_storage:
                logger.warning(local_storage_warning(spec))
            check_master_reachable(spec.master, addresses=master_addresses_of(spec))
        lease = None
        if spec.embedded_catalog is not None:
            lease = CatalogLease(spec.embedded_catalog, java, wait=catalog_wait_seconds())
        try:
            if lease is not None:
                # Before Spark: a holder this starts gets ready while Spark does.
                _unless_unavailable(lease.join)
            spark = self._start_spark(spec, java)
            if lease is not None:
                try:
                    _open_embedded_catalog(spark, lease)
                except Exception:
                    spark.stop()
                    raise
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        self._lease = lease
        return spark

    def _start_spark(self, spec: EngineSpec, java: str) -> SparkSession:
        if spec.is_local:
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            from pyspark import SparkConf, SparkContext
            from pyspark.java_gateway import launch_gateway
            from pyspark.sql import SparkSession
        except ImportError as exc:  # pragma: no cover - pyspark is a hard dependency
            raise EngineSetupError(f"pyspark is not importable: {exc}") from exc

        launch = launch_settings(spec.conf)
        if self._gateway is not None and launch != self._launch:
            # The running JVM was launched with other jars or driver options, which Spark reads
            # at launch only: a new SparkContext in it would not see the new ones. (Before the
            # SparkConf below exists: made with a JVM running, it lives in that JVM.)
            logger.debug("the jars or driver options changed; relaunching the JVM")
            self._abandon_gateway(SparkContext)
        conf = SparkConf(loadDefaults=False).setMaster(spec.master).setAppName(spec.app_name)
        for key, value in spec.conf:
            conf.set(key, value)
        archive_options = classarchive.java_options(java, cache_dir(), os.environ)
        if archive_options:
            # Start-time only, so not part of the spec: it changes once the archive exists.
            own = conf.get("spark.driver.extraJavaOptions", "") or ""
            conf.set("spark.driver.extraJavaOptions", " ".join([own, *archive_options]).strip())
        logger.debug(f"starting Spark ({spec.master}) for {spec.depot_label}")
        if self._gateway is None:
            log_path = spark_log_path()
            log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_handle = log_path.open("ab")
            try:
                self._gateway = launch_gateway(
                    conf, popen_kwargs={"stdout": self._log_handle, "stderr": self._log_handle}
                )
                self._launch = launch
            except Exception as exc:
                raise EngineSetupError(
                    f"The Spark JVM did not start: {exc}. Its output is in {log_path}:\n"
                    + _tail(log_path)
                ) from exc
        try:
            self._create_context(SparkContext, conf, spec)
            spark = SparkSession.builder.getOrCreate()
        except EngineSetupError:
            raise
        except Exception as exc:
            where = "" if spec.is_local else f" on the master {spec.master}"
            raise EngineSetupError(f"Spark did not start{where}: {_first_line(exc)}") from exc
        spark.sparkContext.setLogLevel("ERROR")
        if not spec.is_local:
            try:
                await_executors(spark, spec)
            except Exception:
                spark.stop()
                raise
        hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
        for key, value in spec.secret_hadoop_conf:
            hadoop_conf.set(key, value)
        _set_system_properties(spark, spec)
        try:
            _load_catalogs_with_secrets(spark, spec)
        except Exception:
            spark.stop()
            raise
        return spark

    def _create_context(self, context_class: Any, conf: Any, spec: EngineSpec) -> None:
        """Create the SparkContext; for a cluster master, within `executor_timeout_seconds`.

        Creating it contacts the cluster manager and can block far longer than any user
        waits: the YARN client retries an unanswering ResourceManager for 15 minutes, and a
        Kubernetes API server that accepts connections but does not answer holds the call as
        long. (A standalone master registers in the background: `_await_executors` bounds it.)
        The JVM call cannot be interrupted, so it runs on a daemon thread and, when the time
        is up, the JVM is killed: that ends the call, and nothing half-started keeps the
        process alive or blocks a later start.
        """
        failure: list[BaseException] = []

        def create() -> None:
            try:
                context_class(conf=conf, gateway=self._gateway)
            except BaseException as exc:
                failure.append(exc)

        creating = threading.Thread(target=create, name="lakehouse-spark-context", daemon=True)
        creating.start()
        # A local master has no cluster manager to wait for.
        creating.join(timeout=None if spec.is_local else spec.executor_timeout_seconds)
        if creating.is_alive():
            self._abandon_gateway(context_class)
            # The killed JVM fails the pending call at once; let pyspark's cleanup finish
            # before another start may touch its class-level state.
            creating.join(timeout=10)
            raise EngineSetupError(start_timeout_message(spec))
        if failure:
            raise failure[0]

    def _abandon_gateway(self, context_class: Any) -> None:
        """Kill the JVM and forget it, so the next start launches a fresh one."""
        gateway, self._gateway = self._gateway, None
        process = getattr(gateway, "proc", None)
        if process is not None:
            process.kill()
            try:
                process.wait(timeout=10)
            except Exception:  # a zombie for the OS to reap; it no longer runs Spark
                pass
        try:
            gateway.shutdown()
        except Exception:  # its sockets are gone with the JVM
            pass
        if self._log_handle is not None:
            self._log_handle.close()  # the next JVM opens the log afresh
            self._log_handle = None
        with context_class._lock:
            context_class._gateway = None
            context_class._jvm = None
            context_class._active_spark_context = None

    def _stop_session(self) -> None:
        if self._spark is not None:
            try:
                self._spark.stop()
            finally:
                self._spark = None
                self._spec = None
                if self._lease is not None:
                    self._lease.release()
                    self._lease = None

    def stop(self) -> None:
        with self._lock:
            self._stop_session()


def _set_system_properties(spark: SparkSession, spec: EngineSpec) -> None:
    """The glue catalog's AWS keys, where the SDK's default chain reads them first
    (sparkconf.GLUE_KEY_PROPERTIES says why). The JVM's previous session may have set others:
    every property a glue catalog could read is set or cleared, so no stale key signs."""
    system = spark.sparkContext._jvm.java.lang.System  # type: ignore[union-attr]
    wanted = dict(spec.secret_system_properties)
    for prop in GLUE_KEY_PROPERTIES.values():
        if prop in wanted:
            system.setProperty(prop, wanted[prop])
        else:
            system.clearProperty(prop)


# Settings Spark applies when it launches the driver JVM (spark-submit: classpath, packages
# resolved by Ivy, JVM options and heap), and never again for a new SparkContext in that JVM.
LAUNCH_ONLY_KEYS = (
    "spark.jars",
    "spark.jars.packages",
    "spark.jars.repositories",
    "spark.jars.ivySettings",
    "spark.jars.excludes",
    "spark.driver.extraClassPath",
    "spark.driver.extraJavaOptions",
    "spark.driver.memory",
)


def launch_settings(conf: Any) -> tuple[tuple[str, str], ...]:
    """The launch-only part of a spec's conf: when it differs, the JVM must be relaunched."""
    given = dict(conf)
    return tuple((key, given[key]) for key in LAUNCH_ONLY_KEYS if key in given)


def _load_catalogs_with_secrets(spark: SparkSession, spec: EngineSpec) -> None:
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


def _unless_unavailable(step: Any) -> Any:
    try:
        return step()
    except CatalogUnavailable as exc:
        raise EngineSetupError(str(exc)) from None
    except OSError as exc:  # the holder's lock files or process could not be made
        raise EngineSetupError(
            f"The embedded lakehouse catalog's holder could not start: {exc}. Fix: make the "
            "warehouse's _catalog folder writable for this user, and check free disk space."
        ) from None


def _open_embedded_catalog(spark: SparkSession, lease: CatalogLease) -> None:
    """Load the embedded catalog now, under the lease, rather than in the first statement.

    Its first open is where dbt processes on one warehouse meet: the lease takes it one process
    at a time, after the holder is ready, and bounds the wait with a one-line reason. A lazy
    open in some model's statement would have none of that.
    """
    name = lease.catalog.name
    manager = spark._jsparkSession.sessionState().catalogManager()  # type: ignore[attr-defined]
    began = time.monotonic()
    try:
        _unless_unavailable(
            lambda: lease.open(lambda: manager.catalog(name), describe=engine_error_text)
        )
        logger.debug(
            f"embedded catalog {lease.catalog.database_file} open after "
            f"{time.monotonic() - began:.1f}s"
        )
    except EngineSetupError:
        raise
    except Exception as exc:
        lines = engine_error_text(exc).splitlines()
        cause = f" ({lines[-1].strip()})" if len(lines) > 1 else ""
        raise EngineSetupError(
            f"The Iceberg catalog '{name}' could not be loaded: {lines[0] if lines else exc}{cause}"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output captured)"


ENGINE = _Engine()
atexit.register(ENGINE.stop)
