"""The dbt process's side of the embedded catalog: its lease on the warehouse's holder.

Owns joining the warehouse's users (and starting the holder script when none runs), the first
open of the catalog one process at a time under `mutex.lock`, the bounded wait on H2's
contention, and the one-line messages a user is shown when the catalog cannot be reached.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from dbt.adapters.lakehouse.engine.embedded_catalog import holder
from dbt.adapters.lakehouse.engine.embedded_catalog.holder import (
    DEFAULT_WAIT_SECONDS,
    FIRST_DELAY,
    HOLDER_FILE,
    LOG_FILE,
    MAX_DELAY,
    MUTEX_FILE,
    STATE_FILE,
    USERS_FILE,
    EmbeddedCatalog,
    contention_reason,
    lock_fd,
    try_lock,
)

T = TypeVar("T")


class CatalogUnavailable(Exception):
    """The embedded catalog could not be reached; str() is one line: what, why, and the fix."""


# --- what a user is told --------------------------------------------------------------------


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
    delay = FIRST_DELAY
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
            delay = min(delay * 2, MAX_DELAY)


# --- the holder's state, read --------------------------------------------------------------


def holder_alive(folder: Path) -> bool:
    """True while a holder process has `holder.lock`."""
    fd = lock_fd(folder / HOLDER_FILE)
    try:
        return not try_lock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)  # also drops the probe's own shared lock


def read_state(folder: Path) -> dict[str, Any]:
    try:
        state = json.loads((folder / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


# --- the dbt process's side -----------------------------------------------------------------


class CatalogLease:
    """This process's use of one warehouse's embedded catalog; the holder runs while it is held.

    `join()` before Spark starts (the holder starts alongside), `open()` for the process's first
    catalog open, `release()` when the session stops; the kernel releases it at exit anyway.
    `python` runs the holder's supervisor (holder.py as a script).
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
                fd = lock_fd(self.folder / USERS_FILE)
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
        fd = lock_fd(self.folder / MUTEX_FILE)
        try:
            while not try_lock(fd, fcntl.LOCK_EX):
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
            str(Path(holder.__file__).resolve()),
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
