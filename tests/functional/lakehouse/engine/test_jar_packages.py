"""A profile that names `spark.jars.packages` coordinates instead of the adapter's own jars: Spark
resolves the Iceberg runtime itself (Ivy), and the adapter leaves its cached copy out.

No test downloads: Ivy is pointed (`spark.jars.ivySettings`) at a Maven-layout repository in a
temp folder, holding the cached runtime jar under its coordinates, and at nothing else. The dbt
run is a fresh process, since Spark resolves packages when it launches the JVM.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dbt.adapters.lakehouse.engine.jars import ICEBERG_JARS, ICEBERG_RUNTIME, ICEBERG_VERSION

pytestmark = pytest.mark.only_profile("local")

COORDINATES = f"org.apache.iceberg:{ICEBERG_RUNTIME}:{ICEBERG_VERSION}"
POM = f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.apache.iceberg</groupId>
  <artifactId>{ICEBERG_RUNTIME}</artifactId>
  <version>{ICEBERG_VERSION}</version>
</project>
"""
IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="only-this-folder"/>
  <resolvers>
    <ibiblio name="only-this-folder" m2compatible="true" root="{root}"/>
  </resolvers>
</ivysettings>
"""


def _offline_repository(root: Path) -> Path:
    """A Maven repository with the Iceberg runtime (the cached jar) and its pom, and the Ivy
    settings that make it the only one Spark may resolve from."""
    [cached] = ICEBERG_JARS.locate() or ICEBERG_JARS.install()
    folder = root / "repo" / "org" / "apache" / "iceberg" / ICEBERG_RUNTIME / ICEBERG_VERSION
    folder.mkdir(parents=True)
    name = f"{ICEBERG_RUNTIME}-{ICEBERG_VERSION}"
    try:
        os.link(cached, folder / f"{name}.jar")  # 47 MB: no copy where the disk allows
    except OSError:
        shutil.copyfile(cached, folder / f"{name}.jar")
    (folder / f"{name}.pom").write_text(POM)
    settings = root / "ivysettings.xml"
    settings.write_text(IVY_SETTINGS.format(root=(root / "repo").as_uri()))
    return settings


def test_spark_resolves_the_runtime_named_by_coordinates(tmp_path: Path) -> None:
    settings = _offline_repository(tmp_path)
    ivy_home = tmp_path / "ivy"
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "models" / "numbers.sql").write_text(
        "{{ config(materialized='table', partition_by=['bucket(2, id)']) }}\n"
        "select id from range(5)"
    )
    (project / "dbt_project.yml").write_text(
        yaml.safe_dump({"name": "packages", "version": "1.0", "profile": "packages"})
    )
    spark = {
        "conf": {
            "spark.jars.packages": COORDINATES,
            "spark.jars.ivySettings": str(settings),
            "spark.jars.ivy": str(ivy_home),
        }
    }
    target = {"type": "lakehouse", "schema": "s", "warehouse": str(tmp_path / "wh"), "spark": spark}
    (project / "profiles.yml").write_text(
        yaml.safe_dump({"packages": {"target": "t", "outputs": {"t": target}}})
    )
    dbt = str(Path(sys.executable).with_name("dbt"))
    done = subprocess.run(
        [dbt, "run", "--profiles-dir", str(project)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        # Our cached runtime must not be what makes it work.
        env={k: v for k, v in os.environ.items() if k != "LAKEHOUSE_ICEBERG_JAR"},
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # Ivy resolved the coordinates into its own cache: the JVM ran Iceberg from there.
    resolved = ivy_home / "jars" / f"org.apache.iceberg_{ICEBERG_RUNTIME}-{ICEBERG_VERSION}.jar"
    assert resolved.is_file(), sorted(p.name for p in ivy_home.rglob("*.jar"))
    # The Iceberg table is real: its metadata names the bucket transform.
    metadata = sorted((tmp_path / "wh").rglob("*.metadata.json"))
    specs = json.loads(metadata[-1].read_text())["partition-specs"]
    assert [f["transform"] for f in specs[-1]["fields"]] == ["bucket[2]"]
