"""Helpers for the warm-engine tests: dbt and `dbt-lakehouse` as separate processes (each command
a fresh process, as a user runs them), on an engine home of the test's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent


def _own_engine_home() -> Iterator[Path]:
    """An engines' folder of the test's own, every engine in it stopped at the end. Short, since
    a Unix socket's path is limited to about 100 bytes (pytest's tmp_path can be longer)."""
    from dbt.adapters.lakehouse.engine.warm.folder import stop_engines

    home = Path(tempfile.mkdtemp(prefix="lh-engines-"))
    yield home
    stop_engines(home)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def engine_home() -> Iterator[Path]:
    yield from _own_engine_home()


@pytest.fixture
def other_engine_home() -> Iterator[Path]:
    """A second one, for engines under another LAKEHOUSE_ENGINE_HOME."""
    yield from _own_engine_home()


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LAKEHOUSE_ENGINE"}
    env.update(LAKEHOUSE_ENGINE_HOME=str(home), **extra)
    return env


def dbt(
    project: Path, home: Path, *args: str, timeout: int = 600, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "dbt"), *args, "--profiles-dir", str(project)],
        cwd=str(cwd or project),
        env=environment(home, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dbt_started(project: Path, home: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(BIN / "dbt"), *args, "--profiles-dir", str(project)],
        cwd=str(project),
        env=environment(home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


class Output:
    """A started command's output, read as it comes, so that a test can act at a given point of
    the command (a timed sleep cannot tell where a loaded machine has got to)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def wait_for(self, marker: str, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: any(marker in line for line in self.lines) or not self._reader.is_alive(),
                timeout,
            ) and any(marker in line for line in self.lines)

    def finish(self, timeout: float) -> str:
        self.process.wait(timeout)
        self._reader.join(timeout)
        return "".join(self.lines)


def engine_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "dbt-lakehouse"), "engine", *args],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def statuses(home: Path) -> list[dict[str, Any]]:
    done = engine_cli(home, "status", "--json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def write_project(folder: Path, models: dict[str, str], target: str) -> Path:
    """A project whose profile is `target` (YAML of the output) under the name `warm`."""
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "dbt_project.yml").write_text(
        "name: warm\nversion: '1.0'\nconfig-version: 2\nprofile: warm\n"
    )
    for name, text in models.items():
        (folder / "models" / name).write_text(text)
    (folder / "profiles.yml").write_text(
        "warm:\n  target: dev\n  outputs:\n    dev:\n"
        + "".join(f"      {line}\n" for line in target.strip().splitlines())
    )
    return folder


def output(done: Any) -> str:
    return str(getattr(done, "stdout", "") or "") + str(getattr(done, "stderr", "") or "")


def objects_held(home: Path) -> int:
    """How many objects the home's one engine holds for py4j clients (the supervisor and any
    command attached), read through its gateway with the owner's secret; this read's own two
    handles are not counted, and are let go before it closes."""
    from py4j.java_gateway import GatewayParameters, JavaGateway

    from dbt.adapters.lakehouse.engine.warm.folder import engine_folders, read_private_json

    [folder] = engine_folders(home)
    state = read_private_json(folder / "state.json")
    gateway = JavaGateway(
        gateway_parameters=GatewayParameters(port=state["port"], auth_token=state["secret"])
    )
    try:
        server_gateway = gateway.java_gateway_server.getGateway()
        bindings = server_gateway.getBindings()
        held = int(bindings.size()) - 2
        gateway.detach(bindings)
        gateway.detach(server_gateway)
        return held
    finally:
        gateway.close()
