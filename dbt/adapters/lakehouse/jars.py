"""Where the JVM jars come from: pinned artifacts, a user cache, and the fetch that fills it.

Maven Central is not assumed reachable, so every jar comes from a package registry: the Iceberg
runtime from a pip-installed wheel, the H2 JDBC driver (the embedded catalog's store) from
Debian's `libh2-java`, and S3 through s3a (hadoop-aws + the AWS SDK v1 bundle) from the PyPI
sdist of `sagemaker_pyspark`, downloaded with pip and never installed. Each fetched jar is
checked against a pinned SHA-256 before it is cached; a present, verified jar is never fetched
again. Every cached jar can be replaced by a file of the user's through an env variable.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.exceptions import EngineSetupError

ICEBERG_VERSION = "1.10.2"
SPARK_BINARY_VERSION = "3.5"
SCALA_BINARY_VERSION = "2.12"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("LAKEHOUSE_CACHE_DIR"):
        return Path(env["LAKEHOUSE_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbt-lakehouse"


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
    member: str  # its path inside what the set's fetch unpacks
    env_override: str  # an env var naming a jar file to use instead


@dataclass(frozen=True)
class CachedJarSet:
    """Jars that come from one registry artifact: one download serves all of them.

    `need` is the logical name a Spark conf plan asks for (sparkconf.SparkConfPlan.jar_needs).
    """

    need: str
    origin: str  # shown to the user: where the jars come from
    jars: tuple[PinnedJar, ...]
    fetch: Callable[[Path], Path]  # downloads into a scratch folder, returns the unpack root

    def cached_path(self, jar: PinnedJar, env: Mapping[str, str] | None = None) -> Path:
        return cache_dir(env) / "jars" / jar.filename

    def locate_one(self, jar: PinnedJar, env: Mapping[str, str] | None = None) -> Path | None:
        env = os.environ if env is None else env
        if env.get(jar.env_override):
            return Path(env[jar.env_override]).expanduser()
        path = self.cached_path(jar, env)
        return path if path.is_file() else None

    def locate(self, env: Mapping[str, str] | None = None) -> list[Path] | None:
        """Every jar of the set (override or cached copy), or None when any is missing."""
        found = [self.locate_one(jar, env) for jar in self.jars]
        return None if any(p is None for p in found) else [p for p in found if p is not None]

    def _missing(self, env: Mapping[str, str] | None) -> list[PinnedJar]:
        env = os.environ if env is None else env
        return [
            jar
            for jar in self.jars
            if not env.get(jar.env_override)
            and not _verified(self.cached_path(jar, env), jar.sha256)
        ]

    def install(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """Fetch, verify and cache the set; a no-op when every jar is present and verified.

        A jar named by its env override is the user's choice and is neither fetched nor checked.
        """
        if not self._missing(env):
            return self.locate(env) or []
        folder = cache_dir(env) / "jars"
        folder.mkdir(parents=True, exist_ok=True)
        # Parallel installs (test workers, several dbt processes) download once, not N times.
        with _exclusive(folder / f".{self.need}.lock"):
            missing = self._missing(env)
            if missing:
                with tempfile.TemporaryDirectory(prefix="dbt-lakehouse-") as scratch:
                    root = self.fetch(Path(scratch))
                    for jar in missing:
                        self._cache(jar, root / jar.member, env)
        return self.locate(env) or []

    def _cache(self, jar: PinnedJar, fetched: Path, env: Mapping[str, str] | None) -> None:
        if not fetched.is_file():
            raise EngineSetupError(
                f"{jar.filename} is not in {self.origin} (looked for {jar.member}). "
                "The file was not cached."
            )
        actual = sha256_of(fetched)
        if actual != jar.sha256:
            raise EngineSetupError(
                f"Checksum mismatch for {jar.filename} from {self.origin}: expected "
                f"sha256 {jar.sha256}, got {actual}. The file was not cached."
            )
        target = self.cached_path(jar, env)
        # Copy then rename so a concurrent reader never sees a half-written jar.
        partial = target.with_suffix(".partial")
        shutil.copyfile(fetched, partial)
        partial.replace(target)


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


def _run(command: list[str], cwd: Path) -> None:
    try:
        subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as exc:
        raise EngineSetupError(f"`{command[0]}` is not available: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise EngineSetupError(f"`{' '.join(command)}` took over {exc.timeout} s") from exc
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise EngineSetupError(
            f"`{' '.join(command)}` failed (exit {exc.returncode}): {' | '.join(detail)}"
        ) from exc


def _debian_package(package: str, version: str) -> Callable[[Path], Path]:
    def fetch(scratch: Path) -> Path:
        # `apt-get download` needs no root and installs nothing system-wide.
        _run(["apt-get", "download", f"{package}={version}"], cwd=scratch)
        debs = sorted(scratch.glob(f"{package}_*.deb"))
        if not debs:
            raise EngineSetupError(f"apt-get download {package}={version} produced no .deb")
        _run(["dpkg-deb", "-x", str(debs[0]), str(scratch / "x")], cwd=scratch)
        return scratch / "x"

    return fetch


MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


def maven_central(
    group: str, artifact: str, version: str, classifier: str = ""
) -> Callable[[Path], Path]:
    """Fetch one jar by its Maven coordinates over Maven's repository layout (plain HTTPS).

    LAKEHOUSE_MAVEN_REPO points at a mirror with the same layout. The unpack root holds the
    jar under its file name, which is the `member` its PinnedJar names.
    """
    filename = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"

    def fetch(scratch: Path) -> Path:
        repo = os.environ.get("LAKEHOUSE_MAVEN_REPO", MAVEN_CENTRAL).rstrip("/")
        url = f"{repo}/{group.replace('.', '/')}/{artifact}/{version}/{filename}"
        try:
            with urllib.request.urlopen(url, timeout=300) as response:
                with (scratch / filename).open("wb") as out:
                    shutil.copyfileobj(response, out, 1 << 20)
        except OSError as exc:
            raise EngineSetupError(f"downloading {url} failed: {exc}") from exc
        return scratch

    return fetch


def pip_download_command(requirement: str, dest: Path) -> list[str]:
    """The pip call that fetches a package's source distribution without installing it.

    --no-deps: only the artifact itself; --no-binary: the sdist, which is what carries the jars.
    """
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(dest),
        requirement,
    ]


def _pypi_sdist(requirement: str, members: Iterable[str]) -> Callable[[Path], Path]:
    wanted = tuple(members)

    def fetch(scratch: Path) -> Path:
        download = scratch / "download"
        _run(pip_download_command(requirement, download), cwd=scratch)
        archives = sorted(download.glob("*.tar.gz"))
        if not archives:
            raise EngineSetupError(f"pip download {requirement} produced no .tar.gz sdist")
        root = scratch / "x"
        extract_members(archives[0], wanted, root)
        archives[0].unlink()  # 181 MB: the scratch folder should not hold it twice
        return root

    return fetch


def extract_members(archive: Path, members: Iterable[str], root: Path) -> None:
    """Unpack only `members` (paths below the sdist's top folder) from a .tar.gz into root.

    The sdist's own top folder (`name-version/`) is dropped; names that would leave `root`
    are refused.
    """
    wanted = set(members)
    with tarfile.open(archive, "r:gz") as tar:
        for info in tar:
            inner = info.name.partition("/")[2]
            if inner not in wanted or not info.isfile():
                continue
            target = (root / inner).resolve()
            if not target.is_relative_to(root.resolve()):
                raise EngineSetupError(f"{archive.name} holds an unsafe path: {info.name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(info)
            if source is None:
                continue
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)


H2_JARS = CachedJarSet(
    need="h2",
    origin="Debian package libh2-java 2.1.214-1",
    jars=(
        PinnedJar(
            filename="h2-2.1.214.jar",
            sha256="19654e17771f88dadc5444ca12db2269f2ba8747c00087e18f298dfd53017014",
            member="usr/share/java/h2-2.1.214.jar",
            env_override="LAKEHOUSE_H2_JAR",
        ),
    ),
    fetch=_debian_package("libh2-java", "2.1.214-1"),
)

# docs/runtime.md, "S3 through s3a": hadoop-aws matching pyspark's hadoop-client 3.3.x, with
# the AWS SDK v1 it was built against. The sdist pins pyspark 3.3.0, so it is downloaded, never
# installed.
_S3A_MEMBERS = {
    "hadoop-aws-3.3.1.jar": "deps/jars/hadoop-aws-3.3.1.jar",
    "aws-java-sdk-bundle-1.11.901.jar": "deps/jars/aws-java-sdk-bundle-1.11.901.jar",
}
S3A_JARS = CachedJarSet(
    need="s3a",
    origin="PyPI sdist sagemaker_pyspark==1.4.5",
    jars=(
        PinnedJar(
            filename="hadoop-aws-3.3.1.jar",
            sha256="6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e",
            member=_S3A_MEMBERS["hadoop-aws-3.3.1.jar"],
            env_override="LAKEHOUSE_HADOOP_AWS_JAR",
        ),
        PinnedJar(
            filename="aws-java-sdk-bundle-1.11.901.jar",
            sha256="b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead",
            member=_S3A_MEMBERS["aws-java-sdk-bundle-1.11.901.jar"],
            env_override="LAKEHOUSE_AWS_SDK_JAR",
        ),
    ),
    fetch=_pypi_sdist("sagemaker_pyspark==1.4.5", _S3A_MEMBERS.values()),
)

CACHED_JARS: dict[str, CachedJarSet] = {s.need: s for s in (H2_JARS, S3A_JARS)}


def iceberg_runtime_jar(env: Mapping[str, str] | None = None) -> Path:
    """The Iceberg Spark runtime, from the `snowpark-connect-deps-iceberg` wheel."""
    env = os.environ if env is None else env
    if env.get("LAKEHOUSE_ICEBERG_JAR"):
        return Path(env["LAKEHOUSE_ICEBERG_JAR"]).expanduser()
    name = (
        f"iceberg-spark-runtime-{SPARK_BINARY_VERSION}_{SCALA_BINARY_VERSION}-{ICEBERG_VERSION}.jar"
    )
    try:
        import snowpark_connect_deps_iceberg as deps
    except ImportError as exc:
        raise EngineSetupError(
            "The Iceberg runtime jar comes from the Python package "
            "`snowpark-connect-deps-iceberg==1.0.2`, which is not installed. Fix: "
            "`pip install snowpark-connect-deps-iceberg==1.0.2` (or reinstall dbt-lakehouse), "
            "or point LAKEHOUSE_ICEBERG_JAR at an iceberg-spark-runtime-3.5_2.12 jar."
        ) from exc
    return Path(deps.get_jars_dir()) / name


def resolve_jars(
    needs: Iterable[str],
    extra: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
) -> list[Path]:
    """Paths of every jar the session needs; fetches cached ones on demand.

    Raises one EngineSetupError naming each missing jar and the command that installs it.
    """
    env = os.environ if env is None else env
    extra = list(extra)
    paths: list[Path] = []
    problems: list[str] = []
    for need in sorted(set(needs)):
        if need == "aws-sdk-v2" and extra:
            continue  # user-supplied: we cannot know which of their jars carries the SDK
        if need == "iceberg":
            paths.append(iceberg_runtime_jar(env))
            continue
        if need == "s3a" and user_supplies_hadoop_aws(extra):
            continue  # the user's hadoop-aws comes with the SDK it was built against
        jar_set = CACHED_JARS.get(need)
        if jar_set is None:
            problems.append(_user_supplied_hint(need))
            continue
        located = jar_set.locate(env)
        if located is None and fetch_missing:
            try:
                located = jar_set.install(env)
            except EngineSetupError as exc:
                problems.append(
                    f"{_names(jar_set)} ({jar_set.origin}) not in "
                    f"{cache_dir(env) / 'jars'}, and fetching failed: {exc.msg}. Fix: run "
                    f"`dbt-lakehouse install`, or set {_overrides(jar_set)} to the jars' paths."
                )
                continue
        if located is None:
            problems.append(
                f"{_names(jar_set)} ({jar_set.origin}) missing. Fix: run `dbt-lakehouse "
                f"install`, or set {_overrides(jar_set)} to the jars' paths."
            )
            continue
        paths.extend(located)
    paths.extend(Path(p).expanduser() for p in extra)
    missing_files = [p for p in paths if not p.is_file()]
    problems.extend(f"jar file not found: {p}" for p in missing_files)
    if problems:
        raise EngineSetupError(
            "Spark cannot start, jars are missing:\n  - " + "\n  - ".join(problems)
        )
    return paths


def _user_supplied_hint(need: str) -> str:
    if need == "aws-sdk-v2":
        return (
            "the Glue catalog and S3FileIO need the AWS SDK v2 (e.g. iceberg-aws-bundle-1.10.2.jar"
            "), which no package registry ships: list it under `spark: {jars: [...]}` in the "
            "profile"
        )
    return f"no source is known for the jar set '{need}'"


def user_supplies_hadoop_aws(extra: Iterable[str]) -> bool:
    """True when the profile's `spark.jars` already carries a hadoop-aws jar."""
    return any(Path(str(p)).name.startswith("hadoop-aws-") for p in extra)


def _names(jar_set: CachedJarSet) -> str:
    return " + ".join(jar.filename for jar in jar_set.jars)


def _overrides(jar_set: CachedJarSet) -> str:
    return " / ".join(jar.env_override for jar in jar_set.jars)


def install_all(env: Mapping[str, str] | None = None) -> list[Path]:
    """Fetch every registry-sourced jar into the cache (the `dbt-lakehouse install` step)."""
    return [path for jar_set in CACHED_JARS.values() for path in jar_set.install(env)]
