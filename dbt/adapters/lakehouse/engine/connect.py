"""A Spark Connect client session (`spark.master: sc://host:port`), set up from the profile.

The driver runs in the Connect server's process: what Spark reads at launch (jars, SQL
extensions, driver options) is the server's, and must be there when it starts. What a session
may set at runtime is sent here: the depot's catalogs with their secrets, the SQL settings, and
the Hadoop settings (a session's SQL conf entries are laid over its Hadoop conf, so `fs.s3a.*`
reach the file systems its catalogs open). Every catalog is loaded at once, so a server without
the Iceberg runtime or a rejected token fails the start with the reason, not a later model.

dbt's threads share the session, as they share an in-process one (a SET, a temporary view or a
checkpoint made on one thread serves the others). A statement that commits runs on a clone of
it instead (`commit_session`), with its snapshot properties in the clone's SQL conf: Iceberg
takes a commit's summary entries (commit lineage, a reused node's record) from the session's
conf, and a conf set for one thread's commit on the shared session could be read by another
thread's commit running meanwhile.
"""

from __future__ import annotations

import re
import socket
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
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
PLAN_FIELDS_KEY = "spark.sql.debug.maxToStringFields"
PLAN_FIELDS = "100000"
# Static SQL settings the adapter's conf holds: read at the server's start, refused per session.
_STATIC_SQL_KEYS = frozenset(
    {"spark.sql.extensions", "spark.sql.catalogImplementation", "spark.sql.warehouse.dir"}
)
# The server's refusal of a static setting: Spark 3.5's "Cannot modify the value of a static
# config", 4.1's "[CANNOT_MODIFY_STATIC_CONFIG] ... of the static Spark config".
_STATIC_REFUSAL = re.compile(r"static (?:spark )?config", re.I)


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
    # A plan's text with every field: what a reuse decision reads here (reuse/connect_inputs.py).
    sent.setdefault(PLAN_FIELDS_KEY, PLAN_FIELDS)
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
    # The server's launch set these; a SET would be refused.
    static = [key for key in sent if key in _STATIC_SQL_KEYS]
    settable = {key: value for key, value in sent.items() if key not in _STATIC_SQL_KEYS}
    try:
        set_confs(spark, settable)  # one round trip, not one a key
    except Exception as exc:
        if not _STATIC_REFUSAL.search(str(exc)):
            raise
        # A key this server's launch fixed: each set alone, those refused left to the launch.
        for key, value in settable.items():
            try:
                spark.conf.set(key, value)
            except Exception as refused:
                if not _STATIC_REFUSAL.search(str(refused)):
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
            runtime.rows(spark, f"show namespaces in `{catalog.name}`")
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


# --- a session of its own for each commit ------------------------------------------------------
_COMMITS = "_lakehouse_commit_sessions"  # on the shared session: its CommitSessions


class CommitSessions:
    """The clones a shared session's committing statements run on (`cloneSession`: the
    server copies its conf, temporary views and functions, one round trip of about 10 ms):
    each thread's last clone is kept until its next commit (the statement's result frame is
    the clone's) and released then, on a thread of its own; every one when the engine stops.
    Where the client or server cannot clone (PySpark 3.5, a server before Spark 4.1),
    `cannot_clone` says why, and commits run on the shared session without properties."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared
        # Known before the first commit where the client cannot (a server that cannot is told
        # by the first clone's failure).
        self.cannot_clone: str | None = (
            None if hasattr(shared, "cloneSession") else _NO_CLONE_IN_CLIENT
        )
        self.last: dict[threading.Thread, Any] = {}
        # the running commit's clone of each Spark job group (a connection's): cancelled with it
        self.running: dict[str, Any] = {}
        self._lock = threading.Lock()

    def clone(self, group: str) -> Any | None:
        me = threading.current_thread()
        with self._lock:
            if self.cannot_clone is not None:
                return None
            done = [self.last.pop(t) for t in list(self.last) if t is me or not t.is_alive()]
        if done:
            threading.Thread(target=_release, args=(done,), daemon=True).start()
        try:
            clone = self.shared.cloneSession()
        except Exception as exc:  # PySpark 3.5's client, a server before Spark 4.1
            text = str(exc).strip().splitlines()
            with self._lock:
                self.cannot_clone = text[0] if text else type(exc).__name__
            return None
        # PySpark 4.1's cloneSession skips the constructor, which sets this.
        clone.release_session_on_close = True
        with self._lock:
            self.last[me] = clone
            self.running[group] = clone
        return clone

    def finished(self, group: str) -> None:
        with self._lock:
            self.running.pop(group, None)

    def interrupt(self, group: str) -> None:
        with self._lock:
            clone = self.running.get(group)
        if clone is not None:
            clone.interruptTag(group)

    def release_all(self) -> None:
        with self._lock:
            clones, self.last = list(self.last.values()), {}
        _release(clones)


def _release(clones: Iterable[Any]) -> None:
    from dbt.adapters.lakehouse.engine.runtime import stop_session

    for clone in clones:
        try:
            stop_session(clone)
        except Exception as exc:  # the server is gone: nothing held there any more
            logger.debug(f"a Spark Connect session not released: {exc}")


def commit_sessions(shared: Any) -> CommitSessions:
    """The commit clones of the shared session `shared`."""
    with _COMMITS_LOCK:
        found = getattr(shared, _COMMITS, None)
        if found is None:
            found = CommitSessions(shared)
            setattr(shared, _COMMITS, found)
        return found


_COMMITS_LOCK = threading.Lock()
_NO_CLONE_IN_CLIENT = (
    "this PySpark's Spark Connect client cannot clone a session (PySpark 4.1 and later can)"
)


@contextmanager
def commit_session(shared: Any, group: str, conf: Mapping[str, str]) -> Iterator[Any | None]:
    """A clone of `shared` with `conf` set, for one committing statement of the connection whose
    Spark job group is `group`; None where sessions cannot be cloned (`cannot_clone`)."""
    sessions = commit_sessions(shared)
    clone = sessions.clone(group)
    if clone is None:
        yield None
        return
    try:
        set_confs(clone, conf)
        yield clone
    finally:
        sessions.finished(group)


def interrupt_commit(shared: Any, group: str) -> None:
    """Cancel the commit the connection `group` runs on a clone of `shared`, if one runs."""
    found = getattr(shared, _COMMITS, None)
    if found is not None:
        found.interrupt(group)


def release_commit_sessions(shared: Any) -> None:
    """Release the commit clones of `shared` (the engine stops it next)."""
    found = getattr(shared, _COMMITS, None)
    if found is not None:
        found.release_all()


def set_confs(session: Any, pairs: Mapping[str, str]) -> None:
    """Set every pair in one round trip (PySpark's `conf.set` is one a key)."""
    import pyspark.sql.connect.proto as proto

    kept = [proto.KeyValue(key=key, value=value) for key, value in pairs.items()]
    operation = proto.ConfigRequest.Operation(set=proto.ConfigRequest.Set(pairs=kept))
    for warning in session.client.config(operation).warnings:  # as `conf.set` warns them
        warnings.warn(warning, stacklevel=2)
