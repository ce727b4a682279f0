"""The warm dbt turned on and off for one Python environment, and its zygotes listed and stopped.

On is one `.pth` file in the environment's site folder: Python runs its line at every start,
and the line loads client.py by its path only when the process is the `dbt` console script,
so no other program of the environment loads anything (the line's test costs microseconds).
Off removes the file and stops the zygotes.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from dbt.adapters.lakehouse.warm_dbt import client

PTH_NAME = "dbt_lakehouse_warm_dbt.pth"
_LOADED_AS = "dbt_lakehouse_warm_dbt_client"


def site_folder() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def pth_line(client_file: str) -> str:
    """The `.pth` line: run client.serve_or_return in the `dbt` console script's process."""
    code = (
        f"if os.path.basename((sys.argv or [''])[0]) == 'dbt' and os.path.isfile({client_file!r}):"
        "\n import importlib.util"
        f"\n spec = importlib.util.spec_from_file_location({_LOADED_AS!r}, {client_file!r})"
        "\n module = importlib.util.module_from_spec(spec)"
        "\n spec.loader.exec_module(module)"
        "\n module.serve_or_return(sys.argv)"
    )
    return f"import os, sys; exec({code!r})\n"


def turn_on(folder: Path | None = None) -> Path:
    """Write the `.pth` file; where it is."""
    if not hasattr(os, "fork"):
        raise OSError("the warm dbt forks its commands, which this platform cannot")
    pth = (folder or site_folder()) / PTH_NAME
    pth.write_text(pth_line(client.__file__))
    return pth


def is_on(folder: Path | None = None) -> Path | None:
    pth = (folder or site_folder()) / PTH_NAME
    return pth if pth.is_file() else None


def turn_off(env: Mapping[str, str], folder: Path | None = None) -> tuple[bool, int]:
    """(whether a `.pth` file was removed, how many zygotes stopped)."""
    pth = (folder or site_folder()) / PTH_NAME
    removed = pth.is_file()
    pth.unlink(missing_ok=True)
    return removed, stop_all(env)


def zygotes(env: Mapping[str, str]) -> list[tuple[str, dict]]:
    """Each zygote's socket and its status ({} for one that does not answer)."""
    found: list[tuple[str, dict]] = []
    for path in client.zygote_sockets(client.zygotes_dir(env)):
        conn = client.exchange(path, {"kind": "status"})
        if conn is None:
            found.append((path, {}))
            continue
        with conn:
            found.append((path, client.read_reply(conn.makefile("rb"))))
    return found


def stop_all(env: Mapping[str, str]) -> int:
    return sum(client.stop_zygote(path) for path in client.zygote_sockets(client.zygotes_dir(env)))
