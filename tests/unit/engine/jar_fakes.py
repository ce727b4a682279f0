"""Fakes for the jar-set tests (test_jars.py, test_jar_sources.py, test_jar_install.py): jar
bytes and their checksums, a fetch that counts its calls, a two-jar set, a set whose Maven
Central source is unreachable or tampered with and its fallback."""

from __future__ import annotations

import hashlib
import io
import socket
import tarfile
from collections.abc import Callable
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars import CachedJarSet, JarSource, PinnedJar, maven_central

A_BYTES = b"first jar bytes"
B_BYTES = b"second jar bytes"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_sdist(path: Path, files: dict[str, bytes], top: str = "pkg-1.0") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


class CountingFetch:
    """A fetch that lays out two jars the way an unpacked sdist would, counting its calls."""

    def __init__(self, a: bytes = A_BYTES, b: bytes = B_BYTES) -> None:
        self.calls = 0
        self.a, self.b = a, b

    def __call__(self, scratch: Path) -> Path:
        self.calls += 1
        root = scratch / "x"
        (root / "deps").mkdir(parents=True)
        (root / "deps" / "a.jar").write_bytes(self.a)
        (root / "deps" / "b.jar").write_bytes(self.b)
        return root


def jar_set(fetch: CountingFetch) -> CachedJarSet:
    return CachedJarSet(
        need="pair",
        sources=(
            JarSource(
                origin="a test artifact",
                jars=(
                    PinnedJar("a-1.jar", sha(A_BYTES), "deps/a.jar", "TEST_A_JAR"),
                    PinnedJar("b-1.jar", sha(B_BYTES), "deps/b.jar", "TEST_B_JAR"),
                ),
                fetch=fetch,
            ),
        ),
    )


def one_jar_source(
    origin: str, filename: str, data: bytes, fetch: Callable[[Path], Path]
) -> JarSource:
    return JarSource(origin, (PinnedJar(filename, sha(data), filename, "TEST_TOOL"),), fetch)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def maven_then_fallback(fallback: CountingFetch) -> CachedJarSet:
    return CachedJarSet(
        need="tool",
        sources=(
            one_jar_source(
                "Maven Central org.example:tool:2.0",
                "tool-2.0.jar",
                A_BYTES,
                maven_central("org.example", "tool", "2.0"),
            ),
            one_jar_source("a fallback registry", "a-fallback.jar", A_BYTES, fallback),
        ),
    )


class FallbackFetch(CountingFetch):
    def __call__(self, scratch: Path) -> Path:
        self.calls += 1
        (scratch / "a-fallback.jar").write_bytes(self.a)
        return scratch
