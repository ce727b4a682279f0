"""`dbt-lakehouse engine start|status|stop`: the warm engines (engine/warm/) of this user, those
under the current LAKEHOUSE_ENGINE_HOME unless `--all`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.cli.common import fail, load_resolved
from dbt.adapters.lakehouse.engine.warm.folder import (
    engine_folders,
    read_private_json,
    request,
    running_engine_folders,
    stop_engine,
    stop_engines,
    supervisor_alive,
)
from dbt.adapters.lakehouse.engine.warm.identity import engines_home
from dbt.adapters.lakehouse.engine.warm.server import LOG_FILE, STATE_FILE

# An engine lives in a folder under the engines' home of the command that started it: `status`
# and `stop` see that home's engines unless given --all.
_HOME = (
    "the engines' folder: $LAKEHOUSE_ENGINE_HOME, else engines/ in the user cache "
    "(~/.cache/dbt-lakehouse)"
)
_ALL = "every engine of this user, whichever LAKEHOUSE_ENGINE_HOME it was started under"
# What `status` shows of an engine's launch conf: what tells engines apart, not every default.
_SHOWN_CONF = ("spark.driver.memory", "spark.driver.extraJavaOptions")


def add_commands(commands: Any, profile_options: Any) -> None:
    engine = commands.add_parser("engine", help="the warm Spark engine kept between dbt commands")
    actions = engine.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="start (and warm) the engine of a profile")
    profile_options(start)
    start.set_defaults(run=_start)
    status = actions.add_parser("status", help=f"show the running engines under {_HOME}")
    status.add_argument("--json", action="store_true", help="one JSON object per engine")
    status.add_argument("--all", action="store_true", help=_ALL)
    status.set_defaults(run=_status)
    stop = actions.add_parser("stop", help=f"stop the engines under {_HOME}")
    stop.add_argument("--all", action="store_true", help=_ALL)
    stop.set_defaults(run=_stop)


def _start(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.engine.warm.identity import keep_warm_minutes

    loaded = load_resolved("engine start", args)
    if isinstance(loaded, int):
        return loaded
    spec = loaded[0].spec
    minutes = keep_warm_minutes(spec.master, spec.keep_warm_minutes)
    if minutes <= 0:
        print(
            f"The profile runs cold (master {spec.master}; keep_warm_minutes 0, "
            "LAKEHOUSE_ENGINE=cold or a cluster master): every dbt command starts its own JVM, "
            "so there is no engine to start."
        )
        return 0
    try:
        ENGINE.get(spec)
        attachment = ENGINE.attachment
        folder = attachment.folder if attachment is not None else None
    except Exception as exc:
        return fail("engine start", str(getattr(exc, "msg", None) or exc))
    finally:
        ENGINE.stop()
    print(f"engine ready in {folder}; it stops after {minutes:g} idle minutes")
    return 0


def engine_statuses(
    home: Path | None = None, folders: list[Path] | None = None
) -> list[dict[str, Any]]:
    statuses = []
    for folder in engine_folders(home) if folders is None else folders:
        if not supervisor_alive(folder):
            continue
        try:
            status = request(folder, {"op": "status"})
        except (OSError, ValueError):
            state = read_private_json(folder / STATE_FILE)
            status = {"pid": state.get("pid"), "state": state.get("state", "starting")}
        status["folder"] = str(folder)
        statuses.append(status)
    return statuses


def _status(args: argparse.Namespace) -> int:
    statuses = engine_statuses(folders=running_engine_folders() if args.all else None)
    if args.json:
        for status in statuses:
            print(json.dumps(status))
        return 0
    if not statuses:
        where = "" if args.all else f" (engines' folder: {engines_home()})"
        print(f"no engine running{where}")
    for status in statuses:
        print(_describe(status))
    if not args.all:
        _mention_others()
    return 0


def _describe(status: dict[str, Any]) -> str:
    if "uptime_seconds" not in status:
        return f"engine {Path(status['folder']).name}: {status.get('state')} (pid {status['pid']})"
    conf = dict(status.get("conf") or [])
    clients = status.get("clients") or []
    attached = ", ".join(f"pid {c['pid']} for {_duration(c['attached_seconds'])}" for c in clients)
    jars = [Path(j).name for j in (conf.get("spark.jars") or "").split(",") if j]
    lines = [
        f"engine {Path(status['folder']).name}: pid {status['pid']} (JVM {status['jvm_pid']}), "
        f"up {_duration(status['uptime_seconds'])}, "
        + (
            f"{len(clients)} attached: {attached}"
            if clients
            else f"idle {_duration(status['idle_seconds'])} (stops at "
            f"{status['keep_warm_minutes']:g} min)"
        ),
        f"  memory: JVM resident {_mb(status.get('rss_bytes'))}, heap "
        f"{_mb(status.get('heap_used_bytes'))} used of {_mb(status.get('heap_max_bytes'))} max "
        "(the driver memory setting)",
        f"  launch: master {status['master']}; "
        + "; ".join(f"{k}={conf[k]}" for k in _SHOWN_CONF if conf.get(k))
        + (f"; jars: {', '.join(jars)}" if jars else ""),
        f"  output: {Path(status['folder']) / LOG_FILE}",
    ]
    warm_up = status.get("warm_up")
    if warm_up:
        failed = f": {warm_up['error']}" if warm_up.get("error") else ""
        lines.insert(
            -1,
            f"  warm-up: {warm_up['state']}{failed}, {warm_up['rounds']} round(s) in "
            f"{warm_up['seconds']:g} s of {warm_up['budget_seconds']:g} s",
        )
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{seconds:.0f}s"


def _mb(value: Any) -> str:
    return f"{value / 1048576:.0f} MB" if isinstance(value, int | float) else "unknown"


def _stop(args: argparse.Namespace) -> int:
    if args.all:
        stopped = [str(folder) for folder in running_engine_folders() if stop_engine(folder)]
        print(f"stopped {len(stopped)} engine(s){': ' + ', '.join(stopped) if stopped else ''}")
        return 0
    stopped = stop_engines()
    named = f": {', '.join(stopped)}" if stopped else ""
    print(f"stopped {len(stopped)} engine(s) in {engines_home()}{named}")
    _mention_others()
    return 0


def _mention_others() -> None:
    """Engines this user runs under other homes, which the command just left alone."""
    home = engines_home()
    others = [f for f in running_engine_folders() if f.parent != home]
    if others:
        print(
            f"{len(others)} other engine(s) run under another LAKEHOUSE_ENGINE_HOME "
            f"({', '.join(sorted({str(f.parent) for f in others}))}): `--all` includes them"
        )
