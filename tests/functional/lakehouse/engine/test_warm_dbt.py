"""The warm dbt (docs/warm-dbt.md): `dbt` commands run by children of a zygote that has dbt
imported, in a Python environment of the test's own where `dbt-lakehouse warm-dbt on` wrote
its `.pth` file (never the shared venv: every other test's `dbt` would be served).

The environment is a venv whose site folder adds this venv's (so it has dbt and the adapter)
and imports a probe module, which every process of it loads, the zygote too: editing the probe
is a module file changing under a running zygote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.warm_dbt import client, switch
from functional.lakehouse.shared.warm import BIN, environment, output, write_project

pytestmark = pytest.mark.only_profile("local")

MODELS = {
    "numbers.sql": "{{ config(materialized='table') }}\nselect id, id * 3 as tripled from range(4)",
    "listed.sql": "select 1 as one",
}


class Overlay:
    """A venv with this venv's packages, the warm dbt on in it, zygotes in a folder of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.zygotes = root / "z"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "v")], check=True)
        self.python = root / "v" / "bin" / "python"
        site = subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.site = Path(site)
        ours = sysconfig.get_paths()["purelib"]
        (self.site / "_base.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
        self.probe = self.site / "lh_probe.py"
        self.probe.write_text("PROBE = 1\n")
        (self.site / "_probe.pth").write_text("import lh_probe\n")

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        return environment(
            home, DO_NOT_TRACK="1", LAKEHOUSE_WARM_DBT_DIR=str(self.zygotes), **extra
        )

    def lakehouse(self, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.python), "-m", "dbt.adapters.lakehouse.cli.main", "warm-dbt", *args]
        return subprocess.run(
            command, env=self.env(home), capture_output=True, text=True, timeout=120
        )

    def dbt(self, project: Path, home: Path, *args: str, **extra: str):  # type: ignore[no-untyped-def]
        # argv[0] is the dbt console script, as when a user types `dbt`.
        command = [str(self.python), str(BIN / "dbt"), *args, "--profiles-dir", str(project)]
        return subprocess.run(
            command,
            cwd=project,
            env=self.env(home, **extra),
            capture_output=True,
            text=True,
            timeout=600,
        )

    def log_lines(self) -> list[str]:
        return [
            line
            for log in sorted(self.zygotes.glob("*.log"))
            for line in log.read_text().splitlines()
        ]

    def served(self, command: str) -> int:
        return sum(f"serving dbt {command} as " in line for line in self.log_lines())

    def sockets(self) -> list[str]:
        return client.zygote_sockets(str(self.zygotes))

    def status_once_answering(self, home: Path, count: int, seconds: float = 60.0) -> dict:
        """`warm-dbt status --json` once `count` zygotes answer it (a zygote started by a
        command's exit may still be importing dbt), or as it last was."""
        deadline = time.monotonic() + seconds
        while True:
            status = json.loads(self.lakehouse(home, "status", "--json").stdout)
            answering = [z for z in status["zygotes"] if "pid" in z]
            if len(answering) >= count or time.monotonic() > deadline:
                return status
            time.sleep(0.5)

    def wait_for_zygotes(self, count: int, seconds: float = 60.0) -> None:
        """Until `count` zygotes said they listen (each after binding its socket)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if sum(" ready in " in line for line in self.log_lines()) >= count:
                return
            time.sleep(0.2)
        raise AssertionError(f"{count} zygotes not ready: {self.log_lines()}")


@pytest.fixture
def overlay(engine_home: Path) -> Iterator[Overlay]:
    made = Overlay(Path(tempfile.mkdtemp(prefix="lh-wd-")))
    yield made
    env = {"LAKEHOUSE_WARM_DBT_DIR": str(made.zygotes)}
    switch.stop_all(env)
    deadline = time.monotonic() + 30
    while made.sockets() and time.monotonic() < deadline:
        time.sleep(0.2)
    shutil.rmtree(made.root, ignore_errors=True)


def listed(text: str) -> list[str]:
    """What `dbt ls` listed."""
    return [line for line in text.splitlines() if line.startswith("warm.")]


def naming(text: str, word: str) -> list[str]:
    """dbt's console lines that name `word`, without their clock."""
    return [line.split("  ", 1)[-1] for line in text.splitlines() if word in line]


def test_commands_forked_from_a_zygote_behave_as_their_own_process(
    overlay: Overlay, engine_home: Path, tmp_path: Path
) -> None:
    """On, a first command that starts a zygote as it ends, later ones served by it with the
    same output, exit status and files (umask, folder) as their own process; a real build and
    its rows; another environment gets another zygote; a module file edited under the zygote
    makes it refuse and stop, the command running in its own process; stop and off."""
    home = engine_home
    project = write_project(
        tmp_path / "p",
        MODELS,
        f"type: lakehouse\nschema: s\nthreads: 2\nwarehouse: {tmp_path / 'wh'}\n"
        "spark: {master: 'local[2]', driver_memory: 1g}",
    )
    done = overlay.lakehouse(home, "on")
    assert done.returncode == 0 and str(overlay.site) in done.stdout, output(done)
    assert (overlay.site / switch.PTH_NAME).is_file()

    cold = overlay.dbt(project, home, "ls")
    assert cold.returncode == 0, output(cold)
    overlay.wait_for_zygotes(1)
    # dbt's serializers compiled there, once: each of hundreds of dbt's classes.
    [ready] = [line for line in overlay.log_lines() if " ready in " in line]
    assert int(ready.split("the (de)serializers of ")[1].split()[0]) > 100, ready
    warm = overlay.dbt(project, home, "ls")
    assert warm.returncode == 0 and overlay.served("ls") == 1
    assert listed(warm.stdout) == listed(cold.stdout) == ["warm.listed", "warm.numbers"]

    # A failing command's status and message, as its own process gives them.
    alone = overlay.dbt(project, home, "run-operation", "no_such_macro", LAKEHOUSE_WARM_DBT="off")
    served = overlay.dbt(project, home, "run-operation", "no_such_macro")
    assert alone.returncode == served.returncode == 2
    assert "no_such_macro" in served.stdout and overlay.served("run-operation") == 1
    assert naming(served.stdout, "no_such_macro") == naming(alone.stdout, "no_such_macro") != []

    # A build in the child, on the warm engine: rows, and files written under the client's umask.
    os.remove(project / "target" / "manifest.json")
    previous = os.umask(0o077)
    try:
        built = overlay.dbt(project, home, "run")
    finally:
        os.umask(previous)
    assert built.returncode == 0 and overlay.served("run") == 1, output(built)
    assert oct((project / "target" / "manifest.json").stat().st_mode & 0o777) == "0o600"
    shown = overlay.dbt(
        project, home, "show", "--inline", "select sum(tripled) as t from {{ ref('numbers') }}"
    )
    assert shown.returncode == 0 and "| 18 |" in shown.stdout, output(shown)
    results = json.loads((project / "target" / "run_results.json").read_text())
    assert results["args"]["which"] == "show"

    # Another environment, another zygote: never one made under other variables.
    other = overlay.dbt(project, home, "ls", LH_SOMETHING="1")
    assert other.returncode == 0 and overlay.served("ls") == 1
    status = overlay.status_once_answering(home, 2)
    assert status["on"] and len(status["zygotes"]) == 2, (status, overlay.log_lines())
    assert {z.get("cwd") for z in status["zygotes"]} == {str(project)}, overlay.log_lines()

    # A module the zygotes loaded is edited: the next command runs in its own process.
    overlay.probe.write_text("PROBE = 2  # edited\n")
    again = overlay.dbt(project, home, "ls")
    assert again.returncode == 0 and listed(again.stdout) == listed(cold.stdout)
    assert overlay.served("ls") == 1
    assert any("lh_probe.py changed since it was loaded" in line for line in overlay.log_lines())
    overlay.wait_for_zygotes(3)  # the one that command started as it ended, so that off stops it

    done = overlay.lakehouse(home, "off")
    assert done.returncode == 0 and "warm dbt off" in done.stdout, output(done)
    assert not (overlay.site / switch.PTH_NAME).exists()
    deadline = time.monotonic() + 30
    while overlay.sockets() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert overlay.sockets() == []
