"""The embedded lakehouse's catalog holder: one owner of a warehouse's H2 catalog at a time.

The embedded catalog is an H2 database file opened with AUTO_SERVER: the first process to open
it owns it and serves it on loopback TCP, and the others find that server in H2's lock file and
connect to it. With dbt processes as the owners this breaks in two ways. Processes that open the
file before any server is recorded all run H2's lock-file protocol at once; each one rewrites
the lock file, and the others give up ("Lock file recently modified"). And when the owner exits,
H2 closes the database under every process connected to it ("Connection is broken").

So no dbt process owns it. This module starts a holder for the warehouse: H2's own Shell,
connected to the file and kept open on a pipe, watched by this module run as a script (standard
library only, so it does not load dbt). The holder owns the database while any dbt process uses
the warehouse; dbt processes find its server in the lock file and never write the lock file. It
stops a moment after the last of them is gone.

Processes coordinate with flock(2) on files in `<warehouse>/_catalog/holder/`; the kernel
releases a process's locks when it dies, however it dies:
- `mutex.lock`: exclusive while a dbt process starts the holder or opens the catalog for the
  first time (so two processes never create or migrate the catalog's tables at once), and while
  the holder decides whether to stop;
- `users.lock`: shared by every dbt process using the warehouse, for as long as it runs;
- `holder.lock`: exclusive by the live holder;
- `state.json`: the holder's pid and state (starting, ready, failed with H2's reason);
  `holder.log`: its output.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

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
_FIRST_DELAY = 0.25
_MAX_DELAY = 2.0
_SHELL_PROMPT = b"sql> "
_H2_MESSAGE = re.compile(
    r"(?:JdbcSQL\w*Exception|DbException|MVStoreException): (?P<msg>.+?)(?: \[[\d/.-]+\])?\s*$",
    re.MULTILINE,
)


class CatalogUnavailable(Exception):
    """The embedded catalog could not be reached; str() is one line: what, why, and the fix."""


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


# --- what a user is told --------------------------------------------------------------------


def contention_reason(text: str) -> str | None:
    """The H2 marker in `text` that says another process has the catalog, else None."""
    return next((marker for marker in CONTENTION_MARKERS if marker in text), None)


def busy_message(catalog: EmbeddedCatalog, waited: float, reason: str) -> str:
    return (
        f"The embedded lakehouse catalog {catalog.database_file} stayed locked by another "
        f"process for {waited:.0f}s (H2: {reason}). Fix: let the program holding it finish (an "
        "H2 console or tool, or a dbt-lakehouse older than this one) and rerun, or set "
        "LAKEHOUSE_CATALOG_WAIT to wait longer; if no program uses this warehouse, delete "
        f"{catalog.lock_file} and rerun."
    )


def failed_message(catalog: EmbeddedCatalog, reason: str) -> str:
    return (
        f"The embedded lakehouse catalog {catalog.database_file} could not be opened (H2: "
        f"{reason[:300]}). Fix: check that {catalog.database.parent} is writable and that the "
        f"file is an H2 2.x database this adapter created; the holder's output is in "
        f"{catalog.folder / LOG_FILE}."
    )


def mutex_message(catalog: EmbeddedCatalog, waited: float) -> str:
    return (
        f"The embedded lakehouse catalog {catalog.database_file} was not free within "
        f"{waited:.0f}s: another process kept {catalog.folder / MUTEX_FILE} locked. Fix: let the "
        "other dbt runs on this warehouse finish opening it (or stop a hung one) and rerun, or "
        "set LAKEHOUSE_CATALOG_WAIT to wait longer."
    )


def retry_while_contended(
    attempt: Callable[[], T],
    *,
    describe: Callable[[BaseException], str],
    catalog: EmbeddedCatalog,
    wait: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    started: float | None = None,
) -> T:
    """`attempt()`, again with backoff while H2 says another process has the file.

    Gives up with CatalogUnavailable once `wait` seconds (counted from `started`) would pass;
    errors that are not contention propagate at once.
    """
    start = clock() if started is None else started
    delay = _FIRST_DELAY
    while True:
        try:
            return attempt()
        except Exception as exc:
            reason = contention_reason(describe(exc))
            if reason is None:
                raise
            waited = clock() - start
            if waited + delay > wait:
                raise CatalogUnavailable(busy_message(catalog, waited, reason)) from None
            sleep(delay)
            delay = min(delay * 2, _MAX_DELAY)


# --- locks and the holder's state -----------------------------------------------------------


def _lock_fd(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _try_lock(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def holder_alive(folder: Path) -> bool:
    """True while a holder process has `holder.lock`."""
    fd = _lock_fd(folder / HOLDER_FILE)
    try:
        return not _try_lock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)  # also drops the probe's own shared lock


def read_state(folder: Path) -> dict[str, Any]:
    try:
        state = json.loads((folder / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _write_state(folder: Path, state: str, reason: str | None = None) -> None:
    # Written whole and renamed, so a reader never sees half a file.
    record = {"pid": os.getpid(), "state": state, "reason": reason}
    partial = folder / f".{STATE_FILE}.{os.getpid()}"
    partial.write_text(json.dumps(record))
    partial.replace(folder / STATE_FILE)


# --- the dbt process's side -----------------------------------------------------------------


class CatalogLease:
    """This process's use of one warehouse's embedded catalog; the holder runs while it is held.

    `join()` before Spark starts (the holder starts alongside), `open()` for the process's first
    catalog open, `release()` when the session stops; the kernel releases it at exit anyway.
    `python` runs the holder's supervisor (this file as a script).
    """

    def __init__(
        self,
        catalog: EmbeddedCatalog,
        java: str,
        wait: float = DEFAULT_WAIT_SECONDS,
        python: str = sys.executable,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.catalog = catalog
        self.java = java
        self.wait = wait
        self.python = python
        self._clock = clock
        self._sleep = sleep
        self._users: int | None = None
        self._spawned: subprocess.Popen[bytes] | None = None

    @property
    def folder(self) -> Path:
        return self.catalog.folder

    def join(self) -> None:
        """Count this process as a user of the warehouse; start the holder unless one runs."""
        self.folder.mkdir(parents=True, exist_ok=True)
        started = self._clock()
        with self._mutex(started):
            if self._users is None:
                fd = _lock_fd(self.folder / USERS_FILE)
                # Immediate: the holder takes users.lock exclusively only while it has the mutex.
                fcntl.flock(fd, fcntl.LOCK_SH)
                self._users = fd
            if not holder_alive(self.folder):
                self._spawn(started)

    def open(self, attempt: Callable[[], T], describe: Callable[[BaseException], str]) -> T:
        """Run this process's first open of the catalog, once the holder is ready.

        One process at a time, retrying while H2 reports contention; bounded by `wait` seconds.
        """
        if self._users is None:
            self.join()
        started = self._clock()
        with self._mutex(started):
            self._wait_until_ready(started)
            return retry_while_contended(
                attempt,
                describe=describe,
                catalog=self.catalog,
                wait=self.wait,
                clock=self._clock,
                sleep=self._sleep,
                started=started,
            )

    def release(self) -> None:
        if self._users is not None:
            os.close(self._users)
            self._users = None

    @contextmanager
    def _mutex(self, started: float) -> Iterator[None]:
        fd = _lock_fd(self.folder / MUTEX_FILE)
        try:
            while not _try_lock(fd, fcntl.LOCK_EX):
                waited = self._clock() - started
                if waited >= self.wait:
                    raise CatalogUnavailable(mutex_message(self.catalog, waited))
                self._sleep(0.05)
            yield
        finally:
            os.close(fd)

    def _spawn(self, started: float) -> None:
        remaining = max(self.wait - (self._clock() - started), 1.0)
        (self.folder / STATE_FILE).unlink(missing_ok=True)
        command = [
            self.python,
            "-I",  # the standard library only: no user site, no PYTHON* variables
            str(Path(__file__).resolve()),
            "hold",
            "--java",
            self.java,
            "--jar",
            self.catalog.h2_jar,
            "--url",
            self.catalog.url,
            "--wait",
            f"{remaining:.1f}",
        ]
        with (self.folder / LOG_FILE).open("wb") as log:
            # Its own session: a Ctrl-C meant for this dbt run must not stop the others' holder.
            self._spawned = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                start_new_session=True,
            )
        # Until it has holder.lock (its state names it) a second look would start another.
        while self._spawned.poll() is None:
            if read_state(self.folder).get("pid") == self._spawned.pid:
                return
            if self._clock() - started >= self.wait:
                return
            self._sleep(0.02)
        if (
            self._spawned.returncode != 0
            and read_state(self.folder).get("pid") != self._spawned.pid
        ):
            # It died before writing a word: starting it again would fail the same way.
            raise CatalogUnavailable(
                failed_message(self.catalog, _last_line(self.folder / LOG_FILE))
            )

    def _wait_until_ready(self, started: float) -> None:
        reason: str | None = None
        while True:
            alive = holder_alive(self.folder)
            state = read_state(self.folder)
            if alive and state.get("state") == "ready":
                return
            reason = state.get("reason") or reason
            waited = self._clock() - started
            if not alive and state.get("state") == "failed" and reason:
                if contention_reason(reason) is None:
                    raise CatalogUnavailable(failed_message(self.catalog, reason))
            if waited >= self.wait:
                shown = contention_reason(reason or "") or "its holder did not get ready"
                raise CatalogUnavailable(busy_message(self.catalog, waited, shown))
            if not alive:
                self._spawn(started)
            else:
                self._sleep(0.05)


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    except OSError:
        lines = []
    return next((line for line in reversed(lines) if line), "its holder exited without output")


# --- the holder (this file run as a script) -------------------------------------------------


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
    mutex = _lock_fd(folder / MUTEX_FILE)
    if not _try_lock(mutex, fcntl.LOCK_EX):
        os.close(mutex)
        return None
    users = _lock_fd(folder / USERS_FILE)
    if not _try_lock(users, fcntl.LOCK_EX):
        os.close(users)
        os.close(mutex)
        return None
    return users, mutex


def hold(folder: Path, command: list[str], wait: float) -> int:
    """Own the catalog while dbt processes use it; 0 on a clean stop, 1 when it failed."""
    holder = _lock_fd(folder / HOLDER_FILE)
    if not _try_lock(holder, fcntl.LOCK_EX):
        return 0  # another holder runs
    _write_state(folder, "starting")
    deadline = time.monotonic() + wait
    delay = _FIRST_DELAY
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
        delay = min(delay * 2, _MAX_DELAY)
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
        prog="engine/embedded_catalog.py", description="The embedded lakehouse's catalog holder."
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
