"""The SparkSession lifecycle: one per process, built from a profile, shared by all dbt threads.

Starting Spark costs seconds, so the session outlives adapters and connections: dbt's threads,
and every dbt invocation inside one process (the test suite), reuse it while the configuration
it was built from stays the same. It stops at interpreter exit. The JVM's console output goes to
a log file, not dbt's output; secrets are applied at runtime, never put into the SparkConf. On
the embedded lakehouse the catalog's SQLite file is made ready before the JVM starts
(dbt/adapters/lakehouse/embedded/) and the catalog is opened as the session starts.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import class_archive as classarchive
from dbt.adapters.lakehouse.engine import later, runtime
from dbt.adapters.lakehouse.engine.connect import release_commit_sessions, start_connect_session
from dbt.adapters.lakehouse.engine.jars import cache_dir
from dbt.adapters.lakehouse.engine.launch import (
    java_executable,
    launch_settings,
    log_tail,
    spark_log_path,
    usable_java,
)
from dbt.adapters.lakehouse.engine.masters import (
    await_executors,
    check_master_reachable,
    local_storage_warning,
    master_addresses_of,
    start_timeout_message,
)
from dbt.adapters.lakehouse.engine.py4j_args import answer_without_imports
from dbt.adapters.lakehouse.engine.py4j_nodelay import answer_without_delay
from dbt.adapters.lakehouse.engine.session_catalogs import (
    initialize_s3a_credentials,
    load_catalogs_with_secrets,
    open_embedded_catalog,
    prepare_embedded_catalog,
    set_system_properties,
)
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.engine.warm import client as warm
from dbt.adapters.lakehouse.engine.warm.identity import keep_warm_minutes
from dbt.adapters.lakehouse.exceptions import EngineSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")
# How long a JVM of this process waits, before it stops, for the statements it runs after its
# commands (a few rows of data tests' results: well under a second).
LATER_SECONDS = 120.0


class _Engine:
    """The process-wide session and the spec it was built from."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._deferred_lock = threading.Lock()
        self._spark: SparkSession | None = None
        self._spec: EngineSpec | None = None
        self._gateway: Any = None
        self._launch: tuple[tuple[str, str], ...] = ()  # what the running JVM was launched with
        self._log_handle: Any = None
        self._early_failure: tuple[EngineSpec, BaseException] | None = None
        # Set while the session is one on a warm engine (engine/warm/), not this process's JVM.
        self._attachment: warm.Attachment | None = None
        # The spec whose early start waits for the run to say whether it needs the engine.
        self._deferred: EngineSpec | None = None

    def start_early(self, spec: EngineSpec) -> None:
        """Start the session for `spec` on a daemon thread, so the JVM boots while dbt parses.

        The first connection's `get` waits on the lock for it; a failure is kept and raised
        there, to the node that needs the session.
        """
        self._deferred = None  # this start supersedes one held back

        def start() -> None:
            with self._lock:
                try:
                    self._session_for(spec)
                except BaseException as exc:
                    self._early_failure = (spec, exc)

        threading.Thread(target=start, name="lakehouse-engine-start", daemon=True).start()

    def attach_is_quick(self, spec: EngineSpec) -> bool:
        """Whether `spec`'s session would be an attach to a warm engine already running (a
        fraction of a second), not a JVM's start."""
        if spec.is_connect or keep_warm_minutes(spec.master, spec.keep_warm_minutes) <= 0:
            return False
        java = java_executable()
        return java is not None and warm.engine_running(spec, java)

    def defer_start(self, spec: EngineSpec) -> None:
        """Hold `spec`'s early start until `start_deferred` (or the first `get`)."""
        self._deferred = spec

    def has_deferred(self) -> bool:
        return self._deferred is not None

    def start_deferred(self) -> bool:
        """Start the deferred session in the background now; False when none was deferred."""
        with self._deferred_lock:  # asked from the listing and from the edit check (reuse/)
            spec, self._deferred = self._deferred, None
        if spec is None:
            return False
        self.start_early(spec)
        return True

    def get(self, spec: EngineSpec) -> SparkSession:
        self._deferred = None  # asked for now: a start held back is not made later
        with self._lock:
            failed, self._early_failure = self._early_failure, None
            if failed is not None and failed[0] == spec:
                # The early start already failed for this spec: its error, not a second wait.
                raise failed[1]
            return self._session_for(spec)

    def _session_for(self, spec: EngineSpec) -> SparkSession:
        """The session built from `spec`, started or restarted as needed; under the lock."""
        if self._spark is not None and self._spec == spec:
            if self._attachment is None or self._attachment.alive():
                return self._spark
            logger.debug("the warm engine stopped since the last command; attaching anew")
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

    @property
    def attachment(self) -> warm.Attachment | None:
        """The warm engine this process's session is on, if it is on one."""
        return self._attachment

    def _start(self, spec: EngineSpec) -> SparkSession:
        runtime.quiet_error_logs()
        if spec.is_connect:
            # No JVM here: the server's driver opens the catalog.
            return start_connect_session(spec)  # type: ignore[no-any-return]
        answer_without_imports()
        java = usable_java()
        if not spec.is_local:
            # Before anything starts (the JVM), so a master that does not
            # answer fails at once and the warning shows whatever happens next.
            if spec.local_storage:
                logger.warning(local_storage_warning(spec))
            check_master_reachable(spec.master, addresses=master_addresses_of(spec))
        keep_minutes = keep_warm_minutes(spec.master, spec.keep_warm_minutes)
        if spec.embedded_catalog is not None:
            prepare_embedded_catalog(spec.embedded_catalog)
        if keep_minutes > 0:
            spark = self._attach(spec, java, keep_minutes)
        else:
            spark = self._start_spark(spec, java)
        answer_without_delay(spark)
        if spec.embedded_catalog is not None:
            try:
                open_embedded_catalog(spark, spec.embedded_catalog)
            except Exception:
                self._end(spark, spec)
                raise
        return spark

    def _attach(self, spec: EngineSpec, java: str, keep_minutes: float) -> SparkSession:
        """A session of this command's own on the warm engine for `spec` (engine/warm/)."""
        from pyspark import SparkContext

        if self._gateway is not None:
            self._abandon_gateway(SparkContext)  # this process's own JVM, from a cold start
        began = time.monotonic()
        archive_options = classarchive.java_options(java, cache_dir(), os.environ)
        attachment = warm.attach(spec, java, keep_minutes, tuple(archive_options))
        spark = attachment.spark
        try:
            self._apply_secrets(spark, spec)
        except BaseException:
            attachment.detach(_catalog_names(spec))
            raise
        self._attachment = attachment
        logger.debug(
            f"attached to the warm engine in {attachment.folder} (JVM pid {attachment.jvm_pid}) "
            f"in {time.monotonic() - began:.2f}s"
        )
        return spark

    def _apply_secrets(self, spark: SparkSession, spec: EngineSpec) -> None:
        """What the session needs beyond its conf; on failure the caller stops the session."""
        if spec.secret_hadoop_conf:
            # Sessions read Hadoop settings from the shared state's copy of the context's conf,
            # made when the shared state is: on a warm engine, before this command came.
            jsession = spark._jsparkSession  # type: ignore[attr-defined]
            for hadoop_conf in (
                spark.sparkContext._jsc.hadoopConfiguration(),  # type: ignore[union-attr]
                jsession.sharedState().hadoopConf(),
            ):
                for key, value in spec.secret_hadoop_conf:
                    hadoop_conf.set(key, value)
            initialize_s3a_credentials(spark, spec)
        set_system_properties(spark, spec)
        load_catalogs_with_secrets(spark, spec)

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
                    + log_tail(log_path)
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
        try:
            self._apply_secrets(spark, spec)
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

    def _end(self, spark: SparkSession, spec: EngineSpec) -> None:
        """Stop this process's session: detach from a warm engine (which runs on), release a
        Spark Connect session and its commits' clones, or stop the SparkContext of this
        process's JVM."""
        attachment, self._attachment = self._attachment, None
        if attachment is not None:
            attachment.detach(_catalog_names(spec))
        elif spec.is_connect:
            release_commit_sessions(spark)
            runtime.stop_session(spark)
        else:
            try:  # what this process left running after its commands (engine/later.py) first
                later.settle(spark, LATER_SECONDS, only_if_started_here=True)
            except Exception as exc:  # the JVM is gone already: nothing left to wait for
                logger.debug(f"statements run after the commands not waited for: {exc}")
            runtime.stop_session(spark)

    def _stop_session(self) -> None:
        if self._spark is not None:
            try:
                if self._spec:
                    self._end(self._spark, self._spec)
                else:
                    runtime.stop_session(self._spark)
            finally:
                self._spark = None
                self._spec = None

    def stop(self) -> None:
        with self._lock:
            self._stop_session()

    def stop_at_exit(self) -> None:
        """The process's end. An early start still running there was never asked for (every
        node was decided without the engine): the command ends now rather than when the JVM is
        up, 10-15 s later for an engine not running yet. A warm engine, its own process, comes
        up all the same for the next command; a JVM of this process ends with it."""
        if not self._lock.acquire(blocking=False):
            logger.debug("the engine's early start was not needed: not waited for")
            return
        try:
            self._stop_session()
        finally:
            self._lock.release()


def _catalog_names(spec: EngineSpec) -> tuple[str, ...]:
    return tuple(mount.name for mount in spec.catalogs)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


ENGINE = _Engine()
atexit.register(ENGINE.stop_at_exit)
