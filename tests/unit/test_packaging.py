"""The package's build metadata: what every install reads."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: its backport
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_license_is_an_spdx_string() -> None:
    # setuptools deprecates the `{text = ...}` table (such builds stop working after
    # 2027-02-18) and warned on every install; the SPDX string needs setuptools 77.
    config = tomllib.loads(PYPROJECT.read_text())
    assert config["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in config["build-system"]["requires"]
