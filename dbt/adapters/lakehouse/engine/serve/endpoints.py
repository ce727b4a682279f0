"""The served endpoints inside the warm engine's JVM: Spark's HiveServer2 (Thrift, binary
transport) and Spark Connect, both started and stopped through py4j (docs/serving.md).

Every client session, on either endpoint, is a `newSession()` of one served session: its own
SQL conf, temporary views and current schema. Spark gives a new session the SparkConf and the
options its parent was built with, not the parent's runtime conf; the catalogs of a warm
engine are runtime conf of each command's session (engine/warm/identity.py), so they are the
served session's build options, which its children copy, and nowhere else: dbt commands of
other profiles on the same engine never see them. The served session has a shared state of
its own (jvm_classes.py says why); its cached query results are its clients'.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.engine.serve.jvm_classes import served_source
from dbt.adapters.lakehouse.engine.serve.token import thrift_auth_source, token_digest
from dbt.adapters.lakehouse.exceptions import EngineSetupError

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
CONNECT_SERVICE_CLASS = "org.apache.spark.sql.connect.service.SparkConnectService"
_SESSION_CLASS = "org.apache.spark.sql.classic.SparkSession"
_PACKAGE = "lakehouse_serve"
_SINGLE_SESSION = "spark.sql.hive.thriftServer.singleSession"
# Spark Connect's settings, read from the context's conf when its server starts.
CONNECT_HOST = "spark.connect.grpc.binding.address"
CONNECT_PORT = "spark.connect.grpc.binding.port"
CONNECT_TOKEN = "spark.connect.authenticate.token"  # noqa: S105 - a conf key, not a secret


@dataclass
class Served:
    """What `start_endpoints` started, for `stop_endpoints`."""

    session: Any = None  # the served session, parent of every client's
    thrift: Any = None
    connect: bool = False


def missing_classes(jvm: Any) -> list[str]:
    """The endpoint classes this engine's jars lack (Spark 3.5's PySpark has no Connect)."""
    missing = []
    for name in (THRIFT_SERVER_CLASS, CONNECT_SERVICE_CLASS):
        try:
            jvm.java.lang.Class.forName(name)
        except Exception:
            missing.append(name)
    return missing


def start_endpoints(
    gateway: Any,
    root: Any,
    options: Iterable[tuple[str, str]],
    host: str,
    thrift_port: int | None,
    connect_port: int | None,
    token: str,
    classes: Path,
) -> Served:
    """Start the endpoints asked for, their clients' sessions made from `root`'s context with
    `options` (the profile's catalogs); on failure, stop what started."""
    jvm = gateway.jvm
    missing = missing_classes(jvm)
    if missing:
        raise EngineSetupError(
            f"This engine's Spark has no {' or '.join(missing)}: dbt-lakehouse serve runs on "
            "the Spark 4.1 line, whose PySpark ships both endpoints. Fix: serve from an "
            'environment with `pip install "pyspark==4.1.*"` (docs/engine-lines.md).'
        )
    suffix = secrets.token_hex(6)
    provider = f"TokenCheck{suffix}"
    _compile_into(
        jvm,
        thrift_auth_source(_PACKAGE, provider, token_digest(token)) + served_source(suffix),
        classes,
    )
    # The class files are found through the driver's jar loader (they hold the digest only).
    jars = root.sharedState().jarClassLoader()
    jars.addURL(jvm.java.net.URL(classes.as_uri() + "/"))
    helper = jars.loadClass(f"{_PACKAGE}.Serve{suffix}").getConstructor(None).newInstance(None)
    conf = jvm.java.util.HashMap()
    for key, value in options:
        conf.put(key, value)
    previous = jvm.org.apache.spark.sql.SparkSession.getDefaultSession()
    started = Served(session=helper.build(root.sparkContext(), conf, jars))
    if previous.isDefined():
        # Made the JVM's default by its builder: the root stays that (engine/warm/client.py).
        jvm.org.apache.spark.sql.SparkSession.setDefaultSession(previous.get())
    try:
        if thrift_port is not None:
            _start_thrift(jvm, started, helper, jars, host, thrift_port, provider)
        if connect_port is not None:
            _start_connect(jvm, started.session, host, connect_port, token)
            started.connect = True
    except BaseException:
        stop_endpoints(jvm, started)
        raise
    return started


def _start_thrift(
    jvm: Any, started: Served, helper: Any, jars: Any, host: str, port: int, provider: str
) -> None:
    served = started.session
    # Hive builds a fresh HiveConf for each login, which reads this system property, and loads
    # the provider through the context loader of the thread serving that connection: the
    # helper's Jars loader, which finds it through `jars`.
    jvm.java.lang.System.setProperty(
        "hive.server2.custom.authentication.class", f"{_PACKAGE}.{provider}"
    )
    # The server's HiveConf is made from the served session's Hadoop conf, which copies its
    # SQL conf: these settings reach HiveServer2 through it.
    for key, value in (
        ("hive.server2.thrift.bind.host", host),
        ("hive.server2.thrift.port", str(port)),
        ("hive.server2.transport.mode", "binary"),
        ("hive.server2.authentication", "CUSTOM"),
        # A thread per connection, never reused: a login loads the token check through its
        # thread's context loader, which Hive leaves set to a session's own loader (one that
        # cannot see the check, or one Hive closed) after that session on the thread ends.
        ("hive.server2.thrift.min.worker.threads", "0"),
        ("hive.server2.thrift.worker.keepalive.time", "0s"),
    ):
        served.conf().set(key, value)
    if served.conf().get(_SINGLE_SESSION, "false").strip().lower() == "true":
        # A static conf: the profile's spark.conf set it, and every client would share one
        # session (one SQL conf, one current schema).
        raise EngineSetupError(
            f"The profile sets {_SINGLE_SESSION}=true, which gives every Thrift client one "
            "shared session; serve keeps each client's session its own. Fix: remove it from "
            "the profile's spark.conf."
        )
    # HiveServer2 clients open their session in a database, `default` unless told (PyHive,
    # dbt-spark's thrift method, JDBC URLs ending in /default): an Iceberg catalog has none
    # until made, and a client's connection would fail on it.
    try:
        served.sql("CREATE NAMESPACE IF NOT EXISTS default").collect()
    except Exception:
        pass  # a catalog that refuses (read-only rights): clients name their database
    try:
        started.thrift = helper.startThrift(served.sqlContext(), jars)
    except Exception as exc:
        raise EngineSetupError(
            f"The Thrift endpoint did not start on {host}:{port}: {_first_line(exc)}. Fix: "
            "another port (--thrift-port), or stop what listens there."
        ) from None


def _compile_into(jvm: Any, source: str, classes: Path) -> None:
    """Compile `source` with Janino (Spark's own compiler: the runtime has no javac) and write
    its class files under `classes` (private to this user: they hold the token's digest)."""
    compiler = jvm.org.codehaus.janino.SimpleCompiler()
    compiler.cook(source)
    for class_file in compiler.getClassFiles():
        path = classes / (class_file.getThisClassName().replace(".", "/") + ".class")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(bytes(class_file.toByteArray()))


def _start_connect(jvm: Any, served: Any, host: str, port: int, token: str) -> None:
    service = _connect_service(jvm)
    manager = service.sessionManager()
    # Clients' sessions are newSession()s of the manager's base session: the served one. The
    # field is set, not the creator Spark offers (`initializeBaseSession`), which takes the
    # first creator of the JVM's life only, and a later serve on this engine needs its own.
    field = manager.getClass().getDeclaredField("_baseSession")
    field.setAccessible(True)
    field.set(manager, jvm.scala.Some(served))
    conf = served.sparkContext().conf()
    conf.set(CONNECT_HOST, host)
    conf.set(CONNECT_PORT, str(port))
    conf.set(CONNECT_TOKEN, token)
    try:
        service.start(served.sparkContext())
    except Exception as exc:
        raise EngineSetupError(
            f"The Spark Connect endpoint did not start on {host}:{port}: {_first_line(exc)}. "
            "Fix: another port (--connect-port), or stop what listens there."
        ) from None
    finally:
        # The server's interceptor holds the token now; the conf (status, UI) does not.
        conf.remove(CONNECT_TOKEN)


def _connect_service(jvm: Any) -> Any:
    """Spark Connect's service object (a Scala object: its methods are the module's)."""
    module = jvm.java.lang.Class.forName(CONNECT_SERVICE_CLASS + "$")
    return module.getField("MODULE$").get(None)


def stop_endpoints(jvm: Any, served: Served) -> None:
    """Stop what `served` lists; each is attempted even when another fails."""
    if served.connect:
        try:
            _connect_service(jvm).stop(jvm.scala.Option.empty(), jvm.scala.Option.empty())
        except Exception:
            pass
        served.connect = False
    if served.thrift is not None:
        try:
            served.thrift.stop()
        except Exception:
            pass
        served.thrift = None
    if served.session is not None:
        try:  # the served clients' cached query results: nobody reads them any more
            served.session.sharedState().cacheManager().clearCache()
        except Exception:
            pass
        served.session = None


def wait_closed(host: str, ports: Iterable[int], timeout: float = 20.0) -> list[int]:
    """The ports still taking connections after `timeout` seconds (none when all closed)."""
    deadline = time.monotonic() + timeout
    open_ports = list(ports)
    while open_ports and time.monotonic() < deadline:
        open_ports = [p for p in open_ports if listening(host, p)]
        if open_ports:
            time.sleep(0.2)
    return open_ports


def listening(host: str, port: int) -> bool:
    target = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104
    try:
        with socket.create_connection((target, port), timeout=1):
            return True
    except OSError:
        return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if "Exception" in line or "Error" in line:
            return line.strip()[:300]
    return text.splitlines()[0][:300] if text else type(exc).__name__
