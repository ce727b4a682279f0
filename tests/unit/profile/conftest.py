"""Fixtures of the depot tests: a project folder (the working directory) and a home folder,
each empty, so no depots file of the machine's is found."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path
