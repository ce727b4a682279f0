"""`dbt-lakehouse engine stop` stops the engines of the current LAKEHOUSE_ENGINE_HOME, names the
homes of the others it left running, and with `--all` finds every engine of the user by its
supervisor's command line. The supervisors here are stand-ins without a JVM: they hold the live
lock and answer `stop` on the control socket, as engine/warm/server.py does."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.cli import engine as engine_cli
from dbt.adapters.lakehouse.engine.warm import server
from dbt.adapters.lakehouse.engine.warm.folder import running_engine_folders, supervisor_alive

STAND_IN = f"""
import fcntl, os, socket, sys
folder = sys.argv[1]
live = os.open(os.path.join(folder, {server.LIVE_LOCK!r}), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(live, fcntl.LOCK_EX)
control = socket.socket(socket.AF_UNIX)
control.bind(os.path.join(folder, {server.CONTROL_SOCKET!r}))
control.listen(1)
print("ready", flush=True)
peer, _ = control.accept()
peer.makefile().readline()
peer.sendall(b"{{}}\\n")
"""


@pytest.fixture
def homes() -> Iterator[tuple[Path, Path]]:
    # Short paths: a Unix socket's is limited to about 100 bytes.
    made = (Path(tempfile.mkdtemp(prefix="lh-stop-")), Path(tempfile.mkdtemp(prefix="lh-stop-")))
    yield made
    for home in made:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def supervisor(homes: tuple[Path, Path]) -> Iterator[Callable[[Path, str], Path]]:
    """Starts a stand-in supervisor in `<home>/<name>`, run the way client.py runs the real one."""
    script = homes[0] / "engine" / "warm" / "server.py"
    script.parent.mkdir(parents=True)
    script.write_text(STAND_IN)
    started: list[subprocess.Popen[str]] = []

    def start(home: Path, name: str) -> Path:
        folder = home / name
        folder.mkdir(mode=0o700)
        process = subprocess.Popen(
            [sys.executable, str(script), str(folder)], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        started.append(process)
        return folder

    yield start
    for process in started:
        process.kill()
        process.wait()


def stopped_when(folder: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while supervisor_alive(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not supervisor_alive(folder)


def test_stop_is_per_home_and_all_reaches_every_home(
    homes: tuple[Path, Path],
    supervisor: Callable[[Path, str], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    here, there = homes
    mine, other = supervisor(here, "e1"), supervisor(there, "e2")
    assert {mine, other} <= set(running_engine_folders())

    monkeypatch.setenv("LAKEHOUSE_ENGINE_HOME", str(here))
    assert engine_cli._stop(argparse.Namespace(all=False)) == 0
    first, *rest = capsys.readouterr().out.splitlines()
    assert first == f"stopped 1 engine(s) in {here}: e1"
    assert any(str(there) in line and "`--all`" in line for line in rest), rest
    assert stopped_when(mine) and supervisor_alive(other)

    # --all stops what it finds under any home; this test lets it stop its own stand-ins only,
    # not the engines of whatever else this user runs.
    real_stop = engine_cli.stop_engine
    monkeypatch.setattr(engine_cli, "stop_engine", lambda f: f == other and real_stop(f))
    assert engine_cli._stop(argparse.Namespace(all=True)) == 0
    assert capsys.readouterr().out == f"stopped 1 engine(s): {other}\n"
    assert stopped_when(other)


def test_the_supervisor_waits_for_the_threads_later_py_names():
    """server.py, run as a script that cannot import engine/later.py (it loads dbt), names the
    threads it waits for before stopping the JVM as later.py names them."""
    from dbt.adapters.lakehouse.engine import later

    assert server.LATER_THREAD == later.NAME
