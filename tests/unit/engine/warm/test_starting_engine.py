"""A command that finds an engine starting whose starter is gone (a command that ended, or was
killed, while its engine started, which lets go of the start lock) waits for it instead of
taking it for wedged, stopping it (a 30 s wait) and starting another; one that dies before it is
ready leaves the start to this command. The supervisors are stand-ins without a JVM, as in
test_stop.py: they hold the live lock, then write their state and answer on the control
socket as engine/warm/server.py does."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.warm import client, server

STAND_IN = f"""
import fcntl, json, os, socket, sys, time
folder = sys.argv[1]
live = os.open(os.path.join(folder, {server.LIVE_LOCK!r}), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(live, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))  # starting: no state, no socket
if sys.argv[3] == "dies":
    sys.exit(1)
control = socket.socket(socket.AF_UNIX)
control.bind(os.path.join(folder, {server.CONTROL_SOCKET!r}))
control.listen(1)
state = os.path.join(folder, {server.STATE_FILE!r})
fd = os.open(state + ".part", os.O_WRONLY | os.O_CREAT, 0o600)
os.write(fd, json.dumps({{"state": "ready", "pid": os.getpid()}}).encode())
os.close(fd)
os.replace(state + ".part", state)
peer, _ = control.accept()
peer.makefile().readline()
peer.sendall(b'{{"ok": true}}\\n')
time.sleep(60)
"""
HELLO = {"op": "attach", "pid": 1, "tag": "t", "keep_warm_minutes": 1, "warm_up_seconds": 0}


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="lh-start-"))  # short: a socket path's limit
    yield made
    shutil.rmtree(made, ignore_errors=True)


def _stand_in(folder: Path, starting_seconds: float, ending: str) -> subprocess.Popen[str]:
    script = folder / "stand_in.py"
    script.write_text(STAND_IN)
    process = subprocess.Popen(
        [sys.executable, str(script), str(folder), str(starting_seconds), ending],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "locked\n"
    return process


def test_an_engine_starting_without_its_starter_is_waited_for(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starting = _stand_in(folder, 1.0, "ready")
    try:
        monkeypatch.setattr(client, "_start", lambda *args: pytest.fail("started another"))
        monkeypatch.setattr(client, "stop_engine", lambda *args: pytest.fail("stopped it"))
        began = time.monotonic()
        control, state = client._attach_control(folder, None, "java", HELLO, ())  # type: ignore[arg-type]
        control.close()
        assert state["state"] == "ready" and state["pid"] == starting.pid
        assert 0.8 <= time.monotonic() - began < 10
        assert starting.poll() is None
    finally:
        starting.kill()
        starting.wait()


def test_one_that_dies_before_it_is_ready_leaves_the_start_to_this_command(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dying = _stand_in(folder, 0.5, "dies")
    started: list[Path] = []

    class Started(Exception):
        pass

    def start(where: Path, *args: object) -> None:
        started.append(where)
        raise Started

    monkeypatch.setattr(client, "_start", start)
    try:
        with pytest.raises(Started):
            client._attach_control(folder, None, "java", HELLO, ())  # type: ignore[arg-type]
        assert started == [folder] and dying.wait(timeout=10) == 1
    finally:
        dying.kill()
        dying.wait()
