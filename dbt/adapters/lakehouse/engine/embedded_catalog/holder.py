"""The embedded catalog's holder: the process that owns a warehouse's H2 catalog file.

Run by path as a script (`python -I holder.py hold ...`, which CatalogLease spawns) with the
standard library only, so it neither loads dbt nor imports anything beside it: whatever it runs
is in this file. It keeps H2's Shell connected to the database on a pipe while any dbt process
holds `users.lock`, and stops a moment after the last of them is gone. The lock files, the
state it writes and H2's contention words are defined here once; the dbt process's side
(lease.py) imports them from here.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WAIT_SECONDS = 120.0
# With no dbt process left, the holder waits this long before stopping, so back-to-back runs
# (an orchestrator's next task) reuse it instead of starting another JVM.
IDLE_GRACE_SECONDS = 2.0

HOLDER_DIR = "holder"
MUTEX_FILE = "mutex.lock"
USERS_FILE = "users.lock"
HOLDER_FILE = "holder.lock"
STATE_FILE = "state.json"
LOG_FILE = "holder.log"

# H2's words for "another process has the file, or is opening it right now". Waiting passes
# them: the other process finishes opening (its server then shows in the lock file) or exits.
# Anything else (a wrong password, a damaged or foreign file) does not pass with waiting.
CONTENTION_MARKERS = (
    "Lock file recently modified",
    "Database may be already in use",
    "Locked by another process",
    "Another process was faster",
    "Concurrent update",
    "The file is locked",
    "Connection is broken",
)

_POLL_SECONDS = 0.5
FIRST_DELAY = 0.25
MAX_DELAY = 2.0
_SHELL_PROMPT = b"sql> "
_H2_MESSAGE = re.compile(
    r"(?:JdbcSQL\w*Exception|DbException|MVStoreException): (?P<msg>.+?)(?: \[[\d/.-]+\])?\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class EmbeddedCatalog:
    """One warehouse's embedded catalog as a session opens it.

    `name` is the Spark catalog name, `url` the H2 JDBC URL (depot.embedded_catalog_uri), and
    `h2_jar` the H2 driver the holder runs.
    """

    name: str
    url: str
    h2_jar: str

    @property
    def database(self) -> Path:
        """The database path as H2 names it: without the `.mv.db` suffix."""
        return Path(self.url.removeprefix("jdbc:h2:file:").split(";", 1)[0])

    @property
    def database_file(self) -> Path:
        return self.database.with_name(self.database.name + ".mv.db")

    @property
    def lock_file(self) -> Path:
        return self.database.with_name(self.database.name + ".lock.db")

    @property
    def folder(self) -> Path:
        return self.database.parent / HOLDER_DIR


def contention_reason(text: str) -> str | None:
    """The H2 marker in `text` that says another process has the catalog, else None."""
    return next((marker for marker in CONTENTION_MARKERS if marker in text), None)


# --- locks and the holder's state -----------------------------------------------------------


def lock_fd(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def try_lock(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_state(folder: Path, state: str, reason: str | None = None) -> None:
    # Written whole and renamed, so a reader never sees half a file.
    record = {"pid": os.getpid(), "state": state, "reason": reason}
    partial = folder / f".{STATE_FILE}.{os.getpid()}"
    partial.write_text(json.dumps(record))
    partial.replace(folder / STATE_FILE)


# --- the holder: this file run as a script --------------------------------------------------


def shell_command(java: str, jar: str, url: str) -> list[str]:
    return [
        java,
        # The AUTO_SERVER port listens on loopback only.
        "-Dh2.bindAddress=127.0.0.1",
        "-Xmx64m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        jar,
        "org.h2.tools.Shell",
        "-url",
        url,
        "-user",
        "",
        "-password",
        "",
    ]


def h2_reason(output: str) -> str:
    """H2's own message in a failed Shell's output, else its last line."""
    match = _H2_MESSAGE.search(output)
    if match:
        return match.group("msg").strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "the H2 process exited without a message"


SHELL_START_S = 30.0


def _start_shell(command: list[str], deadline: float) -> tuple[subprocess.Popen[bytes] | None, str]:
    """The Shell once it prompts (it has the database open), or None and what it printed."""
    shell = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert shell.stdout is not None
    fd = shell.stdout.fileno()
    output = b""
    while time.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], 0.2)
        if not readable:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        output += chunk
        if _SHELL_PROMPT in output:
            return shell, output.decode(errors="replace")
    if shell.poll() is None:
        shell.kill()
        output += b"\n(no prompt before the deadline: stopped)"
    shell.wait()
    output += shell.stdout.read()
    return None, output.decode(errors="replace")


def _stop_shell(shell: subprocess.Popen[bytes]) -> None:
    # End of input makes the Shell close its connection, so H2 closes the database cleanly.
    assert shell.stdin is not None
    shell.stdin.close()
    try:
        shell.wait(timeout=30)
    except subprocess.TimeoutExpired:
        shell.terminate()
        shell.wait(timeout=10)


def _idle_locks(folder: Path) -> tuple[int, int] | None:
    """The mutex and users.lock, both exclusive, when no dbt process uses the warehouse."""
    mutex = lock_fd(folder / MUTEX_FILE)
    if not try_lock(mutex, fcntl.LOCK_EX):
        os.close(mutex)
        return None
    users = lock_fd(folder / USERS_FILE)
    if not try_lock(users, fcntl.LOCK_EX):
        os.close(users)
        os.close(mutex)
        return None
    return users, mutex


def hold(folder: Path, command: list[str], wait: float) -> int:
    """Own the catalog while dbt processes use it; 0 on a clean stop, 1 when it failed."""
    holder = lock_fd(folder / HOLDER_FILE)
    if not try_lock(holder, fcntl.LOCK_EX):
        return 0  # another holder runs
    _write_state(folder, "starting")
    deadline = time.monotonic() + wait
    delay = FIRST_DELAY
    while True:
        # The wait bounds waiting for another owner, not this JVM's own start-up, which takes
        # seconds on a loaded machine: a shell always gets time to report the lock or prompt.
        shell, output = _start_shell(command, max(deadline, time.monotonic() + SHELL_START_S))
        print(output, flush=True)
        if shell is not None:
            break
        reason = h2_reason(output)
        if contention_reason(reason) is None or time.monotonic() + delay >= deadline:
            _write_state(folder, "failed", reason)
            return 1
        _write_state(folder, "starting", reason)
        time.sleep(delay)
        delay = min(delay * 2, MAX_DELAY)
    _write_state(folder, "ready")
    idle_since: float | None = None
    while True:
        time.sleep(_POLL_SECONDS)
        if shell.poll() is not None:
            _write_state(folder, "failed", f"the H2 holder exited with code {shell.returncode}")
            return 1
        locks = _idle_locks(folder)
        if locks is None:
            idle_since = None
            continue
        try:
            now = time.monotonic()
            idle_since = now if idle_since is None else idle_since
            if now - idle_since < IDLE_GRACE_SECONDS:
                continue
            _stop_shell(shell)
            (folder / STATE_FILE).unlink(missing_ok=True)
            # Before the mutex: whoever takes it next must see no holder.
            os.close(holder)
            print("no dbt process uses the warehouse: stopped", flush=True)
            return 0
        finally:
            for fd in locks:
                os.close(fd)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="engine/embedded_catalog/holder.py",
        description="The embedded lakehouse's catalog holder.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    holding = commands.add_parser("hold", help="own the catalog while dbt processes use it")
    holding.add_argument("--java", required=True)
    holding.add_argument("--jar", required=True)
    holding.add_argument("--url", required=True)
    holding.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS)
    args = parser.parse_args(argv)
    catalog = EmbeddedCatalog(name="", url=args.url, h2_jar=args.jar)
    return hold(catalog.folder, shell_command(args.java, args.jar, args.url), args.wait)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
