"""Jar sets: pinned checksums, one fetch per set, the no-op when cached, env overrides."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.jars import (
    CACHED_JARS,
    S3A_JARS,
    CachedJarSet,
    PinnedJar,
    extract_members,
    maven_central,
    pip_download_command,
    resolve_jars,
    user_supplies_hadoop_aws,
)

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
        origin="a test artifact",
        jars=(
            PinnedJar("a-1.jar", sha(A_BYTES), "deps/a.jar", "TEST_A_JAR"),
            PinnedJar("b-1.jar", sha(B_BYTES), "deps/b.jar", "TEST_B_JAR"),
        ),
        fetch=fetch,
    )


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
    pair = CachedJarSet("one", "a test artifact", only_c, CountingFetch())
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


def test_s3a_set_is_pinned_from_one_sdist() -> None:
    assert CACHED_JARS["s3a"] is S3A_JARS
    assert [j.filename for j in S3A_JARS.jars] == [
        "hadoop-aws-3.3.1.jar",
        "aws-java-sdk-bundle-1.11.901.jar",
    ]
    assert [j.env_override for j in S3A_JARS.jars] == [
        "LAKEHOUSE_HADOOP_AWS_JAR",
        "LAKEHOUSE_AWS_SDK_JAR",
    ]
    assert all(len(j.sha256) == 64 for j in S3A_JARS.jars)


def test_resolve_uses_overrides_for_s3a(tmp_path: Path, env: dict[str, str]) -> None:
    aws, sdk = tmp_path / "hadoop-aws-x.jar", tmp_path / "sdk-x.jar"
    aws.write_bytes(b"a")
    sdk.write_bytes(b"b")
    env = {**env, "LAKEHOUSE_HADOOP_AWS_JAR": str(aws), "LAKEHOUSE_AWS_SDK_JAR": str(sdk)}
    assert resolve_jars(["s3a"], env=env, fetch_missing=False) == [aws, sdk]


def test_resolve_names_every_missing_s3a_jar_and_the_fix(env: dict[str, str]) -> None:
    with pytest.raises(EngineSetupError) as info:
        resolve_jars(["s3a"], env=env, fetch_missing=False)
    message = info.value.msg
    assert "hadoop-aws-3.3.1.jar + aws-java-sdk-bundle-1.11.901.jar" in message
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
        need="tool",
        origin="a test repository",
        jars=(PinnedJar("tool-2.0-all.jar", sha(A_BYTES), "tool-2.0-all.jar", "TEST_TOOL"),),
        fetch=maven_central("org.example", "tool", "2.0", "all"),
    )
    [cached] = tool.install(env)
    assert cached.read_bytes() == A_BYTES


def test_maven_fetch_names_the_url_it_could_not_get(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", (tmp_path / "empty").as_uri())
    tool = CachedJarSet(
        need="tool",
        origin="a test repository",
        jars=(PinnedJar("tool-2.0.jar", sha(A_BYTES), "tool-2.0.jar", "TEST_TOOL"),),
        fetch=maven_central("org.example", "tool", "2.0"),
    )
    with pytest.raises(EngineSetupError, match=r"org/example/tool/2\.0/tool-2\.0\.jar failed"):
        tool.install(env)
