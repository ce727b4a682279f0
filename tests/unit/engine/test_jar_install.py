"""`dbt-lakehouse install`: every set or only those named (README command 1 fetches the
embedded lakehouse's alone), sets side by side, and a line on stderr for each fetch with its
size, which is what a first `dbt debug` shows while it waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.cli import main as cli
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.jars import (
    CACHED_JARS,
    EMBEDDED_NEEDS,
    CachedJarSet,
    JarSource,
    PinnedJar,
    maven_central,
    resolve,
)
from dbt.adapters.lakehouse.engine.jars.resolve import InstallReport
from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.profile.resolved import resolve_profile_depot
from unit.engine.jar_fakes import A_BYTES, B_BYTES, CountingFetch, sha


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"LAKEHOUSE_CACHE_DIR": str(tmp_path / "cache")}


def one_jar_set(need: str, data: bytes, fetch: CountingFetch) -> CachedJarSet:
    member = "deps/a.jar" if data == A_BYTES else "deps/b.jar"
    jar = PinnedJar(f"{need}-1.jar", sha(data), member, f"TEST_{need.upper()}_JAR")
    return CachedJarSet(need, (JarSource(f"a test artifact ({need})", (jar,), fetch),))


def test_the_embedded_lakehouse_needs_exactly_the_sets_command_1_fetches(tmp_path: Path) -> None:
    creds = LakehouseCredentials(schema="analytics", warehouse=str(tmp_path / "wh"))
    plan = build_spark_conf_plan(resolve_profile_depot(creds), creds.database, None)
    assert set(plan.jar_needs) == set(EMBEDDED_NEEDS)
    assert set(EMBEDDED_NEEDS) <= set(CACHED_JARS)


def test_install_fetches_only_the_named_sets(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = CountingFetch(), CountingFetch()
    sets = {"one": one_jar_set("one", A_BYTES, first), "two": one_jar_set("two", B_BYTES, second)}
    monkeypatch.setattr(resolve, "CACHED_JARS", sets)
    report = resolve.install_all(env, needs=["one"])
    assert [p.name for p in report.cached] == ["one-1.jar"]
    assert (first.calls, second.calls) == (1, 0)
    # Every set, side by side; the one already cached is not fetched again.
    report = resolve.install_all(env)
    assert [p.name for p in report.cached] == ["one-1.jar", "two-1.jar"]
    assert (first.calls, second.calls) == (1, 1)
    # No writer's partial file is left beside the jars.
    assert not list((Path(env["LAKEHOUSE_CACHE_DIR"]) / "jars").glob("*partial*"))
    with pytest.raises(EngineSetupError, match="no jar set named three; the sets are one, two"):
        resolve.install_all(env, needs=["three"])


def test_a_fetch_says_what_it_fetches_and_its_size(
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "repo" / "org" / "example" / "tool" / "2.0"
    folder.mkdir(parents=True)
    (folder / "tool-2.0.jar").write_bytes(b"x" * 1_500_000)
    monkeypatch.setenv("LAKEHOUSE_MAVEN_REPO", (tmp_path / "repo").as_uri())
    jar = PinnedJar("tool-2.0.jar", sha(b"x" * 1_500_000), "tool-2.0.jar", "TEST_TOOL")
    tool = CachedJarSet(
        "tool",
        (JarSource("a test repository", (jar,), maven_central("org.example", "tool", "2.0")),),
    )
    tool.install(env)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "dbt-lakehouse: fetching the 'tool' jars from a test repository"
    assert lines[1] == "dbt-lakehouse:   tool-2.0.jar, 1.5 MB"
    assert lines[2].startswith("dbt-lakehouse: cached the 'tool' jars (1.5 MB) in ")
    tool.install(env)  # cached and verified: silent
    assert capsys.readouterr().err == ""


def test_the_install_command_passes_the_sets_it_is_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    asked: list[list[str] | None] = []
    jar = tmp_path / "h2.jar"
    jar.write_bytes(b"x" * 2_000_000)

    def install_all(needs: list[str] | None = None) -> InstallReport:
        asked.append(needs)
        return InstallReport(cached=[jar], skipped={})

    monkeypatch.setattr(cli, "install_all", install_all)
    assert cli.main(["install", "--embedded"]) == 0
    assert cli.main(["install", "h2"]) == 0
    assert cli.main(["install"]) == 0
    assert asked == [list(EMBEDDED_NEEDS), ["h2"], None]
    out = capsys.readouterr().out
    assert f"ok  {jar} (2.0 MB)" in out
    assert "1 jars, 2.0 MB, ready in" in out
