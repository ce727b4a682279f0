"""Native execution (Apache DataFusion Comet): whether a session may run it, and the launch
settings that turn it on.

Comet is a Spark plugin that runs scans (Iceberg's included), filters, joins, aggregates and
shuffles in Rust on Arrow data; writes stay on Spark's JVM path. Its native library is inside
its jar, built for Linux amd64 and aarch64 against glibc 2.30 and, on x86, AVX2: on any other
machine the session runs on the JVM, and one line says why. Its plugin and shuffle manager are
static settings, so they are launch settings (a warm engine started without them never gains
them: the engine's identity holds them, engine/warm/identity.py). The checks are pure over the
facts they are given (`Platform`), so they are tested without the machine they describe.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine.jars.lines import COMET_LINES, COMET_VERSION, installed_line
from dbt.adapters.lakehouse.exceptions import EngineSetupError

NATIVE_ENGINES = ("comet",)
# COMET_LINES: only the 4.1 line has a Comet with the delete-file fix of its native Iceberg
# scan (apache/datafusion-comet #4723); the 3.5 build Maven Central serves (0.12.0) lacks it and
# runs no window functions natively.
logger = AdapterLogger("Lakehouse")
_ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "aarch64", "arm64": "aarch64"}
_GLIBC_MIN = (2, 30)


@dataclass(frozen=True)
class Platform:
    """What Comet's native library needs to know of the machine the driver runs on."""

    system: str  # platform.system(): Linux, Darwin, Windows
    machine: str  # platform.machine(): x86_64, aarch64, arm64
    glibc: str  # the C library's version ("2.36"), "" when it is not glibc (musl, macOS)
    cpu_flags: frozenset[str]  # /proc/cpuinfo's flags of the first CPU (x86 only)


def this_platform() -> Platform:
    libc, libc_version = platform.libc_ver()
    return Platform(
        system=platform.system(),
        machine=platform.machine(),
        glibc=libc_version if libc == "glibc" else "",
        cpu_flags=_cpu_flags(Path("/proc/cpuinfo")),
    )


def _cpu_flags(cpuinfo: Path) -> frozenset[str]:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def platform_problem(machine: Platform) -> str | None:
    """Why Comet's native library cannot load here, or None when it can."""
    arch = _ARCHES.get(machine.machine.lower())
    if machine.system != "Linux" or arch is None:
        return (
            f"Comet's native library is built for Linux amd64 and aarch64; this is "
            f"{machine.system} {machine.machine}"
        )
    if not machine.glibc:
        return (
            "Comet's native library needs glibc 2.30 or newer; this system's C library is not glibc"
        )
    found = tuple(int(p) for p in re.findall(r"\d+", machine.glibc)[:2])
    if found < _GLIBC_MIN:
        return f"Comet's native library needs glibc 2.30 or newer; this system has {machine.glibc}"
    if arch == "amd64" and "avx2" not in machine.cpu_flags:
        return "Comet's native library on x86 needs a CPU with AVX2; this one has none"
    return None


def line_refusal(native: str, line: str) -> EngineSetupError | None:
    """The error for a native engine asked of a line it is not offered on, else None."""
    if line in COMET_LINES:
        return None
    return EngineSetupError(
        f"engine.native: {native} runs on the Spark 4.1 line only (Comet {COMET_VERSION}); "
        f"this environment's PySpark is of the {line} line. Fix: install the 4.1 line "
        '(`pip install "pyspark==4.1.*"`, or LAKEHOUSE_SPARK_LINE=4.1 bash scripts/install.sh), '
        "or remove engine.native from the profile."
    )


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_MIB = {"": 1 / (1 << 20), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1 << 20}
# Spark's own default for spark.driver.memory and spark.executor.memory.
SPARK_DEFAULT_MEMORY = "1g"


def memory_mib(size: str) -> int:
    """A JVM memory size as Spark reads it ("4g", "512m", "2048"), in MiB."""
    match = _SIZE.match(size)
    if not match:
        raise EngineSetupError(
            f"Cannot read the memory size {size!r}: give a number with a unit, such as 4g or 512m."
        )
    return max(1, int(int(match.group(1)) * _MIB[match.group(2).lower()]))


def off_heap_size(conf: Mapping[str, str], local: bool) -> str:
    """Comet's off-heap memory per JVM that runs tasks: the same size as that JVM's heap (the
    driver's on a local master, an executor's on a cluster; Spark's 1g when unset), so the
    native side has as much room as the JVM side. Without off-heap memory Comet silently falls
    back to the JVM; a profile's own `spark.memory.offHeap.size` wins."""
    key = "spark.driver.memory" if local else "spark.executor.memory"
    return f"{memory_mib(conf.get(key) or SPARK_DEFAULT_MEMORY)}m"


def native_engine(
    native: str | None,
    connect: bool,
    line: str | None = None,
    machine: Platform | None = None,
) -> str | None:
    """The native engine a session runs with: the profile's `engine.native` where this line and
    machine run it, else None (Spark's JVM execution) after one line saying why. Another line
    than 4.1 is refused: the profile asks for something this environment cannot give."""
    if not native:
        return None
    refusal = line_refusal(native, installed_line().spark if line is None else line)
    if refusal is not None:
        raise refusal
    if connect:
        _say_once(
            f"engine.native: {native} is off for this session: a Spark Connect server runs the "
            "queries, and its own launch settings decide its execution; running as it is set up."
        )
        return None
    problem = platform_problem(this_platform() if machine is None else machine)
    if problem is not None:
        _say_once(
            f"engine.native: {native} is off for this session: {problem}; running on Spark's "
            "JVM execution."
        )
        return None
    return native


_said: set[str] = set()


def _say_once(message: str) -> None:
    # The spec is built for every connection of a run; the reason is said once per process.
    if message not in _said:
        _said.add(message)
        logger.warning(message)


def comet_conf(conf: Mapping[str, str], comet_jar: Path | None, master: str) -> dict[str, str]:
    """The settings that run a session with Comet, merged over `conf` (the spec's so far, the
    profile's `spark.conf` included): the user's own value of each key wins, and a classpath of
    theirs is kept behind Comet's jar. `comet_jar` is None when the profile's
    `spark.jars.packages` names Comet (Spark puts packages on the classpath itself)."""
    local = master.startswith("local")
    settings = {
        "spark.plugins": "org.apache.spark.CometPlugin",
        "spark.shuffle.manager": (
            "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager"
        ),
        "spark.memory.offHeap.enabled": "true",
        "spark.memory.offHeap.size": off_heap_size(conf, local),
        "spark.comet.enabled": "true",
        "spark.comet.exec.enabled": "true",
        "spark.comet.shuffle.enabled": "true",
        "spark.comet.scan.icebergNative.enabled": "true",
        # Comet's operators may compare -0.0 and 0.0 as different numbers where Spark does not:
        # such operations go to Spark. (Its native Iceberg scan's own filter is not covered:
        # docs/engine-lines.md, "Known differences".)
        "spark.comet.exec.strictFloatingPoint": "true",
        # Comet's account of each plan (what ran natively, each fallback's reason) in the plan
        # text Spark keeps per SQL execution and in EXPLAIN: each node's adapter_response
        # reads it (report/native.py).
        "spark.sql.extendedExplainProviders": "org.apache.comet.ExtendedExplainInfo",
    }
    merged = {**settings, **conf}
    # A profile's own plugins (and explain providers) run beside Comet's, not instead of it.
    for key in ("spark.plugins", "spark.sql.extendedExplainProviders"):
        named = [settings[key], *conf.get(key, "").split(",")]
        merged[key] = ",".join(dict.fromkeys(p.strip() for p in named if p.strip()))
    # The plugin and the shuffle manager are loaded when a JVM starts, before `spark.jars` is
    # added to it: the jar goes on the driver's and the executors' classpath itself (a cluster's
    # workers must have it at the same path; docs/engine-lines.md).
    for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
        if comet_jar is None:
            break
        given = [p for p in conf.get(key, "").split(os.pathsep) if p]
        merged[key] = os.pathsep.join(dict.fromkeys([str(comet_jar), *given]))
    return merged


# Settings of the profile's `spark.conf` under which Comet runs nothing natively.
_OFF_SWITCHES = (
    "spark.comet.enabled",
    "spark.comet.exec.enabled",
    "spark.memory.offHeap.enabled",
)


def native_status(
    native: str | None,
    connect: bool,
    conf: Mapping[str, str],
    line: str | None = None,
    machine: Platform | None = None,
) -> str:
    """What `dbt debug` says of native execution: on, or off and why (the checks of
    native_engine, and the profile's own settings that turn it off)."""
    if not native:
        return "off (engine.native is not set: Spark's JVM execution)"
    if line_refusal(native, installed_line().spark if line is None else line) is not None:
        return f"off: {native} runs on the Spark 4.1 line only; the profile's start will fail"
    if connect:
        return "off here: a Spark Connect server runs the queries with its own launch settings"
    problem = platform_problem(this_platform() if machine is None else machine)
    if problem is not None:
        return f"off: {problem}; running on Spark's JVM execution"
    for key in _OFF_SWITCHES:
        if str(conf.get(key, "true")).strip().lower() == "false":
            return f"off: the profile's spark.conf sets {key}=false, so {native} runs nothing"
    return (
        f"{native} on (Comet {COMET_VERSION}); each node's adapter_response says how much of "
        "its plans ran natively"
    )
