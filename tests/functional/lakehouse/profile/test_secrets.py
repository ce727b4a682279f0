"""Secrets never leave the depot: not in `dbt debug`, dbt's output and logs, error messages, the
Spark log, or the Spark configuration a user or the Spark UI can dump.

The s3_rest profile's keys and token are random per test session (tests/conftest.py), so a
plain substring search for each value is a real check. `dbt debug`, a good run and a failing
run all go through the real depot; then every place a secret could leak is searched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.engine.launch import spark_log_path
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from functional.lakehouse.shared.dbt_output import output_text
from functional.rebuilds import BuildsEveryRun

GOOD_SQL = "select 1 as id, 'ok' as note"
# Fails in Spark (a missing table), after the depot's catalog has been used.
BAD_SQL = "select * from {{ target.database }}.{{ target.schema }}.no_such_table_here"


@pytest.mark.only_profile("s3_rest")
# Its control run must write with the searched secrets, not reuse: built every run.
class TestSecretsStayHidden(BuildsEveryRun):
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"good_model.sql": GOOD_SQL, "bad_model.sql": BAD_SQL}

    @pytest.fixture(scope="class")
    @classmethod
    def secret_values(cls, s3_server: Any, rest_catalog: Any) -> dict[str, str]:
        return {
            "aws_access_key": s3_server.access_key,
            "aws_secret_key": s3_server.secret_key,
            "apikey": rest_catalog.token,
        }

    def test_no_secret_anywhere(
        self, project: Any, logs_dir: str, secret_values: dict[str, str]
    ) -> None:
        seen: dict[str, str] = {}

        _, stdout = run_dbt_and_capture(["debug"])
        debug_text = output_text(stdout)
        seen["dbt debug output"] = debug_text
        # The depot is shown by its name; the preflight ran against the real servers.
        assert "depot: dataos://test-s3-rest" in debug_text, debug_text
        assert "the token was accepted" in debug_text
        assert "PutObject and DeleteObject on s3://" in debug_text

        _, stdout = run_dbt_and_capture(["run", "--select", "good_model"])
        seen["dbt run output"] = output_text(stdout)

        results, stdout = run_dbt_and_capture(["run", "--select", "bad_model"], expect_pass=False)
        seen["failing dbt run output"] = output_text(stdout)
        messages = [str(result.message) for result in results if result.status == "error"]
        assert messages and "no_such_table_here" in messages[0], messages
        seen["error messages"] = "\n".join(messages)
        # dbt leaves the failing results on disk too.
        run_results = Path(project.project_root) / "target" / "run_results.json"
        seen["run_results.json"] = run_results.read_text()

        spark = ENGINE.active
        assert spark is not None
        seen["SparkConf getAll()"] = repr(spark.sparkContext.getConf().getAll())
        # The session conf as SQL users and the UI see it.
        seen["SET -v"] = repr(spark.sql("SET -v").collect())
        seen["SET"] = repr(spark.sql("SET").collect())

        dbt_log = Path(logs_dir) / "dbt.log"
        seen["logs/dbt.log"] = dbt_log.read_text(errors="replace")
        spark_log = spark_log_path()
        assert os.environ.get("LAKEHOUSE_SPARK_LOG") == str(spark_log)
        seen["Spark log"] = spark_log.read_text(errors="replace") if spark_log.exists() else ""

        for where, text in seen.items():
            for name, value in secret_values.items():
                assert value not in text, f"the depot's {name} appears in {where}"
        # The real searches found something: the logs are not empty.
        assert "good_model" in seen["logs/dbt.log"]

    def test_runtime_conf_keys_holding_a_secret_are_redacted_in_every_dump(
        self, project: Any, secret_values: dict[str, str]
    ) -> None:
        """The REST token must stay in the session's runtime conf: Spark plans CACHE TABLE (and
        re-caches after writes) in cloned sessions that load catalogs afresh from it. So the
        check is that no dump shows it: the conf itself is not SparkConf (no UI, no event log),
        and SET / SET -v print such keys redacted."""
        run_dbt(["run", "--select", "good_model"])
        spark = ENGINE.active
        assert spark is not None
        entries = spark._jsparkSession.conf().getAll().iterator()  # type: ignore[attr-defined]
        holding = []
        while entries.hasNext():
            entry = entries.next()
            if any(value in str(entry._2()) for value in secret_values.values()):
                holding.append(str(entry._1()))
        # Only the catalog's token is held, nothing else (keys go to the Hadoop conf).
        assert holding == [f"spark.sql.catalog.{project.database}.token"]
        for command in ("SET", "SET -v", f"SET {holding[0]}"):
            dump = "\n".join(str(row) for row in spark.sql(command).collect())
            assert holding[0] in dump or command == "SET -v", f"{command} lists no token key"
            for name, value in secret_values.items():
                assert value not in dump, f"the depot's {name} appears in `{command}`"
        sparkconf_dump = "\n".join(f"{k}={v}" for k, v in spark.sparkContext.getConf().getAll())
        assert not any(value in sparkconf_dump for value in secret_values.values())

    def test_a_run_with_the_same_secrets_still_works(self, project: Any) -> None:
        """The control: the searched secrets are the ones that work (the run above used them)."""
        results = run_dbt(["run", "--select", "good_model"])
        assert [r.status for r in results] == ["success"]
