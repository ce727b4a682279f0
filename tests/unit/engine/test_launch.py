"""Where the driver JVM's console output goes: beside the running dbt command's own log, not in
the folder dbt was started from."""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt import flags
from dbt.adapters.lakehouse.engine.launch import spark_log_path


@pytest.fixture
def dbt_flags(monkeypatch: pytest.MonkeyPatch) -> Iterator[Namespace]:
    """dbt-core's process-wide flags as its CLI leaves them, restored afterwards; with neither
    of our variables set."""
    monkeypatch.delenv("LAKEHOUSE_SPARK_LOG", raising=False)
    monkeypatch.delenv("DBT_LOG_PATH", raising=False)
    before = flags.get_flags()
    given = Namespace()
    flags.set_flags(given)
    yield given
    flags.set_flags(before)


def test_follows_dbts_log_path_not_the_working_folder(
    dbt_flags: Namespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dbt-core resolves `--log-path`, DBT_LOG_PATH and the project's logs/ into LOG_PATH.
    dbt_flags.LOG_PATH = str(tmp_path / "project" / "logs")
    monkeypatch.chdir(tmp_path)
    assert spark_log_path() == tmp_path / "project" / "logs" / "spark.log"


def test_lakehouse_spark_log_wins(
    dbt_flags: Namespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dbt_flags.LOG_PATH = str(tmp_path / "project" / "logs")
    monkeypatch.setenv("LAKEHOUSE_SPARK_LOG", str(tmp_path / "mine.log"))
    assert spark_log_path() == tmp_path / "mine.log"


def test_outside_dbt_dbt_log_path_then_the_working_folder(
    dbt_flags: Namespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert spark_log_path() == tmp_path / "logs" / "spark.log"
    monkeypatch.setenv("DBT_LOG_PATH", str(tmp_path / "dbt-logs"))
    assert spark_log_path() == tmp_path / "dbt-logs" / "spark.log"
