"""The process behind `dbt-lakehouse serve`: holds the profile's warm engine and its endpoints.

Started by cli/serve.py, detached from the terminal. It reads its settings (the token among
them) as one JSON line on stdin, never from its command line or environment; attaches to the
profile's warm engine as a dbt command does, starting it unless it runs (engine/warm/); starts
the endpoints in the engine's JVM (engine/serve/endpoints.py); writes `serve.json` (mode 0600,
no token) in the engine's folder; answers one JSON line on stdout, ready or why not; then waits.

Holding its attachment keeps the engine from idling out while it serves. On SIGTERM (`serve
stop`) or SIGINT it stops the endpoints, detaches, and, when it started the engine and no dbt
command is attached to it, stops the engine too, so nothing it started runs on. When the
engine dies under it, it exits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.cli.common import load_resolved, one_line
from dbt.adapters.lakehouse.engine.serve.endpoints import (
    Served,
    start_endpoints,
    stop_endpoints,
    wait_closed,
)

SERVE_FILE = "serve.json"
CLASSES_DIR = "serve-classes"  # the Thrift token check's class files (the digest, no token)


class _Stop(Exception):
    """SIGTERM or SIGINT: leave the wait and clean up."""


def _raise_stop(*_: Any) -> None:
    raise _Stop


def main() -> int:
    settings = json.loads(sys.stdin.readline())
    sys.stdin.close()
    answer = sys.stdout
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    try:
        return _serve(settings, answer)
    except _Stop:
        return 0


def _reply(answer: Any, message: dict[str, Any]) -> None:
    answer.write(json.dumps(message) + "\n")
    answer.flush()
    answer.close()


def _serve(settings: dict[str, Any], answer: Any) -> int:
    from dbt.adapters.lakehouse.engine.launch import java_executable
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.engine.warm import client as warm
    from dbt.adapters.lakehouse.engine.warm.folder import request, stop_engine
    from dbt.adapters.lakehouse.engine.warm.identity import keep_warm_minutes, session_conf

    args = argparse.Namespace(**settings["profile"])
    loaded = load_resolved("serve", args)
    if isinstance(loaded, int):
        _reply(answer, {"ok": False, "error": "the profile could not be read (see above)"})
        return loaded
    spec = loaded[0].spec
    refusal = _refusal(spec.master, keep_warm_minutes(spec.master, spec.keep_warm_minutes))
    if refusal:
        _reply(answer, {"ok": False, "error": refusal})
        return 1
    java = java_executable() or "java"
    was_running = warm.engine_running(spec, java)
    host, token = settings["host"], settings["token"]
    served = Served()
    folder: Path | None = None
    attachment = None
    try:
        spark = ENGINE.get(spec)
        attachment = ENGINE.attachment
        if attachment is None:  # keep_warm_minutes said warm, so the session is attached
            raise RuntimeError("the session is not on a warm engine")
        folder = attachment.folder
        # The profile's catalogs and their secrets, as each dbt command's session sets them.
        served = start_endpoints(
            spark.sparkContext._gateway,
            spark._jsparkSession,  # type: ignore[attr-defined]
            [*session_conf(spec), *spec.secret_catalog_conf],
            host,
            settings.get("thrift_port"),
            settings.get("connect_port"),
            token,
            folder / CLASSES_DIR,
        )
        state = {
            "pid": os.getpid(),
            "host": host,
            "thrift_port": settings.get("thrift_port"),
            "connect_port": settings.get("connect_port"),
            "started_engine": not was_running,
            "engine_folder": str(folder),
            "jvm_pid": attachment.jvm_pid,
            "profile": loaded[1].profile,
            "target": loaded[1].target,
            "since": time.time(),
        }
        _write_private(folder / SERVE_FILE, state)
        _reply(answer, {"ok": True, **state})
        while attachment.alive():
            time.sleep(1.0)
        return 1  # the engine stopped under it
    except _Stop:
        return 0
    except Exception as exc:
        if not answer.closed:
            _reply(answer, {"ok": False, "error": one_line(getattr(exc, "msg", None) or exc)})
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        jvm = getattr(getattr(ENGINE.active, "sparkContext", None), "_jvm", None)
        if jvm is not None:
            stop_endpoints(jvm, served)
        ports = [p for p in (settings.get("thrift_port"), settings.get("connect_port")) if p]
        wait_closed(host, ports, timeout=20)
        ENGINE.stop()
        if folder is not None:
            (folder / SERVE_FILE).unlink(missing_ok=True)
            shutil.rmtree(folder / CLASSES_DIR, ignore_errors=True)
            if not was_running and not _other_clients(request, folder):
                stop_engine(folder)


def _refusal(master: str, minutes: float) -> str | None:
    if master.strip().lower().startswith("sc://"):
        return (
            f"The profile's master is a Spark Connect server ({master}): it serves already. "
            "dbt-lakehouse serve serves a profile whose driver runs here (a local or cluster "
            "master)."
        )
    if minutes <= 0:
        return (
            "dbt-lakehouse serve runs on the profile's warm engine, and this profile runs cold "
            "(engine: {keep_warm_minutes: 0}, LAKEHOUSE_ENGINE=cold, or a cluster master). "
            "Fix: unset LAKEHOUSE_ENGINE=cold, set keep_warm_minutes above 0, or, for a cluster "
            "master, LAKEHOUSE_ENGINE=warm."
        )
    return None


def _other_clients(request: Any, folder: Path) -> bool:
    """Whether a dbt command is attached to the engine (this process has detached)."""
    try:
        return bool(request(folder, {"op": "status"}).get("clients"))
    except (OSError, ValueError):
        return False


def _write_private(path: Path, data: dict[str, Any]) -> None:
    from dbt.adapters.lakehouse.engine.warm.server import write_private

    write_private(path, data)


if __name__ == "__main__":
    sys.exit(main())
