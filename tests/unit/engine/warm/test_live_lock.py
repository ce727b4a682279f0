"""A starting supervisor takes its folder's live lock even while a probe holds it shared for an
instant (`engine status`, a command asking whether an attach would be quick), and leaves the
engine to a supervisor that holds it."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from dbt.adapters.lakehouse.engine.warm import server
from dbt.adapters.lakehouse.engine.warm.folder import supervisor_alive


def _held_shared(folder: Path, seconds: float) -> threading.Thread:
    probe = os.open(folder / server.LIVE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)

    def release() -> None:
        time.sleep(seconds)
        os.close(probe)

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_a_probe_holding_the_lock_shared_only_delays_the_start(tmp_path: Path) -> None:
    releasing = _held_shared(tmp_path, 0.3)
    began = time.monotonic()
    live = server.take_live_lock(tmp_path)
    releasing.join()
    try:
        assert live is not None and time.monotonic() - began >= 0.25
        assert supervisor_alive(tmp_path)
    finally:
        os.close(live)  # type: ignore[arg-type]
    assert not supervisor_alive(tmp_path)


def test_a_lock_another_supervisor_holds_leaves_the_engine_to_it(tmp_path: Path) -> None:
    other = server.take_live_lock(tmp_path)
    assert other is not None
    try:
        began = time.monotonic()
        assert server.take_live_lock(tmp_path, patience=0.2) is None
        assert time.monotonic() - began < 2.0
        assert supervisor_alive(tmp_path)
    finally:
        os.close(other)
