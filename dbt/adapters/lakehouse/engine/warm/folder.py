"""An engine's folder: its private files and locks, and requests to the supervisor serving it.

Shared by the dbt command attaching (client.py) and `dbt-lakehouse engine` (cli/engine.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.engine.warm import server
from dbt.adapters.lakehouse.engine.warm.identity import engines_home
from dbt.adapters.lakehouse.exceptions import EngineSetupError

START_LOCK = "start.lock"
SALT_FILE = "salt"


def private_dir(path: Path) -> Path:
    """`path` as a folder only this user can enter, refusing one another user owns."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise EngineSetupError(
            f"The warm engine's folder {path} belongs to another user (uid {info.st_uid}). "
            "Fix: set LAKEHOUSE_ENGINE_HOME to a folder of your own."
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        path.chmod(0o700)
    return path


def read_private_json(path: Path) -> dict[str, Any]:
    """A state file, only if this user owns it and nobody else may read it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd) as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
            return {}
        try:
            data = json.load(handle)
        except ValueError:
            return {}
    return data if isinstance(data, dict) else {}


def home_salt(home: Path) -> bytes:
    path = home / SALT_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        salt = secrets.token_bytes(32)
        handle.write(salt)
    return salt


def supervisor_alive(folder: Path) -> bool:
    fd = os.open(folder / server.LIVE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@contextmanager
def start_lock(folder: Path) -> Iterator[None]:
    fd = os.open(folder / START_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held by a starter for as long as a JVM takes to start
        yield
    finally:
        os.close(fd)


def request(folder: Path, message: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
    """One request on the control socket and its answer (`status`, `stop`)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
        control.settimeout(timeout)
        control.connect(str(folder / server.CONTROL_SOCKET))
        control.sendall((json.dumps(message) + "\n").encode())
        answer = control.makefile("r").readline()
    return json.loads(answer) if answer else {}


def engine_folders(home: Path | None = None) -> list[Path]:
    home = engines_home() if home is None else home
    if not home.is_dir():
        return []
    return sorted(p for p in home.iterdir() if p.is_dir())


def stop_engines(home: Path | None = None) -> list[str]:
    """Stop every engine under `home` (default: LAKEHOUSE_ENGINE_HOME's); the names of those
    that ran."""
    return [folder.name for folder in engine_folders(home) if stop_engine(folder)]


# How a supervisor runs: `<python> <...>/engine/warm/server.py <engine folder>` (client.py).
_SERVER_SCRIPT = str(Path("engine", "warm", Path(server.__file__).name))


def running_engine_folders() -> list[Path]:
    """The folder of every engine this user runs, under whichever LAKEHOUSE_ENGINE_HOME each was
    started (and by whichever install of the adapter): no file lists the homes in use, so the
    supervisors' command lines say."""
    folders = set()
    for args in _own_command_lines():
        for script, folder in zip(args, args[1:], strict=False):
            if script.endswith(_SERVER_SCRIPT) and Path(folder).is_absolute():
                path = Path(folder)
                if path.is_dir() and path.stat().st_uid == os.getuid() and supervisor_alive(path):
                    folders.add(path)
    return sorted(folders)


def _own_command_lines() -> Iterator[list[str]]:
    """The arguments of each process this user runs: from /proc, or `ps` without it (macOS,
    where an argument holding a space is split)."""
    proc = Path("/proc")
    if not (proc / "self" / "cmdline").exists():
        listed = subprocess.run(
            ["ps", "-ww", "-U", str(os.getuid()), "-o", "args="],
            capture_output=True,
            text=True,
            check=False,
        )
        yield from (line.split() for line in listed.stdout.splitlines())
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        yield [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]


def stop_engine(folder: Path, wait: float = 30.0) -> bool:
    """Ask the engine in `folder` to stop and wait until it has; True when one was running."""
    if not supervisor_alive(folder):
        return False
    try:
        request(folder, {"op": "stop"})
    except (OSError, ValueError):
        pass
    deadline = time.monotonic() + wait
    while supervisor_alive(folder) and time.monotonic() < deadline:
        time.sleep(0.1)
    if supervisor_alive(folder):
        state = read_private_json(folder / server.STATE_FILE)
        for pid in (state.get("jvm_pid"), state.get("pid")):
            if isinstance(pid, int):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    return True
