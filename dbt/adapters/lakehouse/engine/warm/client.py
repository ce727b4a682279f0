"""A dbt command's side of the warm engine: find or start it, attach with a session of its own,
detach.

Attaching is PySpark's own path for a driver that already runs: a py4j gateway to the JVM's
port with its secret, a SparkContext over the JVM's context, and `newSession()` of the root
session, so SQL conf, temporary views, `spark.wap.branch` and the catalogs are this command's
own. Everything that reaches into Java objects (commit lineage, audited publishing, the Delta
log, docs stats) works as on a driver started here.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine.launch import log_tail, process_running
from dbt.adapters.lakehouse.engine.runtime import java_class
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.engine.warm import server
from dbt.adapters.lakehouse.engine.warm.folder import (
    home_salt,
    private_dir,
    read_private_json,
    start_lock,
    stop_engine,
    supervisor_alive,
)
from dbt.adapters.lakehouse.engine.warm.gateway import (
    attach_gateway,
    context_conf,
    forget_context,
)
from dbt.adapters.lakehouse.engine.warm.identity import (
    engine_conf,
    engine_key,
    engines_home,
    session_conf,
    warm_up_seconds,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")

START_TIMEOUT_SECONDS = 300.0
PING_TIMEOUT_SECONDS = 20.0
# A Unix socket's path is limited to 108 bytes on Linux (104 on macOS).
MAX_SOCKET_PATH = 100


class EngineGone(Exception):
    """The engine stopped between finding it and attaching; start another."""


@dataclass
class Attachment:
    """This process's use of an engine: its control connection and its session."""

    folder: Path
    state: dict[str, Any]
    control: socket.socket
    spark: SparkSession
    gateway: Any
    tag: str

    @property
    def jvm_pid(self) -> int | None:
        pid = self.state.get("jvm_pid")
        return pid if isinstance(pid, int) else None

    @property
    def log_path(self) -> Path:
        return self.folder / server.LOG_FILE

    def alive(self) -> bool:
        """The supervisor still holds this attachment (it closes it when the engine stops)."""
        try:
            return self.control.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False

    def detach(self, catalogs: tuple[str, ...] = ()) -> None:
        try:
            _close_catalogs(self.spark, catalogs)
        except Exception:  # the engine may be gone; nothing of this session is left to close
            pass
        forget_context(self.spark, self.gateway)
        self.control.close()  # the supervisor cancels this command's jobs, if any still run


def attach(
    spec: EngineSpec,
    java: str,
    keep_warm_minutes: float,
    extra_java_options: tuple[str, ...] = (),
) -> Attachment:
    """A session of its own on the engine for `spec`, starting the engine unless it runs."""
    folder = private_dir(_engine_folder(spec, java))
    if len(str(folder / server.CONTROL_SOCKET)) > MAX_SOCKET_PATH:
        raise EngineSetupError(
            f"The warm engine's folder {folder} is too deep for its control socket. Fix: set "
            "LAKEHOUSE_ENGINE_HOME to a shorter path, or LAKEHOUSE_ENGINE=cold."
        )
    last: BaseException | None = None
    for _ in range(3):
        tag = f"lakehouse-{os.getpid()}-{secrets.token_hex(4)}"
        hello = {
            "op": "attach",
            "pid": os.getpid(),
            "tag": tag,
            "keep_warm_minutes": keep_warm_minutes,
            "warm_up_seconds": warm_up_seconds(spec.master, spec.warm_up_seconds),
        }
        control, state = _attach_control(folder, spec, java, hello, extra_java_options)
        try:
            return _open_session(folder, state, control, spec, tag)
        except EngineGone as exc:
            last = exc
            control.close()
            logger.debug(f"the warm engine in {folder} did not answer ({exc}); replacing it")
            stop_engine(folder)
    raise EngineSetupError(
        f"The warm Spark engine in {folder} did not answer three times in a row ({last}); its "
        f"output is in {folder / server.LOG_FILE}. Fix: `dbt-lakehouse engine stop`, or "
        "LAKEHOUSE_ENGINE=cold to run without it."
    )


def _engine_folder(spec: EngineSpec, java: str) -> Path:
    home = private_dir(engines_home())
    return home / engine_key(spec, java, salt=home_salt(home))


def engine_running(spec: EngineSpec, java: str) -> bool:
    """Whether the engine `spec` would attach to is up, without starting one."""
    folder = _engine_folder(spec, java)
    return folder.is_dir() and supervisor_alive(folder)


def _attach_control(
    folder: Path,
    spec: EngineSpec,
    java: str,
    hello: dict[str, Any],
    extra_java_options: tuple[str, ...],
) -> tuple[socket.socket, dict[str, Any]]:
    with start_lock(folder):
        for _ in range(2):
            if supervisor_alive(folder) and not read_private_json(folder / server.STATE_FILE):
                # Alive with no state yet: starting, and its starter gone (a command that ended
                # or was stopped as its engine started, which lets go of the start lock). Its
                # socket is not bound yet; taken for wedged, it would be stopped (a 30 s wait)
                # and started again.
                logger.debug(f"the warm engine in {folder} is starting; waiting for it")
                _await_ready(folder, lambda: None if supervisor_alive(folder) else 0, False)
            if supervisor_alive(folder):
                try:
                    return _connect(folder, hello), read_private_json(folder / server.STATE_FILE)
                except (OSError, ValueError):
                    # Stopping (idle time just ran out) or wedged: let it go, start another.
                    stop_engine(folder)
            _start(folder, spec, java, hello, extra_java_options)
    raise EngineSetupError(f"The warm Spark engine in {folder} started but took no connection.")


def _connect(folder: Path, hello: dict[str, Any]) -> socket.socket:
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        control.settimeout(10)
        control.connect(str(folder / server.CONTROL_SOCKET))
        control.sendall((json.dumps(hello) + "\n").encode())
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = control.recv(4096)
            if not chunk:
                raise ConnectionResetError("the engine closed the connection")
            answer += chunk
        if not json.loads(answer).get("ok"):
            raise ConnectionRefusedError(f"the engine refused: {answer.decode().strip()}")
        control.settimeout(None)
        return control
    except BaseException:
        control.close()
        raise


def _start(
    folder: Path,
    spec: EngineSpec,
    java: str,
    hello: dict[str, Any],
    extra_java_options: tuple[str, ...],
) -> None:
    """Start the supervisor for `spec` and wait until its engine is ready; under the start lock.
    The first command's idle time and warm-up (`hello`) are the engine's."""
    for name in (server.STATE_FILE, server.CONTROL_SOCKET):
        (folder / name).unlink(missing_ok=True)  # a dead engine's leftovers
    conf = dict(engine_conf(spec))
    if extra_java_options:
        own = conf.get("spark.driver.extraJavaOptions", "")
        conf["spark.driver.extraJavaOptions"] = " ".join([own, *extra_java_options]).strip()
    server.write_private(
        folder / server.LAUNCH_FILE,
        {
            "master": spec.master,
            "app_name": spec.app_name,
            "conf": sorted(conf.items()),
            "keep_warm_minutes": hello["keep_warm_minutes"],
            "warm_up_seconds": hello["warm_up_seconds"],
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY_")}
    env["JAVA_HOME"] = str(Path(java).resolve().parent.parent)
    if spec.is_local:
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    logger.debug(f"starting a warm Spark engine ({spec.master}) in {folder}")
    log = (folder / server.LOG_FILE).open("ab")
    with log:
        process = subprocess.Popen(
            [sys.executable, server.__file__, str(folder)],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not in dbt's process group: ctrl-c in dbt leaves it be
            close_fds=True,
        )
    _await_ready(folder, process.poll)


def _await_ready(
    folder: Path, exit_code: Callable[[], int | None], gone_is_failure: bool = True
) -> None:
    """Until the engine starting in `folder` is ready; its start's failure raised. `exit_code`:
    its supervisor's, None while it runs. Not `gone_is_failure` (another command's start
    waited for): a supervisor gone without a state returns, for this command to start one."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        state = read_private_json(folder / server.STATE_FILE)
        if state.get("state") == "ready":
            return
        code = exit_code()
        if state.get("state") == "failed" or (code is not None and gone_is_failure):
            reason = state.get("reason") or f"it exited with code {code}"
            raise EngineSetupError(
                f"The warm Spark engine did not start: {reason}. Its output is in "
                f"{folder / server.LOG_FILE}:\n{log_tail(folder / server.LOG_FILE)}"
            )
        if code is not None:
            return
        time.sleep(0.05)
    stop_engine(folder)
    raise EngineSetupError(
        f"The warm Spark engine did not start within {START_TIMEOUT_SECONDS:.0f}s; its output "
        f"is in {folder / server.LOG_FILE}."
    )


def _ping(state: dict[str, Any]) -> None:
    """One call with a read timeout on a throwaway connection: a JVM that is alive but wedged
    (stuck in GC, deadlocked) is replaced rather than hanging the command."""
    from py4j.java_gateway import GatewayParameters, JavaGateway

    probe = JavaGateway(
        gateway_parameters=GatewayParameters(
            port=state["port"], auth_token=state["secret"], read_timeout=PING_TIMEOUT_SECONDS
        )
    )
    try:
        java_class(probe, "java.lang.System").currentTimeMillis()
    finally:
        probe.close()


def _open_session(
    folder: Path, state: dict[str, Any], control: socket.socket, spec: EngineSpec, tag: str
) -> Attachment:
    from py4j.protocol import Py4JError
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    try:
        _ping(state)
    except (Py4JError, OSError, KeyError) as exc:
        raise EngineGone(f"no answer to a ping: {exc}") from None
    forget_context(None, None)
    gateway = attach_gateway(state["port"], state["secret"])
    handler = signal.getsignal(signal.SIGINT)
    try:
        jvm = gateway.jvm
        spark_context = java_class(gateway, "org.apache.spark.SparkContext").getOrCreate()
        java_context = java_class(gateway, "org.apache.spark.api.java.JavaSparkContext")
        jsc = java_context.fromSparkContext(spark_context)
        context = SparkContext(gateway=gateway, jsc=jsc, conf=context_conf(jvm, jsc))
        sessions = jvm.SparkSession  # PySpark's import: the classic one on Spark 4
        root = sessions.getDefaultSession().get()
        spark = SparkSession(context, jsparkSession=root.newSession())
        # PySpark makes the first session it wraps the JVM's default; the root stays that, so
        # a session falling back to the default never gets another command's catalogs.
        sessions.setDefaultSession(root)
        sessions.setActiveSession(spark._jsparkSession)
        for key, value in session_conf(spec):
            spark.conf.set(key, value)
    except (Py4JError, OSError) as exc:
        forget_context(None, gateway)
        raise EngineGone(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    finally:
        if threading.current_thread() is threading.main_thread():
            # PySpark's SIGINT handler cancels every job in the JVM, other commands' too; dbt's
            # own handling cancels this command's jobs (their job groups).
            signal.signal(signal.SIGINT, handler)
    spark._lakehouse_job_tag = tag  # type: ignore[attr-defined]
    return Attachment(folder, state, control, spark, gateway, tag)


def _close_catalogs(spark: Any, names: tuple[str, ...]) -> None:
    """Close the Iceberg catalogs this session opened (JDBC pools, REST clients): the engine
    outlives the session, and would otherwise keep their connections and threads."""
    jvm = spark._jvm
    manager = spark._jsparkSession.sessionState().catalogManager()
    closeable = jvm.java.lang.Class.forName("java.io.Closeable")
    for name in names:
        if not manager.isCatalogRegistered(name):
            continue
        catalog = manager.catalog(name)
        if not hasattr(catalog, "icebergCatalog"):
            continue
        iceberg = catalog.icebergCatalog()
        if iceberg.getClass().getName().endswith("CachingCatalog"):
            field = iceberg.getClass().getDeclaredField("catalog")
            field.setAccessible(True)
            iceberg = field.get(iceberg)
        if closeable.isInstance(iceberg):
            iceberg.close()


def _still_running(pid: int, grace_seconds: float = 1.0) -> bool:
    """Whether the engine's JVM still runs once its connection dropped. A killed JVM's sockets
    close while the kernel tears it down, a moment before it stops counting as running, so
    it gets a short grace to be gone (paid only when a connection is lost)."""
    deadline = time.monotonic() + grace_seconds
    while process_running(pid):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)
    return False


def lost_engine_message(attachment: Attachment | None, exc: BaseException, text: str) -> str | None:
    """One line for a statement whose warm engine went away under it; None for other errors."""
    connection_lost = isinstance(exc, ConnectionError) or (
        type(exc).__name__ in {"Py4JNetworkError", "Py4JError"} and "java" not in text
    )
    if attachment is None or not connection_lost:
        return None
    jvm_running = attachment.jvm_pid is not None and _still_running(attachment.jvm_pid)
    what = (
        "closed its connection (the engine itself still runs)"
        if jvm_running and attachment.alive()
        else "stopped"
    )
    return (
        f"The warm Spark engine (JVM pid {attachment.jvm_pid}) {what} while this statement ran "
        f"({text.splitlines()[0] if text else type(exc).__name__}). Nothing is half-written: an "
        "Iceberg commit is atomic, so the table this statement wrote has all of its commit or "
        "none of it, and what earlier nodes committed stands. The next dbt command starts a new "
        f"engine; the engine's output is in {attachment.log_path}."
    )
