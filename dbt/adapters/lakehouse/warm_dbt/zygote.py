"""The warm dbt's zygote: dbt imported once, a forked child per `dbt` command (client.py).

`python -m dbt.adapters.lakehouse.warm_dbt.zygote <socket>`, started by a command's client as
it exits, with that command's folder and environment. It imports dbt's command line, this
adapter and the tasks a command runs (what costs a `dbt` process its first second), compiles
dbt's (de)serializers (serializers.py), freezes what it made out of the garbage collector's
reach (garbage_collector.py says why), notes the stamp of every module file it loaded, and
listens on a socket in the user cache's `warm-dbt/` folder
(0700, its socket 0600, and a peer of another user refused).

For each command it is given it forks: the child takes the command's standard streams (passed
over the socket), folder, environment, arguments and umask, and runs dbt's `cli()` as the
console script does, exiting as that process would (dbt's and Python's exit handlers, then its
status). The zygote reaps it and sends the client its wait status. A command whose client
went away (killed) gets SIGINT, which dbt handles as Ctrl-C. A module file changed since the
zygote loaded it (an upgrade, an edited checkout) makes it refuse the command and stop; so
does idleness (LAKEHOUSE_WARM_DBT_IDLE_SECONDS, 15 minutes by default).
"""

from __future__ import annotations

import fcntl
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from typing import Any

from dbt.adapters.lakehouse.engine.warm.server import peer_uid
from dbt.adapters.lakehouse.warm_dbt import serializers
from dbt.adapters.lakehouse.warm_dbt.client import DEFAULT_IDLE_SECONDS, idle_seconds

# Imported now because a command would import them: dbt's tasks and its runners' pool.
_PRELOADED = (
    "dbt.cli.main",
    "dbt.adapters.lakehouse",
    "dbt.adapters.lakehouse.impl",
    "dbt.task.build",
    "dbt.task.run",
    "dbt.task.test",
    "dbt.task.seed",
    "dbt.task.snapshot",
    "dbt.task.show",
    "dbt.task.compile",
    "dbt.task.list",
    "dbt.task.docs.generate",
    "multiprocessing.pool",
    "multiprocessing.dummy",
)
_REQUEST_TIMEOUT = 10.0


def log(message: str) -> None:
    os.write(2, f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n".encode())


def module_stamps() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every module file loaded."""
    stamps = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path or path in stamps:
            continue
        try:
            status = os.stat(path)
        except OSError:
            continue
        stamps[path] = (status.st_mtime_ns, status.st_size)
    return stamps


def changed_file(stamps: dict[str, tuple[int, int]]) -> str | None:
    for path, stamp in stamps.items():
        try:
            status = os.stat(path)
        except OSError:
            return path
        if (status.st_mtime_ns, status.st_size) != stamp:
            return path
    return None


def subcommand(argv: list[str]) -> str:
    return next((word for word in argv[1:] if not word.startswith("-")), "")


class Zygote:
    def __init__(self, path: str, idle_seconds: float) -> None:
        self.path = path
        self.idle_seconds = idle_seconds
        self.pid = os.getpid()
        self.stamps: dict[str, tuple[int, int]] = {}
        self.children: dict[int, socket.socket] = {}  # pid -> its client's connection
        self.served = 0
        self.started = time.time()
        self.cwd = os.getcwd()  # where it started: a folder a benchmark may remove and make again
        self.last_active = time.monotonic()
        self.selector = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self.bound_inode = 0
        self.woken_r, self.woken_w = os.pipe()

    def listen(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(previous)
        self.bound_inode = os.stat(self.path).st_ino
        listener.listen(16)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ, "listener")
        os.set_blocking(self.woken_w, False)
        os.set_blocking(self.woken_r, False)
        signal.set_wakeup_fd(self.woken_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector.register(self.woken_r, selectors.EVENT_READ, "woken")

    def serve(self) -> tuple[dict, list[int]] | None:
        """Until stopped and its commands ended; in a forked child, the command it is to run."""
        while True:
            if not self.children and (
                self.listener is None or time.monotonic() - self.last_active > self.idle_seconds
            ):
                if self.listener is not None:
                    log(f"idle for {self.idle_seconds:.0f} s: stopping")
                return None
            for key, _ in self.selector.select(timeout=5.0):
                if key.data == "listener":
                    outcome = self._accept()
                    if outcome == "stop":
                        self._stop_listening()
                    elif isinstance(outcome, tuple):
                        return outcome
                elif key.data == "woken":
                    self._drain_wakeups()
                else:
                    self._client_gone(key.fileobj, key.data)
            self._reap()

    def _stop_listening(self) -> None:
        """No new command; those running are reaped and their clients answered first."""
        assert self.listener is not None
        self.selector.unregister(self.listener)
        self.close()
        self.listener.close()
        self.listener = None

    def _accept(self) -> Any:
        assert self.listener is not None
        conn, _ = self.listener.accept()
        conn.settimeout(_REQUEST_TIMEOUT)
        fds: list[int] = []
        try:
            uid = peer_uid(conn)
            if uid is not None and uid != os.getuid():
                log(f"refused a connection of uid {uid}")
                conn.close()
                return None
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            while not data.endswith(b"\n"):
                more = conn.recv(1 << 16)
                if not more:
                    raise OSError("the request ended early")
                data += more
            request = json.loads(data)
        except (OSError, ValueError) as exc:
            log(f"unreadable request: {exc}")
            conn.close()
            for fd in fds:
                os.close(fd)
            return None
        kind = request.get("kind")
        if kind == "stop":
            self._reply(conn, {"stopping": True})
            conn.close()
            log("asked to stop")
            return "stop"
        if kind == "status":
            self._reply(conn, self.status())
            conn.close()
            return None
        changed = changed_file(self.stamps)
        if changed is not None or len(fds) != 3:
            why = f"{changed} changed since it was loaded" if changed else "no standard streams"
            self._reply(conn, {"stale": why})
            conn.close()
            for fd in fds:
                os.close(fd)
            log(f"{why}: stopping")
            return "stop"
        return self._fork(conn, request, fds)

    def _fork(self, conn: socket.socket, request: dict, fds: list[int]) -> Any:
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:
            conn.close()
            return request, fds
        for fd in fds:
            os.close(fd)
        self.children[child] = conn
        self.served += 1
        self.last_active = time.monotonic()
        self._reply(conn, {"pid": child})
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, child)
        try:
            os.utime(self.path)  # the least recently used zygote is stopped first
        except OSError:
            pass
        # The subcommand only: arguments may hold secrets (--vars).
        log(f"serving dbt {subcommand(request.get('argv', []))} as {child}")
        return None

    def _reply(self, conn: socket.socket, message: dict) -> None:
        try:
            conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass

    def _drain_wakeups(self) -> None:
        try:
            while os.read(self.woken_r, 512):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            try:
                self.selector.unregister(conn)
            except KeyError:  # its client went away (_client_gone)
                pass
            conn.setblocking(True)
            self._reply(conn, {"status": status})
            conn.close()
            self.last_active = time.monotonic()
            log(f"{pid} ended: {os.waitstatus_to_exitcode(status)}")

    def _client_gone(self, conn: Any, child: int) -> None:
        """The client closed its end before its command ended: it was killed, so is the command
        (as Ctrl-C would)."""
        try:
            if conn.recv(1):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        self.selector.unregister(conn)
        if child in self.children:
            log(f"the client of {child} went away: interrupting it")
            try:
                os.kill(child, signal.SIGINT)
            except ProcessLookupError:
                pass

    def status(self) -> dict:
        return {
            "pid": self.pid,
            "cwd": self.cwd,
            "started": self.started,
            "served": self.served,
            "running": len(self.children),
        }

    def close(self) -> None:
        """Its socket removed if still its own (by the zygote, never a child)."""
        if os.getpid() != self.pid or self.listener is None:
            return
        try:
            if os.stat(self.path).st_ino == self.bound_inode:
                os.unlink(self.path)
        except OSError:
            pass


def _run_command(zygote: Zygote, request: dict, fds: list[int]) -> None:
    """In the forked child: become the command's process and run dbt as its console script."""
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    zygote.selector.close()
    if zygote.listener is not None:
        zygote.listener.close()
    for conn in zygote.children.values():
        conn.close()
    os.close(zygote.woken_r)
    os.close(zygote.woken_w)
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    os.umask(int(request["umask"]))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    # Made for the zygote's log file; a terminal's streams are line-buffered.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(line_buffering=stream is sys.stderr or stream.isatty())
    from dbt.cli.main import cli

    sys.exit(cli())


def main(argv: list[str]) -> None:
    path = argv[1]
    lock = os.open(path[:-5] + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os._exit(0)  # another zygote of this key is starting or serving
    try:
        idle = idle_seconds(os.environ)
    except ValueError as exc:  # the commands' set-up refuses it, naming the fix
        log(f"{exc} Using {DEFAULT_IDLE_SECONDS:.0f}.")
        idle = DEFAULT_IDLE_SECONDS
    zygote = Zygote(path, idle)
    began = time.monotonic()
    for name in _PRELOADED:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a dbt without that task: the child imports what it needs
            log(f"not preloaded: {name} ({exc})")
    classes = serializers.compile_all()
    if threading.active_count() > 1:  # a fork copies only the thread that forks
        log(f"an import started a thread ({threading.enumerate()}): serving no command")
        os._exit(1)
    gc.collect()
    gc.freeze()
    zygote.stamps = module_stamps()
    zygote.listen()
    took = time.monotonic() - began
    log(
        f"ready in {took:.1f} s: {len(zygote.stamps)} module files, the (de)serializers of "
        f"{classes} classes compiled, pid {zygote.pid}"
    )
    try:
        command = zygote.serve()
    finally:
        if zygote.listener is not None:
            zygote.close()
    if command is None:
        os._exit(0)  # the zygote ran no command: the exit handlers its imports set are not its
    os.close(lock)
    _run_command(zygote, *command)


if __name__ == "__main__":
    main(sys.argv)
