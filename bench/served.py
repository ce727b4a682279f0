"""`dbt-lakehouse serve` for a bench: its Spark Connect endpoint only, with a token, on an
embedded lakehouse of the bench's own, stopped with its engine when the bench ends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from functional.infra.processes import free_port  # noqa: E402
from harness import VENV_BIN, ours_target, write_profiles  # noqa: E402


@contextmanager
def served_lakehouse(work: Path, token: str, warehouse: Path) -> Iterator[tuple[int, dict]]:
    """(the Connect port, the environment the server's commands ran with: its engine home
    under `work`). Exits the bench, with the server's output, when it does not start."""
    project = work / "served"
    write_profiles(project, "served", {**ours_target("s"), "warehouse": str(warehouse)})
    (project / "dbt_project.yml").write_text("name: served\nversion: '1'\nprofile: served\n")
    env = {**os.environ, "LAKEHOUSE_ENGINE_HOME": str(work / "engines"), "DO_NOT_TRACK": "1"}
    port = free_port()
    serve = [str(VENV_BIN / "dbt-lakehouse"), "serve", "--profiles-dir", str(project)]
    started = subprocess.run(
        [*serve, "--thrift-port", "0", "--connect-port", str(port), "--token", token],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if started.returncode != 0:
        print(started.stdout, started.stderr, file=sys.stderr)
        sys.exit(1)
    try:
        yield port, env
    finally:
        subprocess.run([*serve, "stop"], cwd=project, env=env, capture_output=True, timeout=300)
        subprocess.run(
            [str(VENV_BIN / "dbt-lakehouse"), "engine", "stop"], env=env, capture_output=True
        )


def server_cpu_seconds() -> float:
    """User and system CPU of every `java` process (the served engine)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as handle:
                if handle.read().strip() != "java":
                    continue
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
