"""Jar sources: Maven Central first, by the repository's layout, and each set's fallback registry
when it cannot be reached or serves a tampered jar; an optional set no source delivers is
skipped. The sets' checksums and cache: test_jars.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.jars import CachedJarSet, maven_central
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from unit.engine.jar_fakes import (
    A_BYTES,
    B_BYTES,
    FallbackFetch,
    closed_port,
    maven_then_fallback,
    one_jar_source,
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"LAKEHOUSE_CACHE_DIR": str(tmp_path / "cache")}


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
