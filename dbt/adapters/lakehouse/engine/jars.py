"""Where the JVM jars come from: pinned artifacts, a user cache, and the fetch that fills it.

Every jar comes from its home, Maven Central: the Iceberg Spark runtime and `iceberg-aws-bundle`
(the AWS SDK v2 for S3FileIO and the Glue catalog), `hadoop-aws` of pyspark's own Hadoop version
with the AWS SDK v1 bundle it was built against (S3 through s3a), and the H2 JDBC driver (the
embedded catalog's store). Where Maven Central cannot be reached, each set but the AWS SDK v2
has a fallback through another registry (docs/runtime.md, "Jars"): the Iceberg runtime from a
PyPI wheel, H2 from Debian's `libh2-java`, s3a from a PyPI sdist. Each fetched jar is checked
against a pinned SHA-256 before it is cached; a present, verified jar is never fetched again.
Every cached jar can be replaced by a file of the user's through an env variable, and a profile
that names `spark.jars.packages` coordinates for a set replaces it (Spark resolves those).
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
import zipfile
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
        raise EngineSetupError(f"no source delivered {_names(self)}: " + "; then ".join(failures))

    def _paths(self, source: JarSource, env: Mapping[str, str] | None) -> list[Path]:
        return [self.locate_one(jar, env) or self.cached_path(jar, env) for jar in source.jars]

    def _fetch_into_cache(
        self, source: JarSource, missing: list[PinnedJar], env: Mapping[str, str] | None
    ) -> None:
        with tempfile.TemporaryDirectory(prefix="dbt-lakehouse-") as scratch:
            root = source.fetch(Path(scratch))
            for jar in missing:
                self._cache(source, jar, root / jar.member, env)

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


def maven_repository(env: Mapping[str, str] | None = None) -> str:
    """Maven Central, or the mirror with the same layout that LAKEHOUSE_MAVEN_REPO names."""
    env = os.environ if env is None else env
    return (env.get("LAKEHOUSE_MAVEN_REPO") or MAVEN_CENTRAL).rstrip("/")


def maven_central(
    group: str, artifact: str, version: str, classifier: str = ""
) -> Callable[[Path], Path]:
    """Fetch one jar by its Maven coordinates over Maven's repository layout (plain HTTPS).

    The unpack root holds the jar under its file name, which is the `member` its PinnedJar
    names.
    """
    filename = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"

    def fetch(scratch: Path) -> Path:
        url = f"{maven_repository()}/{group.replace('.', '/')}/{artifact}/{version}/{filename}"
        try:
            # A refused or unroutable repository must hand over to the fallback in seconds.
            with urllib.request.urlopen(url, timeout=30) as response:
                with (scratch / filename).open("wb") as out:
                    shutil.copyfileobj(response, out, 1 << 20)
        except OSError as exc:
            raise EngineSetupError(f"downloading {url} failed: {exc}") from exc
        return scratch

    return fetch


def pip_download_command(requirement: str, dest: Path, wheel: bool = False) -> list[str]:
    """The pip call that fetches a package's artifact without installing it.

    --no-deps: only the artifact itself; the sdist (--no-binary) or the wheel (--only-binary)
    is whichever of the two carries the jars.
    """
    kind = ["--only-binary", ":all:"] if wheel else ["--no-binary", ":all:"]
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        *kind,
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


def _pypi_wheel(requirement: str, members: Iterable[str]) -> Callable[[Path], Path]:
    wanted = set(members)

    def fetch(scratch: Path) -> Path:
        download = scratch / "download"
        _run(pip_download_command(requirement, download, wheel=True), cwd=scratch)
        wheels = sorted(download.glob("*.whl"))
        if not wheels:
            raise EngineSetupError(f"pip download {requirement} produced no wheel")
        root = scratch / "x"
        with zipfile.ZipFile(wheels[0]) as archive:
            for name in wanted & set(archive.namelist()):
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(name) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
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


def maven_jar(
    group: str, artifact: str, version: str, sha256: str, env_override: str, classifier: str = ""
) -> JarSource:
    """One Maven Central artifact as a source, pinned by its sha256."""
    filename = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"
    coordinates = f"{group}:{artifact}:{version}{':' + classifier if classifier else ''}"
    return JarSource(
        origin=f"Maven Central {coordinates}",
        jars=(PinnedJar(filename, sha256, filename, env_override),),
        fetch=maven_central(group, artifact, version, classifier),
    )


def _debian_jar(
    package: str, version: str, member: str, filename: str, sha256: str, env_override: str
) -> JarSource:
    """One jar inside a Debian package, cached under a name of its own: another build than
    Maven Central's, so it never passes for the canonical file."""
    return JarSource(
        origin=f"Debian package {package} {version}",
        jars=(PinnedJar(filename, sha256, member, env_override),),
        fetch=_debian_package(package, version),
    )


def _maven_jars(*sources: JarSource) -> JarSource:
    """Several Maven artifacts as one source: the set is cached whole or not at all."""

    def fetch(scratch: Path) -> Path:
        for source in sources:
            source.fetch(scratch)
        return scratch

    return JarSource(
        origin=" + ".join(source.origin for source in sources),
        jars=tuple(jar for source in sources for jar in source.jars),
        fetch=fetch,
    )


ICEBERG_RUNTIME = f"iceberg-spark-runtime-{SPARK_BINARY_VERSION}_{SCALA_BINARY_VERSION}"
ICEBERG_JARS = CachedJarSet(
    need="iceberg",
    sources=(
        maven_jar(
            "org.apache.iceberg",
            ICEBERG_RUNTIME,
            ICEBERG_VERSION,
            "c562d482dcd16b666e808b755469fbc4b2604284b41622c9d87e2c02b7cc6c5f",
            "LAKEHOUSE_ICEBERG_JAR",
        ),
        # docs/runtime.md, "Iceberg runtime": the same jar, byte for byte, inside a PyPI wheel.
        JarSource(
            origin="PyPI wheel snowpark-connect-deps-iceberg==1.0.2",
            jars=(
                PinnedJar(
                    filename=f"{ICEBERG_RUNTIME}-{ICEBERG_VERSION}.jar",
                    sha256="c562d482dcd16b666e808b755469fbc4b2604284b41622c9d87e2c02b7cc6c5f",
                    member=f"snowpark_connect_deps_iceberg/jars/{ICEBERG_RUNTIME}-{ICEBERG_VERSION}.jar",
                    env_override="LAKEHOUSE_ICEBERG_JAR",
                ),
            ),
            fetch=_pypi_wheel(
                "snowpark-connect-deps-iceberg==1.0.2",
                [f"snowpark_connect_deps_iceberg/jars/{ICEBERG_RUNTIME}-{ICEBERG_VERSION}.jar"],
            ),
        ),
    ),
)

H2_JARS = CachedJarSet(
    need="h2",
    sources=(
        maven_jar(
            "com.h2database",
            "h2",
            "2.1.214",
            "d623cdc0f61d218cf549a8d09f1c391ff91096116b22e2475475fce4fbe72bd0",
            "LAKEHOUSE_H2_JAR",
        ),
        _debian_jar(
            "libh2-java",
            "2.1.214-1",
            member="usr/share/java/h2-2.1.214.jar",
            filename="h2-2.1.214-debian.jar",
            sha256="19654e17771f88dadc5444ca12db2269f2ba8747c00087e18f298dfd53017014",
            env_override="LAKEHOUSE_H2_JAR",
        ),
    ),
)

# The JDBC catalog's driver for a PostgreSQL database (a jdbc depot whose uri is
# jdbc:postgresql:...).
POSTGRESQL_JARS = CachedJarSet(
    need="postgresql",
    sources=(
        maven_jar(
            "org.postgresql",
            "postgresql",
            "42.7.14",
            "73914527305a40cce504b0d3d90b23caf565136912d607ae8ae7c5895512332c",
            "LAKEHOUSE_POSTGRESQL_JAR",
        ),
        _debian_jar(
            "libpostgresql-jdbc-java",
            "42.5.5-0+deb12u1",
            member="usr/share/java/postgresql.jar",
            filename="postgresql-42.5.5-debian.jar",
            sha256="e68b153660caa7f47505d323829e995bd84fec7a30d2160f3ca272f774569a22",
            env_override="LAKEHOUSE_POSTGRESQL_JAR",
        ),
    ),
)

# docs/runtime.md, "S3 through s3a": hadoop-aws of the Hadoop version inside pyspark 3.5's
# wheel (hadoop-client 3.3.4), with the AWS SDK v1 bundle that Hadoop release was built against.
HADOOP_VERSION = "3.3.4"
S3A_JARS = CachedJarSet(
    need="s3a",
    sources=(
        _maven_jars(
            maven_jar(
                "org.apache.hadoop",
                "hadoop-aws",
                HADOOP_VERSION,
                "53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a",
                "LAKEHOUSE_HADOOP_AWS_JAR",
            ),
            maven_jar(
                "com.amazonaws",
                "aws-java-sdk-bundle",
                "1.12.262",
                "873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5",
                "LAKEHOUSE_AWS_SDK_JAR",
            ),
        ),
        # The fallback: hadoop-aws 3.3.1 (works with the 3.3.4 client) inside a PyPI sdist that
        # pins pyspark 3.3.0, so it is downloaded, never installed.
        JarSource(
            origin="PyPI sdist sagemaker_pyspark==1.4.5",
            jars=(
                PinnedJar(
                    filename="hadoop-aws-3.3.1.jar",
                    sha256="6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e",
                    member="deps/jars/hadoop-aws-3.3.1.jar",
                    env_override="LAKEHOUSE_HADOOP_AWS_JAR",
                ),
                PinnedJar(
                    filename="aws-java-sdk-bundle-1.11.901.jar",
                    sha256="b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead",
                    member="deps/jars/aws-java-sdk-bundle-1.11.901.jar",
                    env_override="LAKEHOUSE_AWS_SDK_JAR",
                ),
            ),
            fetch=_pypi_sdist(
                "sagemaker_pyspark==1.4.5",
                ["deps/jars/hadoop-aws-3.3.1.jar", "deps/jars/aws-java-sdk-bundle-1.11.901.jar"],
            ),
        ),
    ),
)

# The AWS SDK v2, unshaded, as Iceberg's S3FileIO and GlueCatalog load it. 1.10.1 is the newest
# 1.10.x bundle Maven Central serves; it holds only the SDK (Iceberg's aws classes are in the
# runtime jar), so it serves the 1.10.2 runtime. No other registry ships the SDK unshaded: there
# is no fallback, and the error names the profile's `spark.jars` instead.
AWS_SDK_V2_JARS = CachedJarSet(
    need="aws-sdk-v2",
    sources=(
        maven_jar(
            "org.apache.iceberg",
            "iceberg-aws-bundle",
            "1.10.1",
            "86bf20892ea5b4c17688f19b075399885f6aa5303f6b2dc9f491e76ceef9633b",
            "LAKEHOUSE_ICEBERG_AWS_BUNDLE_JAR",
        ),
    ),
    required=False,
)

CACHED_JARS: dict[str, CachedJarSet] = {
    s.need: s for s in (ICEBERG_JARS, H2_JARS, POSTGRESQL_JARS, S3A_JARS, AWS_SDK_V2_JARS)
}

# `spark.jars.packages` coordinates (group:artifact prefixes) that replace a set: Spark resolves
# them and their dependencies itself (hadoop-aws brings its SDK bundle).
PACKAGES_REPLACING: dict[str, tuple[str, ...]] = {
    "iceberg": (f"org.apache.iceberg:{ICEBERG_RUNTIME}:",),
    "h2": ("com.h2database:h2:",),
    "postgresql": ("org.postgresql:postgresql:",),
    "s3a": ("org.apache.hadoop:hadoop-aws:",),
    "aws-sdk-v2": ("org.apache.iceberg:iceberg-aws-bundle:", "software.amazon.awssdk:"),
}


def packages_cover(need: str, packages: Iterable[str]) -> bool:
    """True when the profile's `spark.jars.packages` coordinates provide the set `need`."""
    prefixes = PACKAGES_REPLACING.get(need, ())
    return any(p.strip().startswith(prefixes) for p in packages if p.strip())


def iceberg_runtime_jar(env: Mapping[str, str] | None = None) -> Path:
    """The Iceberg Spark runtime jar (override, cached, or fetched into the cache now)."""
    located = ICEBERG_JARS.locate(env)
    if located is not None:
        return located[0]
    return ICEBERG_JARS.install(env)[0]


def resolve_jars(
    needs: Iterable[str],
    extra: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
    packages: Iterable[str] = (),
) -> list[Path]:
    """Paths of every jar the session needs; fetches cached ones on demand.

    `extra` is the profile's `spark.jars`, `packages` its `spark.jars.packages` coordinates: a
    set they provide is not added. Raises one EngineSetupError naming each missing jar and the
    command that installs it.
    """
    env = os.environ if env is None else env
    extra = list(extra)
    packages = list(packages)
    paths: list[Path] = []
    problems: list[str] = []
    for need in sorted(set(needs)):
        if packages_cover(need, packages):
            continue  # Spark resolves the user's coordinates, dependencies included
        if need == "aws-sdk-v2" and extra:
            continue  # user-supplied: we cannot know which of their jars carries the SDK
        if need == "s3a" and user_supplies_hadoop_aws(extra):
            continue  # the user's hadoop-aws comes with the SDK it was built against
        jar_set = CACHED_JARS.get(need)
        if jar_set is None:
            problems.append(f"no source is known for the jar set '{need}'")
            continue
        located = jar_set.locate(env)
        if located is None and fetch_missing:
            try:
                located = jar_set.install(env)
            except EngineSetupError as exc:
                problems.append(
                    f"{_names(jar_set)} ({jar_set.origin}) not in "
                    f"{cache_dir(env) / 'jars'}, and fetching failed: {exc.msg}. "
                    f"Fix: {_fix(jar_set)}"
                )
                continue
        if located is None:
            problems.append(f"{_names(jar_set)} ({jar_set.origin}) missing. Fix: {_fix(jar_set)}")
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


def _fix(jar_set: CachedJarSet) -> str:
    fix = f"run `dbt-lakehouse install`, or set {_overrides(jar_set)} to the jars' paths"
    if jar_set.need == "aws-sdk-v2":
        # No registry but Maven Central ships the SDK v2 unshaded.
        fix += ", or list the bundle under `spark: {jars: [...]}` in the profile"
    coordinates = " / ".join(p.rstrip(":") for p in PACKAGES_REPLACING.get(jar_set.need, ()))
    return f"{fix}, or name {coordinates} in `spark.jars.packages`."


def user_supplies_hadoop_aws(extra: Iterable[str]) -> bool:
    """True when the profile's `spark.jars` already carries a hadoop-aws jar."""
    return any(Path(str(p)).name.startswith("hadoop-aws-") for p in extra)


def _names(jar_set: CachedJarSet) -> str:
    return " + ".join(jar.filename for jar in jar_set.jars)


def _overrides(jar_set: CachedJarSet) -> str:
    return " / ".join(jar.env_override for jar in jar_set.jars)


@dataclass(frozen=True)
class InstallReport:
    cached: list[Path]
    skipped: dict[str, str]  # an optional set no source delivered -> why


def install_all(env: Mapping[str, str] | None = None) -> InstallReport:
    """Fetch every jar set into the cache (the `dbt-lakehouse install` step).

    A required set that no source delivers raises; an optional one is reported as skipped.
    """
    report = InstallReport(cached=[], skipped={})
    for jar_set in CACHED_JARS.values():
        try:
            report.cached.extend(jar_set.install(env))
        except EngineSetupError as exc:
            if jar_set.required:
                raise
            report.skipped[jar_set.need] = exc.msg
    return report
