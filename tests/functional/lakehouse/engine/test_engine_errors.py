"""A failed statement reads the same on both engine lines (docs/engine-lines.md), in a `dbt`
process of its own as a user runs it: the error once, in dbt's output, and nothing from PySpark
on stderr (PySpark 4 logs each error with a query context as JSON with the JVM's stack trace);
a NULL in a contract's required column is explained in the adapter's words above Spark's own,
which Spark 3.5 and 4 word differently; the models around them build. The command's JVM is
its own: no warm engine is started; run from another folder, it writes its logs (dbt's and
Spark's) to the project's logs/, not where it was started."""

from __future__ import annotations

from pathlib import Path

import pytest

from functional.lakehouse.shared.warm import dbt, output, statuses, write_project

pytestmark = pytest.mark.only_profile("local")

MODELS = {
    # Analysis fails naming the table: an error with a query context (its SQL fragment).
    "missing.sql": "{{ config(materialized='table') }}\nselect * from {{ target.schema }}.nope",
    "required.sql": "{{ config(materialized='table') }}\n"
    "select * from values (1, 'a'), (cast(null as int), 'b') as t(id, v)",
    "fine.sql": "{{ config(materialized='table') }}\nselect * from range(3)",
    "schema.yml": """
version: 2
models:
  - name: required
    config:
      contract:
        enforced: true
    columns:
      - name: id
        data_type: int
        constraints:
          - type: not_null
      - name: v
        data_type: string
""",
}


def test_failed_models_report_once_and_in_the_adapters_words(tmp_path: Path, engine_home: Path):
    folder = tmp_path / "project"
    # A JVM of the command's own (no warm engine): the errors pass through this process.
    target = (
        f"type: lakehouse\nschema: s\nthreads: 1\nwarehouse: {folder / 'warehouse'}\n"
        "engine: {keep_warm_minutes: 0}"
    )
    write_project(folder, MODELS, target)
    # Started from another folder, with Spark's log left to follow dbt's (the suite's own
    # LAKEHOUSE_SPARK_LOG emptied): both logs go to the project's logs/, none where dbt started.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = dbt(
        folder,
        engine_home,
        "run",
        "--project-dir",
        str(folder),
        cwd=elsewhere,
        LAKEHOUSE_SPARK_LOG="",
        DBT_LOG_PATH="",
    )
    assert done.returncode == 1, output(done)
    assert "PASS=1 WARN=0 ERROR=2" in done.stdout, output(done)
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in done.stdout and "`nope`" in done.stdout
    assert "A NULL reached the required column id: " in done.stdout, done.stdout
    for noise in ("SQLQueryContextLogger", "TABLE_OR_VIEW_NOT_FOUND", "\tat org.apache.spark"):
        assert noise not in done.stderr, done.stderr[-3000:]
    # keep_warm_minutes: 0 started no engine (LAKEHOUSE_ENGINE=cold is the same switch,
    # engine.warm.identity, unit-tested).
    assert statuses(engine_home) == []
    assert not (elsewhere / "logs").exists(), sorted(elsewhere.rglob("*"))
    assert (folder / "logs" / "dbt.log").is_file()
    assert (folder / "logs" / "spark.log").is_file()
