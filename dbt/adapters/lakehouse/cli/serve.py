"""`dbt-lakehouse serve [status|stop]`: the profile's lakehouse served to other clients (dbt v2,
BI tools, notebooks) over HiveServer2 (Thrift) and Spark Connect, from its warm engine's JVM
(docs/serving.md). The serving process is cli/serve_holder.py; this module starts it, waits
until it answers, and reads or stops the serves of the current LAKEHOUSE_ENGINE_HOME."""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.cli.common import fail
from dbt.adapters.lakehouse.cli.serve_holder import SERVE_FILE
from dbt.adapters.lakehouse.engine.serve.endpoints import listening, wait_closed
from dbt.adapters.lakehouse.engine.serve.token import TOKEN_ENV, check_token
from dbt.adapters.lakehouse.engine.warm.folder import engine_folders, read_private_json
from dbt.adapters.lakehouse.engine.warm.identity import engines_home
from dbt.adapters.lakehouse.exceptions import EngineSetupError

# The engine may have to start first (jars, catalogs): as long as a warm start may take.
START_TIMEOUT_SECONDS = 330.0
STOP_TIMEOUT_SECONDS = 60.0
LOG_FILE = "serve.log"
_HOLDER = "dbt.adapters.lakehouse.cli.serve_holder"


def add_commands(commands: Any, profile_options: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the profile's lakehouse over Thrift (HiveServer2) and Spark Connect",
        description="Without an action: start serving. The token is --token, else "
        f"${TOKEN_ENV}; on 127.0.0.1 without either, a new one is made and printed once.",
    )
    profile_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--thrift-port", type=int, default=10000, help="0: no Thrift endpoint")
    serve.add_argument("--connect-port", type=int, default=15002, help="0: no Connect endpoint")
    serve.add_argument("--token", help=f"the clients' token (default: ${TOKEN_ENV})")
    serve.set_defaults(run=_start)
    actions = serve.add_subparsers(dest="action")
    status = actions.add_parser("status", help="the serves of this LAKEHOUSE_ENGINE_HOME")
    status.add_argument("--json", action="store_true", help="one JSON object per serve")
    status.set_defaults(run=_status)
    stop = actions.add_parser("stop", help="stop them (and the engines they started)")
    stop.set_defaults(run=_stop)


def _start(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.engine.jars.lines import pyspark_version

    if not pyspark_version().startswith("4."):
        # Spark 3.5's PySpark ships no Spark Connect server, and its Connect has no token.
        return fail(
            "serve",
            f"serving needs the Spark 4.1 line; this environment has pyspark "
            f"{pyspark_version() or '(none)'}, whose jars have no Spark Connect server. Fix: "
            'serve from an environment with `pip install "pyspark==4.1.*"` '
            "(docs/engine-lines.md).",
        )
    thrift = args.thrift_port or None
    connect = args.connect_port or None
    if thrift is None and connect is None:
        return fail("serve", "both endpoints are off (--thrift-port 0 --connect-port 0)")
    running = serves()
    if running:
        where = ", ".join(_endpoints(s) for s in running)
        return fail("serve", f"already serving ({where}). Fix: `dbt-lakehouse serve stop` first.")
    given = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    try:
        token = check_token(args.host, given)
    except EngineSetupError as exc:
        return fail("serve", exc.msg)
    settings = {
        "profile": {
            "profiles_dir": args.profiles_dir,
            "profile": args.profile,
            "target": args.target,
        },
        "host": args.host,
        "thrift_port": thrift,
        "connect_port": connect,
        "token": token,
    }
    answer = _launch(settings)
    if not answer.get("ok"):
        return fail("serve", f"{answer.get('error')} (its output: {engines_home() / LOG_FILE})")
    print(f"serving profile {answer['profile']} (target {answer['target']}): {_endpoints(answer)}")
    if given is None or not given.strip():
        # Made here, so shown once: nothing stores it (serve.json holds no token).
        print(f"token (shown once; clients pass it as their password or token): {token}")
    print("stop with `dbt-lakehouse serve stop`")
    return 0


def _launch(settings: dict[str, Any]) -> dict[str, Any]:
    """Start the serving process and wait for its one-line answer."""
    home = engines_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with (home / LOG_FILE).open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", _HOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # ctrl-c in this terminal leaves it serving
            close_fds=True,
        )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(settings) + "\n").encode())
    process.stdin.close()
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_SECONDS)
    line = process.stdout.readline() if ready else b""
    process.stdout.close()
    try:
        return dict(json.loads(line))
    except ValueError:
        if process.poll() is None:
            process.terminate()
        return {"ok": False, "error": "the serving process did not answer"}


def serves(home: Path | None = None) -> list[dict[str, Any]]:
    """The running serves under `home` (default: LAKEHOUSE_ENGINE_HOME's), from their files."""
    found = []
    for folder in engine_folders(home):
        state = read_private_json(folder / SERVE_FILE)
        pid = state.get("pid")
        if isinstance(pid, int) and _is_holder(pid):
            found.append(state)
    return found


def _is_holder(pid: int) -> bool:
    """`pid` runs the serving process (not a later process given its number)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return _HOLDER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (macOS): the pid is alive, take it as the file says


def _endpoints(state: dict[str, Any]) -> str:
    host = state["host"]
    parts = []
    if state.get("thrift_port"):
        parts.append(f"Thrift jdbc:hive2://{host}:{state['thrift_port']}/default")
    if state.get("connect_port"):
        local = "localhost" if host in ("127.0.0.1", "::1") else host
        parts.append(f"Spark Connect sc://{local}:{state['connect_port']}/;token=<token>")
    return ", ".join(parts)


def _status(args: argparse.Namespace) -> int:
    running = serves()
    if args.json:
        for state in running:
            print(json.dumps(state))
        return 0
    if not running:
        print(f"not serving (engines' folder: {engines_home()})")
    for state in running:
        ports = [p for p in (state.get("thrift_port"), state.get("connect_port")) if p]
        shut = [p for p in ports if not listening(state["host"], p)]
        print(
            f"serving profile {state['profile']} (target {state['target']}) for "
            f"{time.time() - state['since']:.0f}s: {_endpoints(state)}; pid {state['pid']}, "
            f"engine JVM {state.get('jvm_pid')}"
            + (f"; ports not answering: {shut}" if shut else "")
        )
    return 0


def _stop(_: argparse.Namespace) -> int:
    running = serves()
    left = []
    for state in running:
        pid = state["pid"]
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while _is_holder(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        ports = [p for p in (state.get("thrift_port"), state.get("connect_port")) if p]
        left += wait_closed(state["host"], ports, timeout=5)
        if _is_holder(pid):
            left.append(pid)
    if left:
        return fail("serve stop", f"still running or listening after stop: {left}")
    print(f"stopped {len(running)} serve(s) in {engines_home()}")
    return 0
