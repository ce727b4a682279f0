"""Engine lines: which PySpark versions the adapter runs on, and the jars each line loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.jars import lines
from dbt.adapters.lakehouse.engine.jars.sets import _ICEBERG_RUNTIME_SHA256, s3a_jars
from dbt.adapters.lakehouse.engine.launch import java_feature_version
from dbt.adapters.lakehouse.exceptions import EngineSetupError


@pytest.mark.parametrize(
    ("pyspark", "spark", "scala", "hadoop"),
    [("3.5.9", "3.5", "2.12", "3.3.4"), ("4.1.4", "4.1", "2.13", "3.4.2")],
)
def test_a_pyspark_version_selects_its_line(
    pyspark: str, spark: str, scala: str, hadoop: str
) -> None:
    line = lines.line_of(pyspark)
    assert line is not None
    assert (line.spark, line.scala, line.hadoop) == (spark, scala, hadoop)
    assert _ICEBERG_RUNTIME_SHA256[line.spark]


@pytest.mark.parametrize("pyspark", ["4.0.1", "3.4.4", "4.3.0", ""])
def test_other_pyspark_versions_are_refused_with_the_lines_to_install(
    monkeypatch: pytest.MonkeyPatch, pyspark: str
) -> None:
    assert lines.line_of(pyspark) is None
    monkeypatch.setattr(lines, "pyspark_version", lambda: pyspark)
    with pytest.raises(EngineSetupError, match=r'pip install "pyspark==3\.5\.\*"') as caught:
        lines.check_supported()
    assert f"PySpark {pyspark or '(not installed)'} is not an engine line" in caught.value.msg
    assert "Java 17" in caught.value.msg


def test_spark_4_s3a_uses_the_sdk_v2_from_the_iceberg_bundle_plus_its_transfer_manager() -> None:
    [source] = s3a_jars("3.4.2").sources
    assert [j.filename for j in source.jars] == [
        "hadoop-aws-3.4.2.jar",
        "iceberg-aws-bundle-1.12.0.jar",
        "s3-transfer-manager-2.54.17.jar",
        "apache-client-2.54.17.jar",
    ]
    assert s3a_jars("3.3.4").jars[1].filename == "aws-java-sdk-bundle-1.12.262.jar"


@pytest.mark.parametrize(
    ("release", "expected"),
    [('JAVA_VERSION="17.0.15"', 17), ('JAVA_VERSION="1.8.0_392"', 8), ('JAVA_VERSION="21"', 21)],
)
def test_the_jdks_version_is_read_from_its_release_file(
    tmp_path: Path, release: str, expected: int
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "java").write_text("")
    (tmp_path / "release").write_text(f'IMPLEMENTOR="x"\n{release}\n')
    assert java_feature_version(str(tmp_path / "bin" / "java")) == expected
    (tmp_path / "release").unlink()
    assert java_feature_version(str(tmp_path / "bin" / "java")) is None


def test_debug_names_the_installed_line_and_iceberg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "pyspark_version", lambda: "4.1.4")
    assert lines.engine_label() == "Spark 4.1.4 (line 4.1, Scala 2.13), Iceberg 1.12.0"
    monkeypatch.setattr(lines, "pyspark_version", lambda: "4.0.1")
    assert "not a supported line" in lines.engine_label()
