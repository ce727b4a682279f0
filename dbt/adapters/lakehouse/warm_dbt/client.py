"""The warm dbt's client: a `dbt` command handed to a process that has dbt imported already.

A `dbt` command spends about 1.3 s importing dbt and its adapters before it reads the project
(the sample's `dbt ls`: 1.85 s, its build with every node reused: 2.35 s). A zygote
(zygote.py) does those imports once and forks a child per command; the child takes this
process's standard streams, folder, environment, arguments and umask, and runs dbt's own
`cli()` as the console script would, so the command's output, files and exit status are what
they would be here.

This module runs before dbt is imported: the `.pth` file `dbt-lakehouse warm-dbt on` writes
loads it by its path, while Python reads its site folder, for a process whose `argv[0]` is the
`dbt` console script. So it imports the standard library only, and it also holds the user
cache's location (the jar cache's too), which it needs before any package of ours loads.

A zygote is only given a command whose process would have imported dbt the same way: its key
is the interpreter, the folder, the environment and the site folders' stamps (a package
installed or removed changes them); the zygote itself refuses a command once a module file it
loaded changed (zygote.py). Without a zygote, or when it refuses, the command runs here as
ever and a new zygote starts as it exits, for the next command.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

SWITCH = "LAKEHOUSE_WARM_DBT"  # off: this command runs in its own process
# The words of an on/off variable (reuse/plan.py's `env_switch` reads every switch with them):
# here, where this module reads its own before any package of ours loads and cannot refuse
# another value; the command's set-up refuses it.
ON_WORDS = ("1", "true", "on", "yes")
OFF_WORDS = ("0", "false", "off", "no")
IDLE_VARIABLE = "LAKEHOUSE_WARM_DBT_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 15 * 60.0
DIR_VARIABLE = "LAKEHOUSE_WARM_DBT_DIR"
ZYGOTE_MARK = "LAKEHOUSE_WARM_DBT_ZYGOTE"  # in a zygote's environment, whose imports skip this
PROTOCOL = 1
# Set by the shell for each command or by the zygote's start; dbt's imports read none of them.
_VOLATILE = frozenset({"_", "OLDPWD", "PWD", "SHLVL", ZYGOTE_MARK})
_SOCKET_PATH_MAX = 100  # sockaddr_un holds 108 bytes on Linux, 104 on macOS
# Signals a terminal or a supervisor sends the command, passed on to the child running it.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# Zygotes kept at once (one per folder and environment); the least recently used goes first.
MAX_ZYGOTES = 4
_LOG_BYTES_KEPT = 1 << 20
_LEFTOVER_SECONDS = 7 * 24 * 3600


def user_cache_dir(env: Mapping[str, str]) -> str:
    """The user cache of dbt-lakehouse: jars, engines, kept templates and schemas, zygotes."""
    if env.get("LAKEHOUSE_CACHE_DIR"):
        return os.path.expanduser(env["LAKEHOUSE_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dbt-lakehouse")


def idle_seconds(env: Mapping[str, str]) -> float:
    """How long a zygote waits for a command before it stops (IDLE_VARIABLE); ValueError naming
    the fix for a value that is not a positive number of seconds."""
    raw = env.get(IDLE_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_IDLE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ValueError(
            f"{IDLE_VARIABLE} must be a number of seconds above 0 (how long an unused zygote "
            f"stays up; default {DEFAULT_IDLE_SECONDS:.0f}); got {raw!r}."
        )
    return seconds


def zygotes_dir(env: Mapping[str, str]) -> str:
    """Where zygotes listen: LAKEHOUSE_WARM_DBT_DIR (for a user cache whose path is too long
    for a socket's), else the user cache's `warm-dbt/`."""
    return env.get(DIR_VARIABLE) or os.path.join(user_cache_dir(env), "warm-dbt")


def zygote_key(env: Mapping[str, str], cwd: str, path: Sequence[str]) -> str:
    """What a process's imports could depend on: a zygote serves only commands with its key."""
    stamps = []
    for entry in path:
        try:
            stamps.append((entry, os.stat(entry or cwd).st_mtime_ns))
        except OSError:
            continue
    shown = sorted((name, value) for name, value in env.items() if name not in _VOLATILE)
    text = json.dumps([PROTOCOL, sys.executable, sys.version, repr(sys.flags), cwd, shown, stamps])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def socket_path(env: Mapping[str, str], key: str) -> str | None:
    """Where the zygote of `key` listens; None when that path is too long for a socket."""
    path = os.path.join(zygotes_dir(env), f"{key}.sock")
    return path if len(path.encode()) <= _SOCKET_PATH_MAX else None


def exchange(path: str, request: dict, fds: Sequence[int] = ()) -> socket.socket | None:
    """A connection to the zygote at `path` that took `request`, or None if none listens."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        data = json.dumps(request).encode() + b"\n"
        sent = socket.send_fds(conn, [data], list(fds)) if fds else conn.send(data)
        conn.sendall(data[sent:])
    except OSError:
        conn.close()
        return None
    return conn


def read_reply(reader) -> dict:
    line = reader.readline()
    return json.loads(line) if line else {}


def serve_or_return(argv: list[str]) -> None:
    """Exit with the status of this command run by a warm zygote, or return for it to run here
    (and a zygote to start when it exits)."""
    env = os.environ
    if (
        env.get(SWITCH, "").strip().lower() in OFF_WORDS
        or ZYGOTE_MARK in env
        or not hasattr(os, "fork")
    ):
        return
    try:
        path, reader, child = _hand_over(argv, env)
    except (OSError, ValueError):  # no folder to run in, an unreadable answer: it runs here
        return
    if reader is None:
        if path is not None:
            atexit.register(start_zygote, path)
        return
    for number in FORWARDED:
        signal.signal(number, lambda received, _frame: _forward(child, received))
    try:
        ended = read_reply(reader)
    except (OSError, ValueError):
        ended = {}
    if "status" not in ended:
        log = str(path)[:-5] + ".log"
        os.write(2, f"dbt-lakehouse: the warm dbt running this command stopped ({log})\n".encode())
        os._exit(1)
    _exit_as(int(ended["status"]))


def _hand_over(argv: list[str], env: Mapping[str, str]) -> tuple[str | None, Any, int]:
    """(the zygote's socket, the reader of the connection the command's status will come on
    (one reader: its buffer may hold that status already), the child's pid); no reader when
    no zygote took the command."""
    cwd = os.getcwd()
    path = socket_path(env, zygote_key(env, cwd, sys.path))
    if path is None:
        return None, None, 0
    umask = os.umask(0o022)
    os.umask(umask)
    request = {"kind": "run", "argv": argv, "cwd": cwd, "env": dict(env), "umask": umask}
    conn = exchange(path, request, (0, 1, 2))
    if conn is None:
        return path, None, 0
    reader = conn.makefile("rb")
    first = read_reply(reader)
    if "pid" not in first:  # stale, or a zygote stopping: this process runs it
        conn.close()
        return path, None, 0
    return path, reader, int(first["pid"])


def _forward(child: int, number: int) -> None:
    try:
        os.kill(child, number)
    except ProcessLookupError:
        pass


def _exit_as(status: int) -> None:
    """End this process as the child ended: its exit code, or the signal that killed it."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


def start_zygote(path: str) -> None:
    """A zygote for `path`, started apart from this process (its own session, its own log),
    after the least recently used beyond MAX_ZYGOTES were asked to stop."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        _stop_least_recent(folder, keep=MAX_ZYGOTES - 1, besides=path)
        _remove_leftovers(folder, besides=path)
        log = os.open(path[:-5] + ".log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if os.fstat(log).st_size > _LOG_BYTES_KEPT:  # one key's zygotes one after another
            os.ftruncate(log, 0)
    except OSError:
        return
    env = dict(os.environ)
    env[ZYGOTE_MARK] = os.path.basename(path)
    try:
        subprocess.Popen(
            [sys.executable, "-m", "dbt.adapters.lakehouse.warm_dbt.zygote", path],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
    finally:
        os.close(log)


def zygote_sockets(folder: str) -> list[str]:
    """The zygotes' sockets in `folder`, least recently used first."""
    try:
        names = [name for name in os.listdir(folder) if name.endswith(".sock")]
    except OSError:
        return []
    found = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            found.append((os.stat(path).st_mtime_ns, path))
        except OSError:
            continue
    return [path for _, path in sorted(found)]


def stop_zygote(path: str) -> bool:
    """Ask the zygote at `path` to stop; False when none answered there (a socket left by one
    that was killed is removed)."""
    conn = exchange(path, {"kind": "stop"})
    if conn is None:
        try:
            os.unlink(path)
        except OSError:
            pass
        return False
    with conn:
        read_reply(conn.makefile("rb"))
    return True


def _remove_leftovers(folder: str, besides: str) -> None:
    """The log and lock of a key no zygote has served for a week (each environment and folder
    has its key, each key its two files)."""
    old = time.time() - _LEFTOVER_SECONDS
    for name in os.listdir(folder):
        stem, kind = os.path.splitext(os.path.join(folder, name))
        if kind not in (".log", ".lock") or stem == besides[:-5] or os.path.exists(stem + ".sock"):
            continue
        try:
            if os.stat(stem + kind).st_mtime < old:
                os.unlink(stem + kind)
        except OSError:
            continue


def _stop_least_recent(folder: str, keep: int, besides: str) -> None:
    others = [path for path in zygote_sockets(folder) if path != besides]
    for path in others[: max(0, len(others) - keep)]:
        stop_zygote(path)
