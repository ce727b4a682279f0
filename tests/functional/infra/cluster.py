"""The `cluster` test profile's Spark standalone cluster: one master and two workers on
127.0.0.1, started from the pyspark wheel's own `bin/spark-class`, stopped at the end.

Each worker offers two cores and its own work directory, where the executors it runs keep their
stdout/stderr (`<work dir>/<app id>/<executor id>/stderr`): the evidence that tasks ran there.
The master's JSON status (`http://127.0.0.1:<ui port>/json/`) lists the workers and the
applications with the cores they hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from functional.infra.processes import (
    ServerError,
    _stop_process,
    _tail,
    dying_with_parent,
    free_port,
)

STARTUP_TIMEOUT_S = 120.0


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass
class SparkCluster:
    log_dir: Path
    workers: int = 2
    worker_cores: int = 2
    worker_memory: str = "2g"
    port: int = 0
    ui_port: int = 0
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def work_dir(self, index: int) -> Path:
        return self.log_dir / f"worker-{index}"

    def log_path(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            # Executors start Python workers with the driver's interpreter (pandas results,
            # Python models), the one this venv runs.
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def _spawn(self, name: str, *args: str) -> None:
        command = [str(spark_home() / "bin" / "spark-class"), *args]
        with self.log_path(name).open("wb") as log:
            self.processes.append(
                subprocess.Popen(
                    dying_with_parent(command),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self._env(),
                )
            )

    def start(self) -> SparkCluster:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self.ui_port = self.ui_port or free_port()
        self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--webui-port", str(self.ui_port),
        )  # fmt: skip
        for index in range(self.workers):
            self.work_dir(index).mkdir(parents=True, exist_ok=True)
            self._spawn(
                f"worker-{index}",
                "org.apache.spark.deploy.worker.Worker",
                "--host", "127.0.0.1",
                "--cores", str(self.worker_cores),
                "--memory", self.worker_memory,
                "--work-dir", str(self.work_dir(index)),
                "--webui-port", str(free_port()),
                self.master_url,
            )  # fmt: skip
        self._wait_for_workers()
        return self

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as reply:
            return dict(json.load(reply))

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        alive = 0
        while time.monotonic() < deadline:
            for index, process in enumerate(self.processes):
                if process.poll() is not None:
                    name = "master" if index == 0 else f"worker-{index - 1}"
                    self.stop()
                    raise ServerError(f"Spark {name} exited:\n{_tail(self.log_path(name))}")
            try:
                alive = sum(1 for w in self.status().get("workers", []) if w["state"] == "ALIVE")
            except OSError:
                alive = 0
            if alive >= self.workers:
                return
            time.sleep(0.5)
        self.stop()
        raise ServerError(
            f"Spark master {self.master_url} has {alive} of {self.workers} workers after "
            f"{STARTUP_TIMEOUT_S:.0f}s:\n{_tail(self.log_path('master'))}"
        )

    def executor_logs(self) -> dict[int, list[Path]]:
        """Per worker, the stderr files of the executors it ran."""
        return {
            index: sorted(self.work_dir(index).glob("app-*/*/stderr"))
            for index in range(self.workers)
        }

    def stop(self) -> None:
        for process in reversed(self.processes):
            _stop_process(process)
        self.processes.clear()
