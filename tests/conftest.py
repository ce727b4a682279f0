"""Test-wide setup: the functional profile switch and one lakehouse per test process.

`--profile local` (default) runs against the embedded lakehouse; every dbt invocation in the
process shares one SparkSession, so the warehouse folder is per process, not per test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]

PROFILES = ("local",)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--profile",
        action="store",
        default=os.environ.get("LAKEHOUSE_TEST_PROFILE", "local"),
        choices=PROFILES,
        help="which lakehouse the functional tests run against",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "only_profile(name): run only on the named profile")


def pytest_report_header(config: pytest.Config) -> list[str]:
    from importlib.metadata import version

    packages = ("dbt-core", "dbt-adapters", "dbt-spark", "pyspark", "snowpark-connect-deps-iceberg")
    return [
        f"lakehouse profile: {config.getoption('--profile')}",
        "versions: " + ", ".join(f"{p} {version(p)}" for p in packages),
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    profile = config.getoption("--profile")
    for item in items:
        marker = item.get_closest_marker("only_profile")
        if marker is not None and profile not in marker.args:
            item.add_marker(
                pytest.mark.skip(reason=f"runs only on profile(s) {marker.args}, not {profile}")
            )


@pytest.fixture(scope="session")
def lakehouse_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lakehouse")
    # The JVM's console output goes beside the warehouse, not into test project folders.
    os.environ["LAKEHOUSE_SPARK_LOG"] = str(root / "spark.log")
    return root


@pytest.fixture(scope="class")
def dbt_profile_target(request: pytest.FixtureRequest, lakehouse_root: Path) -> dict:
    profile = request.config.getoption("--profile")
    if profile == "local":
        return {
            "type": "lakehouse",
            "threads": 4,
            "warehouse": str(lakehouse_root / "warehouse"),
            "spark": {"master": "local[2]", "driver_memory": "2g"},
        }
    raise pytest.UsageError(f"unknown profile {profile}")
