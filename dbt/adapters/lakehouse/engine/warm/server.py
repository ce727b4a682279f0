"""The warm engine's supervisor: owns one driver JVM and serves it to dbt commands on this machine.

Run as a script (`python server.py <engine folder>`), standard library and pyspark only, so it
does not load dbt. It launches the JVM through PySpark (`launch_gateway`: the JVM's py4j server
listens on 127.0.0.1 and accepts only callers presenting its secret), creates the SparkContext
and a root session, then writes `state.json` (mode 0600: the gateway's port and secret, this
process's and the JVM's pids) and listens on `control.sock`, a Unix socket in the engine's
folder (mode 0700), refusing a peer of another OS user.

A dbt command attaches (client.py) by holding a control connection open for as long as it
uses the engine, and reaches Spark through the gateway with its own session. This process:
- counts attached commands and stops the engine once none has been attached for the idle time
  (the latest command's `keep_warm_minutes`);
- when a command's connection closes, however its process ended, cancels the Spark jobs tagged
  with that command's tag, so a killed command leaves no job running, and when the last one
  leaves, drops cached query results (shared by all sessions) so nothing is served stale;
- exits when the JVM exits (killed, or out of memory: the engine's JVM exits on an
  OutOfMemoryError), removing its state, so the next command starts a new engine. If this
  process dies instead, the JVM sees its stdin close and exits (PySpark's gateway does that).

Requests on the control socket, one JSON line each: `attach` (kept open), `status`, `stop`.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

LAUNCH_FILE = "launch.json"
STATE_FILE = "state.json"
CONTROL_SOCKET = "control.sock"
LOG_FILE = "engine.log"
# Held exclusively by the live supervisor; a shared probe that succeeds means none runs.
LIVE_LOCK = "live.lock"
TICK_SECONDS = 0.5
# The threads running what a command started and did not wait for (engine/later.py's NAME: this
# script cannot import that module, which loads dbt; a unit test holds the two equal), waited
# for before the SparkContext stops under them; within `engine stop`'s 30 s before it kills.
LATER_THREAD = "lakehouse-later-statements"
LATER_SECONDS = 20.0


def settle_later(jvm: Any, seconds: float) -> int:
    """Wait up to `seconds` for the JVM's LATER_THREAD threads; how many were running."""
    deadline = time.monotonic() + seconds
    running = 0
    for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
        if thread.getName() == LATER_THREAD and thread.isAlive():
            running += 1
            left = int((deadline - time.monotonic()) * 1000)
            if left > 0:  # join(0) would wait for ever
                thread.join(left)
    return running


def write_private(path: Path, data: dict[str, Any]) -> None:
    """Written whole (0600) and renamed, so a reader never sees half a file or a wide mode."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    partial.replace(path)


def peer_uid(connection: socket.socket) -> int | None:
    """The OS user of a Unix-socket peer (Linux); None where the kernel does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", credentials)[1])


def rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Supervisor:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.launch = json.loads((folder / LAUNCH_FILE).read_text())
        self.keep_seconds = float(self.launch["keep_warm_minutes"]) * 60
        self.clients: dict[socket.socket, dict[str, Any]] = {}
        self.idle_since = time.monotonic()
        self.started = time.time()
        self.selector = selectors.DefaultSelector()
        self.stopping = False
        self.gateway: Any = None
        self.context: Any = None
        self.root: Any = None
        self.warm_up: Any = None

    # --- start ------------------------------------------------------------------------------

    def start(self) -> None:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession

        conf = SparkConf(loadDefaults=False)
        conf.setMaster(self.launch["master"]).setAppName(self.launch["app_name"])
        for key, value in self.launch["conf"]:
            conf.set(key, value)
        log = (self.folder / LOG_FILE).open("ab")
        self.gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
        self.context = SparkContext(conf=conf, gateway=self.gateway)
        self.context.setLogLevel("ERROR")
        self.root = SparkSession(self.context)
        # The classes the first command would load cold: the SQL planner and a job's path.
        self.root.sql("select 1 as warm").collect()

    def listen(self) -> socket.socket:
        path = self.folder / CONTROL_SOCKET
        path.unlink(missing_ok=True)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)
        try:
            server.bind(str(path))
        finally:
            os.umask(previous)
        server.listen(16)
        server.setblocking(False)
        self.selector.register(server, selectors.EVENT_READ, self.accept)
        return server

    def start_warm_up(self) -> None:
        """Compile the next commands' paths while none is attached (warm_up.py)."""
        budget = float(self.launch.get("warm_up_seconds") or 0)
        if budget <= 0:
            return
        # Run as a script, the module beside this one is a top-level one; importing it through
        # dbt's package would load dbt.
        from warm_up import IDLE_SECONDS, WarmUp  # type: ignore[import-not-found]

        def idle() -> bool:
            return not self.clients and time.monotonic() - self.idle_since >= IDLE_SECONDS

        self.warm_up = WarmUp(self.root, self.folder, budget, idle)
        self.warm_up.start()

    def ready_state(self) -> dict[str, Any]:
        parameters = self.gateway.gateway_parameters
        return {
            "state": "ready",
            "pid": os.getpid(),
            "jvm_pid": self.gateway.proc.pid,
            "port": parameters.port,
            "secret": parameters.auth_token,
            "started": self.started,
            "master": self.launch["master"],
            "app_name": self.launch["app_name"],
            "conf": self.launch["conf"],
            "python": sys.executable,
        }

    # --- serve ------------------------------------------------------------------------------

    def accept(self, server: socket.socket) -> None:
        try:
            connection, _ = server.accept()
        except BlockingIOError:
            return
        uid = peer_uid(connection)
        if uid is not None and uid != os.getuid():
            connection.close()  # another OS user: no answer at all
            return
        connection.settimeout(5)
        try:
            request = json.loads(connection.makefile("r").readline() or "{}")
        except (OSError, ValueError):
            connection.close()
            return
        operation = request.get("op")
        if operation == "attach":
            self.clients[connection] = {
                "pid": request.get("pid"),
                "tag": request.get("tag"),
                "since": time.time(),
            }
            if request.get("keep_warm_minutes") is not None:
                self.keep_seconds = float(request["keep_warm_minutes"]) * 60
            if self.warm_up is not None:
                self.warm_up.interrupt(self.context)
            self.reply(connection, {"ok": True})
            connection.setblocking(False)
            self.selector.register(connection, selectors.EVENT_READ, self.client_event)
            return
        if operation == "status":
            self.reply(connection, self.status())
        elif operation == "stop":
            self.reply(connection, {"ok": True, "clients": len(self.clients)})
            self.stopping = True
        else:
            self.reply(connection, {"ok": False, "error": f"unknown request {operation!r}"})
        connection.close()

    @staticmethod
    def reply(connection: socket.socket, message: dict[str, Any]) -> None:
        try:
            connection.sendall((json.dumps(message) + "\n").encode())
        except OSError:
            pass

    def client_event(self, connection: socket.socket) -> None:
        try:
            data = connection.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            return  # an attached command sends nothing more; only its leaving matters
        # Closing an attach connection is the command's way of leaving, however it ended.
        self.selector.unregister(connection)
        client = self.clients.pop(connection, {})
        connection.close()
        if client.get("tag"):
            # A command that ended mid-statement (killed, interrupted) leaves no job running.
            try:
                self.context.cancelJobsWithTag(client["tag"])
            except Exception:
                pass
        if not self.clients:
            self.idle_since = time.monotonic()
            try:
                self.root._jsparkSession.sharedState().cacheManager().clearCache()
            except Exception:
                pass
            # py4j handles a method was called on are in reference cycles (a JavaMember points
            # back at its object): collected now, their deletions reach the JVM, which would
            # otherwise hold two objects more for each command that ended.
            gc.collect()

    def status(self) -> dict[str, Any]:
        jvm_pid = self.gateway.proc.pid
        status: dict[str, Any] = {
            "ok": True,
            "pid": os.getpid(),
            "jvm_pid": jvm_pid,
            "uptime_seconds": round(time.time() - self.started, 1),
            "clients": [
                {"pid": c["pid"], "attached_seconds": round(time.time() - c["since"], 1)}
                for c in self.clients.values()
            ],
            "idle_seconds": 0 if self.clients else round(time.monotonic() - self.idle_since, 1),
            "keep_warm_minutes": self.keep_seconds / 60,
            "master": self.launch["master"],
            "conf": self.launch["conf"],
            "rss_bytes": rss_bytes(jvm_pid),
            "folder": str(self.folder),
        }
        if self.warm_up is not None:
            status["warm_up"] = self.warm_up.status()
        try:
            runtime = self.context._jvm.java.lang.Runtime.getRuntime()
            status["heap_used_bytes"] = runtime.totalMemory() - runtime.freeMemory()
            status["heap_max_bytes"] = runtime.maxMemory()
        except Exception:
            pass
        return status

    def serve(self) -> None:
        while not self.stopping:
            for key, _ in self.selector.select(timeout=TICK_SECONDS):
                key.data(key.fileobj)
            if self.gateway.proc.poll() is not None:
                return  # the JVM is gone (killed, or out of memory)
            if not self.clients and time.monotonic() - self.idle_since > self.keep_seconds:
                return

    # --- stop -------------------------------------------------------------------------------

    def shutdown(self, failed: bool) -> None:
        # A failed start's state stays: the waiting command reads its reason there. Otherwise
        # it says "stopping" (with the pids stop_engine may need) until the JVM is gone, so
        # `engine status` does not take a stopping engine for a starting one.
        (self.folder / CONTROL_SOCKET).unlink(missing_ok=True)
        if not failed:
            jvm_pid = self.gateway.proc.pid if self.gateway is not None else None
            stopping = {"state": "stopping", "pid": os.getpid(), "jvm_pid": jvm_pid}
            write_private(self.folder / STATE_FILE, stopping)
        for connection in list(self.clients):
            connection.close()
        if self.warm_up is not None:
            self.warm_up.stop()
            self.warm_up.interrupt(self.context)
            self.warm_up.join(timeout=10)  # its files removed
        try:
            self._stop_jvm()
        finally:
            if not failed:
                (self.folder / STATE_FILE).unlink(missing_ok=True)

    def _stop_jvm(self) -> None:
        if self.gateway is None:
            return
        process = self.gateway.proc
        if process.poll() is None:
            try:  # the last command's test results, say, whose write it left running
                settle_later(self.context._jvm, LATER_SECONDS)
            except Exception:
                pass
            try:
                self.context.stop()
            except Exception:
                pass
            try:
                process.stdin.close()  # the gateway's signal to exit
                process.wait(timeout=20)
            except Exception:
                process.kill()


def take_live_lock(folder: Path, patience: float = 2.0) -> int | None:
    """The descriptor holding the folder's live lock (kept open for as long as this process
    lives), or None when another supervisor holds it. Whether a supervisor is alive is asked by
    taking the lock shared for an instant (folder.py `supervisor_alive`: `engine status`, a
    command's check whether an attach would be quick): such a probe can hold it just as this
    one starts, so only a lock still taken after `patience` seconds is another supervisor's."""
    live = os.open(folder / LIVE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(live, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return live
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(live)
                return None
            time.sleep(0.02)


def main(folder: Path) -> int:
    if take_live_lock(folder) is None:
        return 0  # another supervisor already serves this engine
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    supervisor = Supervisor(folder)
    failed = True
    try:
        try:
            supervisor.start()
            supervisor.listen()
        except BaseException as exc:
            reason = " ".join(str(exc).split())[:2000] or type(exc).__name__
            write_private(folder / STATE_FILE, {"state": "failed", "reason": reason})
            raise
        write_private(folder / STATE_FILE, supervisor.ready_state())
        failed = False
        supervisor.start_warm_up()
        supervisor.serve()
    finally:
        supervisor.shutdown(failed)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
