"""The test servers' child processes (servers.py and the other modules of this folder): a free
port on 127.0.0.1, a process started to die with the test process and logging to a file, the
tail of that log for an error, the addresses a process listens on, and stopping it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

STARTUP_TIMEOUT_S = 90.0


class ServerError(RuntimeError):
    """A test server did not start; the message carries the tail of its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def dying_with_parent(command: Sequence[str], sig: int = signal.SIGTERM) -> list[str]:
    """`command`, started so that on Linux the kernel sends it `sig` when the test process that
    started it dies: a test run killed before its fixtures' teardown leaves no server.

    Through util-linux's `setpriv`, not a `preexec_fn` calling prctl: a `preexec_fn` makes Python
    fork() instead of vfork(), and a fork() while the Spark Connect client's gRPC threads run can
    kill the child before it execs (grpc/grpc#43055; seen as "Epoll1Poller ... epoll_wait error:
    Bad file descriptor" in the server's log). setpriv sets the signal after any change of user
    made by Popen, which would clear it.
    """
    setpriv = shutil.which("setpriv")
    if setpriv is None or not sys.platform.startswith("linux"):
        return list(command)
    return [setpriv, f"--pdeathsig={signal.Signals(sig).name}", "--", *command]


def spawn_logged(
    command: list[str],
    log_path: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """A server process writing stdout and stderr to `log_path`, ended with this process."""
    with log_path.open("wb") as log:
        return subprocess.Popen(
            dying_with_parent(command),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=None if env is None else dict(env),
        )


def listening_addresses(pid: int) -> set[str]:
    """The addresses a process listens on (`/proc`, Linux): its socket inodes matched against
    the LISTEN rows of /proc/net/tcp (dotted IPv4) and tcp6 (shown as `tcp6:<hex>`)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed since it was listed
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    addresses = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1].split(":")[0], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A: LISTEN
                continue
            if table == "tcp":  # little-endian
                addresses.add(".".join(str(b) for b in reversed(bytes.fromhex(local))))
            else:
                addresses.add(f"tcp6:{local}")
    return addresses


def _stop_process(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
