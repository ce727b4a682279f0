"""Timing a benchmark's commands (harness.py's part that runs them): one command in a fresh
process, its wall time and the peak RSS of its process tree; the warm engine's JVM and RSS;
and rounds that alternate the contenders, so a slow moment of the machine hits both sides.
"""

from __future__ import annotations

import compileall
import functools
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dbt"


@dataclass
class Sample:
    seconds: float
    peak_rss_mb: float
    ok: bool
    note: str = ""
    # CPU seconds, where a bench measures them (bench/reuse_connect.py: the dbt process's and
    # its server's).
    cpu_seconds: float | None = None


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def times(self) -> list[float]:
        return [s.seconds for s in self.samples if s.ok]

    @property
    def min(self) -> float | None:
        return min(self.times) if self.times else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def peak_rss_mb(self) -> float | None:
        peaks = [s.peak_rss_mb for s in self.samples if s.ok]
        return max(peaks) if peaks else None


def _tree(root: int) -> dict[int, tuple[int, int]]:
    """A process and all its descendants (the JVM is a child of dbt): pid -> (RSS kB, session)."""
    children: dict[int, list[int]] = {}
    facts: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ppid, session = int(fields[1]), int(fields[3])
            rss = 0
            with open(f"/proc/{entry}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
                        break
        except (OSError, IndexError, ValueError):
            continue
        facts[int(entry)] = (rss, session)
        children.setdefault(ppid, []).append(int(entry))
    tree, stack = {}, [root]
    while stack:
        pid = stack.pop()
        if pid in facts:
            tree[pid] = facts[pid]
        stack.extend(children.get(pid, []))
    return tree


def _await_gone(pids: set[int], cap_seconds: float = 30.0) -> None:
    """Until `pids` have exited (untimed): a cold command's JVM outlives dbt by a second or
    two, and its exit must not run into the next contender's timing."""
    deadline = time.monotonic() + cap_seconds
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if os.path.exists(f"/proc/{pid}")}
        time.sleep(0.1)


def engine_state(home: Path) -> tuple[int | None, float | None]:
    """The warm engine's JVM pid and its RSS in MB, when one engine runs in `home`."""
    from dbt.adapters.lakehouse.engine.warm import server
    from dbt.adapters.lakehouse.engine.warm.folder import (
        engine_folders,
        read_private_json,
        supervisor_alive,
    )

    live = [f for f in engine_folders(home) if supervisor_alive(f)]
    if len(live) != 1:
        return None, None
    pid = read_private_json(live[0] / server.STATE_FILE).get("jvm_pid")
    if not isinstance(pid, int):
        return None, None
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return pid, int(line.split()[1]) / 1024
    except OSError:
        pass
    return pid, None


def wait_warm_up(home: Path, longest: float = 300.0) -> float:
    """Wait, at most `longest` seconds, until the warm engine in `home` has ended its warm-up
    (engine/warm/warm_up.py), which runs while no command is attached: a peer's command timed
    meanwhile would share the cores with it. Returns the seconds waited."""
    from dbt.adapters.lakehouse.cli.engine import engine_statuses

    began = time.monotonic()
    while time.monotonic() - began < longest:
        states = [s.get("warm_up", {}).get("state") for s in engine_statuses(home)]
        if not any(state in ("waiting", "running", "paused") for state in states):
            break
        time.sleep(0.5)
    return time.monotonic() - began


def watch_engine(home: Path, jvm: int, rss: list[float]) -> Callable[[Sample], None]:
    """A check for each warm command's Sample: the engine's RSS into `rss`, and a note when the
    engine in `home` is no longer the JVM `jvm` (restarted: the command paid a cold start)."""

    def check(sample: Sample) -> None:
        pid, megabytes = engine_state(home)
        if megabytes is not None:
            rss.append(megabytes)
        if sample.ok and pid != jvm:
            sample.note = "the engine was restarted"

    return check


def stop_engines(*homes: Path) -> int:
    from dbt.adapters.lakehouse.engine.warm import folder

    return sum(len(folder.stop_engines(home)) for home in homes)


@functools.cache
def _bytecode_as_installed() -> None:
    """Byte-compile this checkout's package, as pip does when it installs a wheel.

    The peers come from wheels, compiled at install. This checkout is installed editable, and
    with PYTHONDONTWRITEBYTECODE set (CI, the machines the figures come from) Python would
    compile the adapter's modules again in every timed process: ~0.3 s a command that no user
    of an installed dbt-lakehouse pays.
    """
    compileall.compile_dir(PACKAGE, quiet=1)


def cold_env() -> dict[str, str]:  # else the next command attaches to the last one's engine
    return {**os.environ, "LAKEHOUSE_ENGINE": "cold"}  # (kept warm 15 min, any warehouse)


def run_timed(
    command: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    log: Path | None = None,
) -> Sample:
    """Run one command in a fresh process; wall time and the peak RSS of its process tree."""
    _bytecode_as_installed()
    peak = 0
    out = log.open("wb") if log else subprocess.DEVNULL
    start = time.perf_counter()
    # Without an env of its own a command runs cold: the scripts that pass none were measured
    # before the warm engine existed, and must not attach to one another run left warm.
    process = subprocess.Popen(
        list(command), cwd=cwd, env=dict(env or cold_env()), stdout=out, stderr=subprocess.STDOUT
    )
    done = threading.Event()

    # The command's own processes, which end with it; those in a session of their own (the warm
    # engine, the embedded catalog's holder) are meant to outlive it.
    own: set[int] = set()
    session = os.getsid(0)

    def sample_memory() -> None:
        nonlocal peak
        while not done.is_set():
            tree = _tree(process.pid)
            peak = max(peak, sum(rss for rss, _ in tree.values()))
            own.update(pid for pid, (_, sid) in tree.items() if sid == session)
            done.wait(0.2)

    sampler = threading.Thread(target=sample_memory, daemon=True)
    sampler.start()
    note = ""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code, note = -1, f"stopped at the {timeout:.0f} s cap"
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    _await_gone(own)
    if log:
        out.close()  # type: ignore[union-attr]
    if code != 0 and not note:
        note = f"exit {code}" + (f", see {log}" if log else "")
    return Sample(seconds, peak / 1024, code == 0, note)


def settle(longest: float = 15.0, busy_below: float = 0.1, window: float = 0.25) -> float:
    """Wait, at most `longest` seconds, until the machine's cores are idle but for a share under
    `busy_below` over a `window`: a warm engine's JIT compiles on for seconds after its command
    ends, which the next command (another side's) would otherwise pay. Returns the seconds
    waited (none where /proc/stat is not there to read)."""

    def idle_and_total() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            ticks = [int(v) for v in stat.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait, all

    began = time.monotonic()
    try:
        while time.monotonic() - began < longest:
            idle0, total0 = idle_and_total()
            time.sleep(window)
            idle1, total1 = idle_and_total()
            if total1 > total0 and 1 - (idle1 - idle0) / (total1 - total0) < busy_below:
                break
    except OSError:
        pass
    return time.monotonic() - began


def alternate(
    rounds: int,
    contenders: Sequence[tuple[Series, Callable[[int], Sample]]],
    rotate: bool = False,
    settled: bool = False,
) -> None:
    """Each round runs every contender once, in turn; progress goes to stderr. `rotate`: each
    round starts one contender later, so that none always runs right after the same one (a
    side following another that left the machine busy, or idle, carries that every round).
    Only for contenders that do not depend on each other's order. `settled`: each command
    starts once the machine is idle (`settle`)."""
    for round_no in range(rounds):
        shift = round_no % len(contenders) if rotate and contenders else 0
        for series, run in [*contenders[shift:], *contenders[:shift]]:
            if settled:
                settle()
            sample = run(round_no)
            series.samples.append(sample)
            status = "ok" if sample.ok else sample.note
            print(
                f"  round {round_no + 1}/{rounds} {series.name}: {sample.seconds:.1f}s "
                f"rss {sample.peak_rss_mb:.0f}MB {status}",
                file=sys.stderr,
            )
