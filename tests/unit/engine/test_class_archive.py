"""The driver JVM's class archive: dumped once, adopted when its writer is gone, then mapped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine import class_archive as classarchive


@pytest.fixture
def java(tmp_path: Path) -> str:
    binary = tmp_path / "java"
    binary.write_text("#!/bin/sh\n")
    return str(binary)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def aged(path: Path, seconds: float = classarchive.SETTLE_SECONDS + 5) -> Path:
    past = time.time() - seconds
    os.utime(path, (past, past))
    return path


def test_a_fresh_cache_dumps_at_exit_under_this_process(java: str, tmp_path: Path) -> None:
    [option] = classarchive.java_options(java, tmp_path, {})
    key = classarchive.runtime_key(java)
    assert option == f"-XX:ArchiveClassesAtExit={tmp_path}/class-archive/{key}.{os.getpid()}.dump"


def test_a_settled_dump_of_a_finished_run_is_adopted_and_mapped(java: str, tmp_path: Path) -> None:
    key = classarchive.runtime_key(java)
    folder = tmp_path / "class-archive"
    folder.mkdir()
    newest, older = folder / f"{key}.{dead_pid()}.dump", folder / f"{key}.{dead_pid()}.dump"
    newest.write_bytes(b"newest")
    older.write_bytes(b"older")
    aged(newest)
    aged(older, 3600)
    [option] = classarchive.java_options(java, tmp_path, {})
    assert option == f"-XX:SharedArchiveFile={folder / f'{key}.jsa'}"
    assert (folder / f"{key}.jsa").read_bytes() == b"newest"
    assert not list(folder.glob("*.dump"))  # the other run's dump is dropped, not kept


def test_a_dump_still_being_written_is_left_alone(java: str, tmp_path: Path) -> None:
    key = classarchive.runtime_key(java)
    folder = tmp_path / "class-archive"
    folder.mkdir()
    running = folder / f"{key}.{os.getpid()}.dump"  # this process is alive
    running.write_bytes(b"partial")
    aged(running)
    fresh = folder / f"{key}.{dead_pid()}.dump"  # its JVM may still be writing
    fresh.write_bytes(b"partial")
    assert classarchive.java_options(java, tmp_path, {}) == []
    assert running.is_file() and fresh.is_file()
    assert not (folder / f"{key}.jsa").exists()


def test_another_java_has_its_own_archive(java: str, tmp_path: Path) -> None:
    other = tmp_path / "other-java"
    other.write_text("#!/bin/sh\n")
    assert classarchive.runtime_key(java) != classarchive.runtime_key(str(other))


def test_switched_off(java: str, tmp_path: Path) -> None:
    assert classarchive.java_options(java, tmp_path, {"LAKEHOUSE_CLASS_ARCHIVE": "0"}) == []
    assert not (tmp_path / "class-archive").exists()


def test_pyspark_installed_again_at_the_same_path_gets_a_new_archive(
    java: str, tmp_path: Path
) -> None:
    # The JVM refuses an archive whose jars changed; the key must change with them.
    jars = tmp_path / "jars"
    jars.mkdir()
    before = classarchive.runtime_key(java, jars)
    jars.rmdir()
    jars.mkdir()
    os.utime(jars, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert classarchive.runtime_key(java, jars) != before


def test_archives_unused_for_weeks_are_deleted_and_the_one_in_use_kept(
    java: str, tmp_path: Path
) -> None:
    folder = tmp_path / "class-archive"
    folder.mkdir()
    key = classarchive.runtime_key(java)
    mapped = folder / f"{key}.jsa"
    stale, recent = folder / "0123456789abcdef.jsa", folder / "fedcba9876543210.jsa"
    for archive in (mapped, stale, recent):
        archive.write_bytes(b"archive")
    aged(stale, (classarchive.PRUNE_DAYS + 1) * 86400)
    aged(recent, 86400)
    aged(mapped, 30 * 86400)
    [option] = classarchive.java_options(java, tmp_path, {})
    assert option == f"-XX:SharedArchiveFile={mapped}"
    assert sorted(p.name for p in folder.glob("*.jsa")) == sorted([mapped.name, recent.name])
    assert time.time() - mapped.stat().st_mtime < 60  # touched: in use


def test_priming_does_nothing_when_switched_off_or_already_there(java: str, tmp_path: Path) -> None:
    # A real prime starts a JVM: `dbt-lakehouse install` runs it (scripts/install-tests.sh).
    off = classarchive.prime(java, tmp_path, {"LAKEHOUSE_CLASS_ARCHIVE": "0"})
    assert off == "class-data archive: off (LAKEHOUSE_CLASS_ARCHIVE=0)"
    folder = tmp_path / "class-archive"
    folder.mkdir()
    (folder / f"{classarchive.runtime_key(java)}.jsa").write_bytes(b"archive")
    assert classarchive.prime(java, tmp_path, {}) == "class-data archive: ready"


def test_archives_of_runtimes_gone_or_made_again_are_deleted_at_once(
    java: str, tmp_path: Path
) -> None:
    """A virtualenv deleted, or made again at its path (CI's fresh clone), leaves an archive no
    JVM can map: ~200 MB each, deleted at the next start of any runtime, not after 14 days."""
    cache = tmp_path / "cache"
    jars = {name: tmp_path / name / "jars" for name in ("deleted", "remade", "kept")}
    keys = {}
    for name, folder in jars.items():
        folder.mkdir(parents=True)
        classarchive.java_options(java, cache, {}, jars=folder)  # writes its `.runtime`
        keys[name] = classarchive.runtime_key(java, folder)
        archives = cache / "class-archive"
        (archives / f"{keys[name]}.jsa").write_bytes(b"archive")
        (archives / f"{keys[name]}.{dead_pid()}.dump").write_bytes(b"dump")
    (jars["deleted"]).rmdir()
    os.utime(jars["remade"], ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    current = tmp_path / "current" / "jars"
    current.mkdir(parents=True)
    classarchive.java_options(java, cache, {}, jars=current)
    left = sorted(p.name for p in (cache / "class-archive").iterdir())
    assert [n for n in left if n.startswith(keys["kept"])] != []
    assert [n for n in left if n.startswith((keys["deleted"], keys["remade"]))] == []
    assert f"{keys['kept']}.jsa" in left
