"""A real Spark Connect server for the tests, on 127.0.0.1 only, stopped when they end.

Spark 3.5's own `SparkConnectServer` binds the wildcard address, so the server is
ConnectServer.java beside this file: Spark's Connect service on a gRPC server bound to
127.0.0.1, compiled with javac on first use into the jar cache (like the REST catalog). It runs
on plain `java` with the pyspark wheel's jars, the Connect service (inside the Spark 4 wheel; for
3.5 the `spark-connect` jar from Maven Central, fetched by scripts/install-tests.sh, never by a
test) and the caller's jars (e.g. the Iceberg runtime). The same source compiles against both lines.

The driver's own ports (RPC, block manager) bind 127.0.0.1 too, and the UI is off. The caller's
Spark conf (static settings such as `spark.sql.extensions`, catalogs with their secrets) goes
through a 0600 properties file that the server deletes once read: never the command line, never
the log.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars import CachedJarSet, maven_jar
from functional.infra.processes import (
    STARTUP_TIMEOUT_S,
    ServerError,
    _stop_process,
    _tail,
    spawn_logged,
)
from functional.infra.servers import compiled_java, pyspark_jars

# The newest 3.5.x server Maven Central has; pyspark 3.5.9's client speaks to it.
SPARK_CONNECT_VERSION = "3.5.7"
SPARK_CONNECT_JARS = CachedJarSet(
    need="spark-connect",
    sources=(
        maven_jar(
            "org.apache.spark",
            "spark-connect_2.12",
            SPARK_CONNECT_VERSION,
            "15366e21273a874c760b51fa00743a2acb8fa78642cc35d7a076a3ade0c5eef6",
            "LAKEHOUSE_SPARK_CONNECT_JAR",
        ),
    ),
)

SOURCE = Path(__file__).with_name("ConnectServer.java")
READY_PREFIX = "CONNECT_SERVER_PORT="
LOOPBACK = "127.0.0.1"
# On the command line; the caller's conf may override these.
DEFAULT_CONF = {
    "spark.master": "local[2]",
    # A slow listener event is logged whole, a job's with the session's conf: the catalog's
    # token the adapter sends (docs/running.md#on-spark-connect).
    "spark.scheduler.listenerbus.logSlowEvent": "false",
    "spark.ui.enabled": "false",
    "spark.app.name": "lakehouse-connect-test",
}
# On the command line; the caller's conf may not touch these (they keep every port on loopback).
FIXED_CONF = {
    "spark.driver.host": LOOPBACK,
    "spark.driver.bindAddress": LOOPBACK,
    # Spark 4's own gRPC server (ConnectServer.java); 3.5 has no such key and ignores it.
    "spark.connect.grpc.binding.address": LOOPBACK,
    "spark.connect.grpc.binding.port": "0",
}
# What Spark's launcher (org.apache.spark.launcher.JavaModuleOptions, 3.5 and 4.1) adds for
# Java 17; plain `java` needs them spelled out.
JAVA_MODULE_OPTIONS = (
    "-XX:+IgnoreUnrecognizedVMOptions",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
    "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true",  # 4.1's list: Arrow's buffers under Netty
)


def java_executable() -> str:
    """`$JAVA_HOME/bin/java` when JAVA_HOME names a JDK, else the `java` on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ServerError("java is not on PATH: the Spark Connect test server needs a JDK 17.")
    return java


def _escape(text: str, key: bool) -> str:
    """`text` in java.util.Properties syntax (the file is read as UTF-8)."""
    out = []
    for index, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in "\n\r\t\f":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}[char])
        elif (key and char in "=: #!") or (char == " " and index == 0):
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def write_properties(path: Path, entries: Mapping[str, str]) -> None:
    """Write `entries` to `path`, readable by this user only from the moment it exists."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)  # an older file may have had another mode
        for key, value in entries.items():
            handle.write(f"{_escape(key, key=True)}={_escape(str(value), key=False)}\n")


def connect_service_classpath() -> list[Path]:
    """Spark with its Connect service: a Spark 4 wheel carries it (spark-connect_2.13), 3.5's
    comes from the jar cache."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return [pyspark_jars()]
    located = SPARK_CONNECT_JARS.locate()
    if located is None:
        raise ServerError(
            "The spark-connect jar is not in the cache: run `bash scripts/install-tests.sh`."
        )
    return [pyspark_jars(), located[0]]


class ConnectServer:
    """A Spark Connect server on 127.0.0.1 (a free port) with the caller's jars and conf.

    `conf` holds extra `spark.*` settings, static ones included (`spark.sql.extensions`,
    `spark.sql.catalog.*`); it may carry secrets and is never shown. `folder` receives the log
    (`log_path`) and is the server's working folder (its `spark-warehouse`).
    """

    def __init__(
        self,
        folder: Path,
        jars: Sequence[Path],
        conf: Mapping[str, str],
        *,
        heap: str = "2g",
    ) -> None:
        fixed = sorted(set(conf) & set(FIXED_CONF))
        if fixed:
            raise ValueError(f"ConnectServer sets these itself: {', '.join(fixed)}")
        self.folder = Path(folder)
        self.jars = [Path(j) for j in jars]
        self._conf = dict(conf)
        self.heap = heap
        self.process: subprocess.Popen[bytes] | None = None
        self.spark_version = ""
        self._port = 0

    def __repr__(self) -> str:  # no conf: it may hold secrets
        return f"ConnectServer(url={self.url!r}, folder={str(self.folder)!r})"

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"sc://{LOOPBACK}:{self._port}"

    @property
    def log_path(self) -> Path:
        return self.folder / "connect-server.log"

    def start(self) -> ConnectServer:
        missing = [str(j) for j in self.jars if not j.is_file()]
        if missing:
            raise ServerError(f"Spark Connect server jars not found: {', '.join(missing)}")
        self.folder.mkdir(parents=True, exist_ok=True)
        self._port = 0  # a restart announces a new one
        spark = connect_service_classpath()
        classes = compiled_java(SOURCE, spark, "connect-server")  # once, whatever the jars
        classpath = [classes, *spark, *self.jars]
        settings = self.folder / "connect-server.properties"
        write_properties(settings, self._conf)
        command = [
            java_executable(),
            f"-Xmx{self.heap}",
            "-Djava.net.preferIPv4Stack=true",  # plain IPv4 sockets: 127.0.0.1, not ::ffff:
            *JAVA_MODULE_OPTIONS,
            *(f"-D{k}={v}" for k, v in {**DEFAULT_CONF, **FIXED_CONF}.items()),
            "-cp",
            os.pathsep.join(map(str, classpath)),
            SOURCE.stem,
            str(settings),
            "0",
        ]
        env = {**os.environ, "SPARK_LOCAL_IP": LOOPBACK}
        self.process = spawn_logged(command, self.log_path, cwd=self.folder, env=env)
        self._wait_until_answering()
        return self

    def _wait_until_answering(self) -> None:
        """Wait for the announced port, then for a real Spark Connect call to succeed."""
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        problem = "no port announced"
        while True:
            if self.process.poll() is not None:
                self.process = None
                raise ServerError(f"Spark Connect server exited early:\n{_tail(self.log_path, 40)}")
            self._port = self._port or self._announced_port()
            if self._port:
                try:
                    self.spark_version = self._spark_version()
                    return
                except Exception as exc:  # grpc.RpcError while the service comes up
                    problem = f"{type(exc).__name__}: {exc}"
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(
                    f"Spark Connect server not answering on {self.url} ({problem}):\n"
                    + _tail(self.log_path, 40)
                )
            time.sleep(0.2)

    def _announced_port(self) -> int:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return 0
        for line in text.splitlines():
            if line.startswith(READY_PREFIX):
                return int(line[len(READY_PREFIX) :].strip())
        return 0

    def _spark_version(self) -> str:
        """One AnalyzePlan call (the server's Spark version) over the client's own protocol."""
        import grpc
        from pyspark.sql.connect.proto import base_pb2, base_pb2_grpc

        request = base_pb2.AnalyzePlanRequest(
            session_id=str(uuid.uuid4()),
            user_context=base_pb2.UserContext(user_id="readiness-probe"),
            spark_version=base_pb2.AnalyzePlanRequest.SparkVersion(),
        )
        with grpc.insecure_channel(f"{LOOPBACK}:{self._port}") as channel:
            reply = base_pb2_grpc.SparkConnectServiceStub(channel).AnalyzePlan(request, timeout=10)
        return str(reply.spark_version.version)

    def stop(self) -> None:
        _stop_process(self.process)
        self.process = None

    def __enter__(self) -> ConnectServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
