"""A class-data sharing (CDS) archive of the driver JVM's classes, made once per runtime.

A cold `dbt` run spends seconds of its JVM's start and of its first Iceberg write loading and
verifying Spark's, Hadoop's and Parquet's classes from jars. The JVM can instead map them from
an archive that an earlier run dumped (JDK 13+ dynamic archives). The first run on a runtime
dumps one as its JVM exits (`-XX:ArchiveClassesAtExit`) to a file named after its own process;
a later start, once that process is gone, adopts the file under the runtime's name with an
atomic rename and maps it (`-XX:SharedArchiveFile`). The JVM checks an archive against its own
version and classpath and, under the default `-Xshare:auto`, runs without one that does not
match or is incomplete: a bad archive costs the gain, never the run. Each is about 200 MB, so
one whose runtime is gone or changed (a virtualenv deleted or made again, another java: a
`<key>.runtime` file beside it names the paths and times) is deleted at the next start of any
runtime, as is one not mapped for PRUNE_DAYS. LAKEHOUSE_CLASS_ARCHIVE=0 turns this off.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path

from dbt.adapters.lakehouse.engine.launch import process_running

# A dump is written after its Python process has exited (the JVM outlives it by seconds):
# a file is only adopted once it has not changed for this long.
SETTLE_SECONDS = 30.0
PRUNE_DAYS = 14.0


def runtime_key(java: str, jars: Path | None = None) -> str:
    """What an archive is valid for: this java binary and this pyspark's jars, as installed.
    The JVM checks each jar's size and time against the archive's: a virtualenv made again at
    the same path (or pyspark reinstalled) has new jars, and the folder's time says so. Without
    it the old archive kept its name and was never replaced, and every start ran without one."""
    return _key(_runtime(java, jars))


def _key(runtime: list[str]) -> str:
    return hashlib.sha256("\n".join(runtime).encode()).hexdigest()[:16]


def _runtime(java: str, jars: Path | None = None) -> list[str]:
    """java's path and time, pyspark's version, its jars folder and that folder's time."""
    import pyspark

    java_path = Path(java).resolve()
    jars = jars or Path(pyspark.__file__).parent / "jars"
    return [
        str(java_path),
        str(java_path.stat().st_mtime_ns),
        pyspark.__version__,
        str(jars),
        str(jars.stat().st_mtime_ns),
    ]


def _runtime_gone(described: Path) -> bool:
    """Whether the java or the jars folder a `.runtime` file names is gone or changed: its
    archive can never be mapped again."""
    try:
        java, java_time, _version, jars, jars_time = described.read_text().splitlines()
    except (OSError, ValueError):
        return False  # unreadable or being written: the age rule decides
    for path, recorded in ((java, java_time), (jars, jars_time)):
        try:
            if str(Path(path).stat().st_mtime_ns) != recorded:
                return True
        except OSError:
            return True
    return False


def _finished_dumps(folder: Path, key: str) -> list[Path]:
    """Dumps whose writer is gone and whose file has settled, newest first."""
    finished = []
    for dump in folder.glob(f"{key}.*.dump"):
        pid = dump.suffixes[0].lstrip(".") if len(dump.suffixes) == 2 else ""
        try:
            settled = time.time() - dump.stat().st_mtime > SETTLE_SECONDS
            if (
                pid.isdigit()
                and not process_running(int(pid))
                and settled
                and dump.stat().st_size > 0
            ):
                finished.append(dump)
        except OSError:
            continue
    return sorted(finished, key=lambda p: p.stat().st_mtime, reverse=True)


def _settle(folder: Path, key: str, archive: Path) -> None:
    """Adopt the newest finished dump when there is no archive yet; drop the other ones
    (several processes may each have dumped on a fresh cache)."""
    finished = _finished_dumps(folder, key)
    if finished and not archive.is_file():
        os.replace(finished.pop(0), archive)
    for extra in finished:
        extra.unlink(missing_ok=True)


def _prune(folder: Path, archive: Path) -> None:
    """Delete the archives, dumps and descriptions of runtimes that are gone or changed, and
    archives (and dumps never adopted) not mapped for PRUNE_DAYS (an archive's time is
    touched at each use)."""
    oldest = time.time() - PRUNE_DAYS * 86400
    for described in folder.glob("*.runtime"):
        key = described.name.removesuffix(".runtime")
        if key != archive.stem and _runtime_gone(described):
            for left in [folder / f"{key}.jsa", *folder.glob(f"{key}.*.dump"), described]:
                try:
                    left.unlink(missing_ok=True)
                except OSError:
                    continue  # a read-only cache
    for other in [*folder.glob("*.jsa"), *folder.glob("*.dump")]:
        try:
            if other != archive and other.stat().st_mtime < oldest:
                other.unlink()
                folder.joinpath(f"{other.stem}.runtime").unlink(missing_ok=True)
        except OSError:
            continue  # another process pruned it, or the cache is read-only


def java_options(
    java: str, cache: Path, env: Mapping[str, str], jars: Path | None = None
) -> list[str]:
    """The JVM flags for this start: map the runtime's archive, or dump one at exit."""
    if env.get("LAKEHOUSE_CLASS_ARCHIVE", "1") == "0":
        return []
    try:
        runtime = _runtime(java, jars)
        key = _key(runtime)
        folder = cache / "class-archive"
        folder.mkdir(parents=True, exist_ok=True)
        archive = folder / f"{key}.jsa"
        described = folder / f"{key}.runtime"
        if not described.is_file():
            described.write_text("\n".join(runtime) + "\n")
        _settle(folder, key, archive)
        _prune(folder, archive)
        if archive.is_file():
            os.utime(archive)  # in use: not pruned
            return [f"-XX:SharedArchiveFile={archive}"]
        if any(folder.glob(f"{key}.*.dump")):
            return []  # another run's dump is on its way
        return [f"-XX:ArchiveClassesAtExit={folder / f'{key}.{os.getpid()}.dump'}"]
    except OSError:
        return []  # a read-only or full cache: run without the archive


# A short Spark job in a JVM of its own: SQL parsed and planned, Parquet written and read back,
# a shuffle. Its classes are what every dbt command's JVM loads first; the jars of spark.jars
# (Iceberg's) come through a class loader no archive holds.
_PRIME_JOB = """
import sys, tempfile
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").appName("dbt-lakehouse class archive")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.driver.extraJavaOptions", sys.argv[1]).getOrCreate())
with tempfile.TemporaryDirectory() as folder:
    spark.range(1000).selectExpr("id", "id % 7 as k").write.parquet(folder + "/t")
    spark.sql(f"select k, count(*) from parquet.`{folder}/t` group by k order by k").collect()
with open(sys.argv[2], "w") as pid:
    pid.write(str(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()))
"""


def prime(java: str, cache: Path, env: Mapping[str, str], timeout: float = 300.0) -> str:
    """Make the runtime's archive now, from a short JVM of its own (`dbt-lakehouse install`),
    rather than at the exit of the first command's JVM: a warm engine lives for minutes, and
    every JVM started meanwhile runs without one. One line saying what was done."""
    import subprocess
    import sys
    import tempfile

    if env.get("LAKEHOUSE_CLASS_ARCHIVE", "1") == "0":
        return "class-data archive: off (LAKEHOUSE_CLASS_ARCHIVE=0)"
    key = runtime_key(java)
    folder = cache / "class-archive"
    archive = folder / f"{key}.jsa"
    options = java_options(java, cache, env)
    if archive.is_file() or not options:
        return f"class-data archive: {'ready' if archive.is_file() else 'being written'}"
    dump = Path(options[0].split("=", 1)[1])
    began = time.monotonic()
    child_env = {**env, "JAVA_HOME": str(Path(java).resolve().parent.parent)}
    with tempfile.TemporaryDirectory() as scratch:
        log, pid_file = Path(scratch) / "jvm.log", Path(scratch) / "jvm.pid"
        # Into a file, not a pipe: the JVM keeps its parent's output open while it writes the
        # archive, after the Python process has gone.
        with log.open("wb") as output:
            done = subprocess.run(
                [sys.executable, "-c", _PRIME_JOB, options[0], str(pid_file)],
                env=child_env,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
        pid = pid_file.read_text().strip() if pid_file.is_file() else ""
        if done.returncode != 0 or not pid.isdigit():
            dump.unlink(missing_ok=True)
            said = [x for x in log.read_text(errors="replace").splitlines() if "[cds]" not in x]
            return f"class-data archive: not made (the JVM failed: {' '.join(said[-3:])[-300:]})"
        # The JVM writes the archive as it exits, after its Python process has gone.
        while process_running(int(pid)) and time.monotonic() - began < timeout:
            time.sleep(0.2)
    if process_running(int(pid)) or not dump.is_file() or dump.stat().st_size == 0:
        return "class-data archive: not made (the JVM wrote none); the first command makes one"
    os.replace(dump, archive)
    size = archive.stat().st_size / 1048576
    return f"class-data archive: {archive} ({size:.0f} MB) in {time.monotonic() - began:.0f} s"
