"""Jar sets: pinned checksums, one fetch per set, the no-op when cached, env overrides, Maven
Central first and each set's fallback registry when it cannot be reached."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import socket
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.jars import (
    CACHED_JARS,
    HADOOP_VERSION,
    ICEBERG_RUNTIME,
    MAVEN_CENTRAL,
    S3A_JARS,
    CachedJarSet,
    JarSource,
    PinnedJar,
    extract_members,
    maven_central,
    packages_cover,
    pip_download_command,
    resolve_jars,
    user_supplies_hadoop_aws,
)
from dbt.adapters.lakehouse.engine.jars.sets import LINE
from dbt.adapters.lakehouse.exceptions import EngineSetupError

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


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"LAKEHOUSE_CACHE_DIR": str(tmp_path / "cache")}


def test_one_fetch_serves_the_whole_set(env: dict[str, str]) -> None:
    fetch = CountingFetch()
    pair = jar_set(fetch)
    assert pair.locate(env) is None
    paths = pair.install(env)
    assert fetch.calls == 1
    assert [p.name for p in paths] == ["a-1.jar", "b-1.jar"]
    assert [p.read_bytes() for p in paths] == [A_BYTES, B_BYTES]
    assert pair.locate(env) == paths


def test_install_is_a_noop_when_present_and_verified(env: dict[str, str]) -> None:
    fetch = CountingFetch()
    pair = jar_set(fetch)
    pair.install(env)
    pair.install(env)
    assert fetch.calls == 1


def test_a_corrupted_cached_jar_is_fetched_again(env: dict[str, str]) -> None:
    fetch = CountingFetch()
    pair = jar_set(fetch)
    a_path, _ = pair.install(env)
    a_path.write_bytes(b"truncated")
    pair.install(env)
    assert fetch.calls == 2
    assert a_path.read_bytes() == A_BYTES


def test_checksum_mismatch_caches_nothing(env: dict[str, str]) -> None:
    pair = jar_set(CountingFetch(b=b"tampered"))
    with pytest.raises(EngineSetupError) as info:
        pair.install(env)
    message = info.value.msg
    assert "Checksum mismatch for b-1.jar from a test artifact" in message
    assert sha(b"tampered") in message
    assert not pair.cached_path(pair.jars[1], env).exists()


def test_a_member_missing_from_the_artifact_is_named(env: dict[str, str]) -> None:
    only_c = (PinnedJar("c.jar", sha(b""), "deps/c.jar", "X"),)
    pair = CachedJarSet("one", (JarSource("a test artifact", only_c, CountingFetch()),))
    with pytest.raises(EngineSetupError, match=r"c\.jar is not in a test artifact"):
        pair.install(env)


def test_env_override_is_used_and_not_fetched(env: dict[str, str], tmp_path: Path) -> None:
    own = tmp_path / "my-a.jar"
    own.write_bytes(b"the user's own build")
    fetch = CountingFetch()
    pair = jar_set(fetch)
    env = {**env, "TEST_A_JAR": str(own)}
    paths = pair.install(env)
    assert paths[0] == own
    assert paths[1].name == "b-1.jar"
    assert fetch.calls == 1  # b was still missing
    pair.install(env)
    assert fetch.calls == 1


def test_extract_members_takes_only_the_named_files(tmp_path: Path) -> None:
    archive = make_sdist(
        tmp_path / "pkg.tar.gz",
        {"deps/jars/a.jar": A_BYTES, "deps/jars/other.jar": b"x", "setup.py": b""},
    )
    root = tmp_path / "out"
    extract_members(archive, ["deps/jars/a.jar"], root)
    assert (root / "deps/jars/a.jar").read_bytes() == A_BYTES
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["a.jar"]


def test_extract_members_refuses_paths_that_leave_the_folder(tmp_path: Path) -> None:
    archive = make_sdist(tmp_path / "evil.tar.gz", {"../escape.jar": b"x"})
    with pytest.raises(EngineSetupError, match="unsafe path"):
        extract_members(archive, ["../escape.jar"], tmp_path / "out")
    assert not (tmp_path / "escape.jar").exists()


def test_pip_download_never_installs_and_takes_the_sdist(tmp_path: Path) -> None:
    command = pip_download_command("sagemaker_pyspark==1.4.5", tmp_path)
    assert command[1:4] == ["-m", "pip", "download"]
    assert "install" not in command
    assert "--no-deps" in command
    assert command[command.index("--no-binary") + 1] == ":all:"
    assert command[-1] == "sagemaker_pyspark==1.4.5"
    wheel = pip_download_command("snowpark-connect-deps-iceberg==1.0.2", tmp_path, wheel=True)
    assert wheel[wheel.index("--only-binary") + 1] == ":all:"
    assert "--no-binary" not in wheel and "install" not in wheel


@pytest.mark.skipif(LINE.spark != "3.5", reason="Spark 3.5's Hadoop 3.3 and its SDK v1")
def test_s3a_set_is_hadoop_aws_of_pysparks_hadoop_with_its_sdk() -> None:
    assert CACHED_JARS["s3a"] is S3A_JARS
    assert [j.filename for j in S3A_JARS.jars] == [
        f"hadoop-aws-{HADOOP_VERSION}.jar",
        "aws-java-sdk-bundle-1.12.262.jar",
    ]
    assert [j.filename for j in S3A_JARS.sources[1].jars] == [
        "hadoop-aws-3.3.1.jar",
        "aws-java-sdk-bundle-1.11.901.jar",
    ]
    for source in S3A_JARS.sources:
        assert [j.env_override for j in source.jars] == [
            "LAKEHOUSE_HADOOP_AWS_JAR",
            "LAKEHOUSE_AWS_SDK_JAR",
        ]


def test_hadoop_aws_matches_the_hadoop_inside_the_installed_pyspark() -> None:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    [client] = jars.glob("hadoop-client-api-*.jar")
    assert client.name == f"hadoop-client-api-{HADOOP_VERSION}.jar"


def test_every_set_comes_from_maven_central_first_pinned_by_sha256() -> None:
    # Comet (native execution) is offered, and so fetched, on the 4.1 line only.
    comet = [] if LINE.spark == "3.5" else ["comet"]
    assert sorted(CACHED_JARS) == [
        "abfs",
        "aws-sdk-v2",
        "azure-sdk",
        *comet,
        "gcp-bundle",
        "gcs-connector",
        "h2",
        "iceberg",
        "postgresql",
        "s3a",
        "sqlite",
    ]
    for jar_set in CACHED_JARS.values():
        assert jar_set.sources[0].origin.startswith("Maven Central ")
        for source in jar_set.sources:
            assert all(len(j.sha256) == 64 for j in source.jars)
        # Each source's file names are its own: one registry's build never passes as another's.
        names = [{j.filename: j.sha256 for j in s.jars} for s in jar_set.sources]
        for first, second in zip(names, names[1:], strict=False):
            shared = first.keys() & second.keys()
            assert all(first[n] == second[n] for n in shared)
    # The cloud SDKs, hadoop-azure and the GCS connector have no registry but Maven Central,
    # and being optional they never fail `dbt-lakehouse install`. Nor has Iceberg 1.12's runtime
    # (PyPI's copy is of 1.10.2), which every session needs, nor the SQLite driver (Debian's
    # build lacks the native libraries, sets.py).
    only_maven = sorted(n for n, s in CACHED_JARS.items() if len(s.sources) == 1)
    optional = ["abfs", "aws-sdk-v2", "azure-sdk", *comet, "gcp-bundle", "gcs-connector"]
    required = ["iceberg", "sqlite"] + ([] if LINE.spark == "3.5" else ["s3a"])
    assert only_maven == sorted([*optional, *required])
    assert not any(CACHED_JARS[n].required for n in optional)


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


def test_unreachable_maven_central_falls_back(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", f"http://127.0.0.1:{closed_port()}/maven2")
    fallback = FallbackFetch()
    tool = maven_then_fallback(fallback)
    [cached] = tool.install(env)
    assert cached.name == "a-fallback.jar"
    assert cached.read_bytes() == A_BYTES
    assert fallback.calls == 1
    assert tool.locate(env) == [cached]
    tool.install(env)  # Maven Central still unreachable: the cached fallback serves, no fetch
    assert fallback.calls == 1


def test_maven_central_replaces_a_cached_fallback_once_reachable(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", f"http://127.0.0.1:{closed_port()}/maven2")
    tool = maven_then_fallback(FallbackFetch())
    tool.install(env)
    repo = tmp_path / "repo"
    (repo / "org/example/tool/2.0").mkdir(parents=True)
    (repo / "org/example/tool/2.0/tool-2.0.jar").write_bytes(A_BYTES)
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", repo.as_uri())
    [cached] = tool.install(env)
    assert cached.name == "tool-2.0.jar"
    assert tool.locate(env) == [cached]  # the canonical jar wins over the fallback's copy


def test_a_tampered_maven_jar_falls_back_and_both_failures_are_named(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "org/example/tool/2.0").mkdir(parents=True)
    (repo / "org/example/tool/2.0/tool-2.0.jar").write_bytes(b"tampered")
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", repo.as_uri())
    fallback = FallbackFetch(a=b"also wrong")
    with pytest.raises(EngineSetupError) as info:
        maven_then_fallback(fallback).install(env)
    message = info.value.msg
    assert "Maven Central org.example:tool:2.0: Checksum mismatch for tool-2.0.jar" in message
    assert "then a fallback registry: Checksum mismatch for a-fallback.jar" in message
    assert fallback.calls == 1
    assert not list((Path(env["LAKEHOUSE_CACHE_DIR"]) / "jars").glob("*.jar"))


def test_spark_jars_packages_replace_the_sets_they_name(env: dict[str, str]) -> None:
    packages = [
        f"org.apache.iceberg:{ICEBERG_RUNTIME}:1.10.2",
        " org.apache.hadoop:hadoop-aws:3.3.4",
    ]
    assert packages_cover("iceberg", packages)
    assert packages_cover("s3a", packages)
    assert not packages_cover("h2", packages)
    assert packages_cover("aws-sdk-v2", ["software.amazon.awssdk:bundle:2.29.0"])
    assert not packages_cover("iceberg", ["org.apache.iceberg:iceberg-aws-bundle:1.12.0"])
    # Nothing cached and no fetching: the covered sets need no jar of ours.
    assert resolve_jars(["iceberg", "s3a"], env=env, fetch_missing=False, packages=packages) == []
    with pytest.raises(EngineSetupError, match=r"h2-2\.1\.214\.jar .*com\.h2database:h2"):
        resolve_jars(["iceberg", "h2"], env=env, fetch_missing=False, packages=packages)


def test_the_sdk_v2_error_names_maven_central_and_the_profile_route(env: dict[str, str]) -> None:
    with pytest.raises(EngineSetupError) as info:
        resolve_jars(["aws-sdk-v2"], env=env, fetch_missing=False)
    message = info.value.msg
    assert "iceberg-aws-bundle-1.12.0.jar (Maven Central org.apache.iceberg" in message
    assert "`spark: {jars: [...]}`" in message
    assert MAVEN_CENTRAL.startswith("https://repo1.maven.org")


@pytest.mark.skipif(LINE.spark != "3.5", reason="Spark 3.5's Hadoop 3.3 and its SDK v1")
def test_resolve_uses_overrides_for_s3a(tmp_path: Path, env: dict[str, str]) -> None:
    aws, sdk = tmp_path / "hadoop-aws-x.jar", tmp_path / "sdk-x.jar"
    aws.write_bytes(b"a")
    sdk.write_bytes(b"b")
    env = {**env, "LAKEHOUSE_HADOOP_AWS_JAR": str(aws), "LAKEHOUSE_AWS_SDK_JAR": str(sdk)}
    assert resolve_jars(["s3a"], env=env, fetch_missing=False) == [aws, sdk]


@pytest.mark.skipif(LINE.spark != "3.5", reason="Spark 3.5's Hadoop 3.3 and its SDK v1")
def test_resolve_names_every_missing_s3a_jar_and_the_fix(env: dict[str, str]) -> None:
    with pytest.raises(EngineSetupError) as info:
        resolve_jars(["s3a"], env=env, fetch_missing=False)
    message = info.value.msg
    assert "hadoop-aws-3.3.4.jar + aws-java-sdk-bundle-1.12.262.jar" in message
    assert "dbt-lakehouse install" in message
    assert "LAKEHOUSE_HADOOP_AWS_JAR / LAKEHOUSE_AWS_SDK_JAR" in message


def test_user_supplied_hadoop_aws_replaces_the_s3a_set(tmp_path: Path, env: dict[str, str]) -> None:
    theirs = [tmp_path / "hadoop-aws-3.3.4.jar", tmp_path / "aws-java-sdk-bundle-1.12.262.jar"]
    for path in theirs:
        path.write_bytes(b"jar")
    assert user_supplies_hadoop_aws([str(p) for p in theirs])
    assert not user_supplies_hadoop_aws(["/x/iceberg-aws-bundle-1.10.2.jar"])
    # Nothing cached and no fetching: only the user's jars are returned, no error.
    assert resolve_jars(["s3a"], [str(p) for p in theirs], env=env, fetch_missing=False) == theirs


def test_maven_fetch_follows_the_repository_layout(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    folder = repo / "org" / "example" / "tool" / "2.0"
    folder.mkdir(parents=True)
    (folder / "tool-2.0-all.jar").write_bytes(A_BYTES)
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", repo.as_uri())
    tool = CachedJarSet(
        "tool",
        (
            one_jar_source(
                "a test repository",
                "tool-2.0-all.jar",
                A_BYTES,
                maven_central("org.example", "tool", "2.0", "all"),
            ),
        ),
    )
    [cached] = tool.install(env)
    assert cached.read_bytes() == A_BYTES


def test_maven_fetch_names_the_url_it_could_not_get(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", (tmp_path / "empty").as_uri())
    tool = CachedJarSet(
        "tool",
        (
            one_jar_source(
                "a test repository",
                "tool-2.0.jar",
                A_BYTES,
                maven_central("org.example", "tool", "2.0"),
            ),
        ),
    )
    with pytest.raises(EngineSetupError, match=r"org/example/tool/2\.0/tool-2\.0\.jar failed"):
        tool.install(env)


def test_install_skips_an_optional_set_no_source_delivers(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # install_all reads CACHED_JARS in the module it is defined in.
    from dbt.adapters.lakehouse.engine.jars import resolve

    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", f"http://127.0.0.1:{closed_port()}/maven2")
    required = maven_then_fallback(FallbackFetch())
    optional = CachedJarSet(
        "sdk",
        (
            one_jar_source(
                "Maven Central org.example:sdk:2.0",
                "sdk-2.0.jar",
                B_BYTES,
                maven_central("org.example", "sdk", "2.0"),
            ),
        ),
        required=False,
    )
    monkeypatch.setattr(resolve, "CACHED_JARS", {"tool": required, "sdk": optional})
    report = resolve.install_all(env)
    assert [p.name for p in report.cached] == ["a-fallback.jar"]
    assert list(report.skipped) == ["sdk"]
    assert "org/example/sdk/2.0/sdk-2.0.jar failed" in report.skipped["sdk"]
    monkeypatch.setattr(
        resolve, "CACHED_JARS", {"sdk": dataclasses.replace(optional, required=True)}
    )
    with pytest.raises(EngineSetupError, match="sdk-2.0.jar failed"):
        resolve.install_all(env)
