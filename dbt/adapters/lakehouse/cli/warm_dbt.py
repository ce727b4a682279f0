"""`dbt-lakehouse warm-dbt on|off|status|stop`: the warm dbt (warm_dbt/) of this Python
environment, and its zygotes."""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from dbt.adapters.lakehouse.cli.common import fail
from dbt.adapters.lakehouse.warm_dbt import switch


def add_commands(commands: Any) -> None:
    warm = commands.add_parser(
        "warm-dbt", help="dbt commands forked from a process that has dbt imported already"
    )
    actions = warm.add_subparsers(dest="action", required=True)
    actions.add_parser("on", help="turn it on for this Python environment").set_defaults(run=_on)
    actions.add_parser("off", help="turn it off, stopping the zygotes").set_defaults(run=_off)
    status = actions.add_parser("status", help="whether it is on, and the running zygotes")
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(run=_status)
    actions.add_parser("stop", help="stop the zygotes (the next commands start new ones)")
    actions.choices["stop"].set_defaults(run=_stop)


def _on(_: argparse.Namespace) -> int:
    try:
        pth = switch.turn_on()
    except OSError as exc:
        return fail("warm-dbt on", f"cannot turn the warm dbt on: {exc}")
    print(
        f"warm dbt on: {pth}. The next `dbt` command starts a zygote as it exits, and the "
        "commands after it run forked from that zygote (LAKEHOUSE_WARM_DBT=off runs one "
        "without it)."
    )
    return 0


def _off(_: argparse.Namespace) -> int:
    try:
        removed, stopped = switch.turn_off(os.environ)
    except OSError as exc:
        return fail("warm-dbt off", f"cannot remove {switch.site_folder()}: {exc}")
    print(f"warm dbt {'off' if removed else 'was not on'}; zygotes stopped: {stopped}")
    return 0


def _status(args: argparse.Namespace) -> int:
    pth = switch.is_on()
    found = switch.zygotes(os.environ)
    if args.json:
        print(
            json.dumps(
                {
                    "on": pth is not None,
                    "pth": str(pth) if pth else None,
                    "zygotes": [{"socket": path, **status} for path, status in found],
                }
            )
        )
        return 0
    print(f"warm dbt: {'on (' + str(pth) + ')' if pth else 'off'}")
    for path, status in found:
        if not status:
            print(f"  {path}: not answering")
            continue
        minutes = (time.time() - status["started"]) / 60
        print(
            f"  pid {status['pid']} for {status['cwd']}: up {minutes:.0f} min, "
            f"{status['served']} commands served, {status['running']} running"
        )
    return 0


def _stop(_: argparse.Namespace) -> int:
    print(f"zygotes stopped: {switch.stop_all(os.environ)}")
    return 0
