"""Under Spark Connect the profile's SQL settings reach the server's session in one request
(engine/connect.py `_configure`); a setting only the server's launch can take is left to it,
and every other setting is still set (before, a static setting failed every command)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from functional.lakehouse.shared.tables import table


@pytest.mark.only_profile("connect")
class TestConnectSessionConf:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict) -> dict:
        # A static setting fails the one request: each setting is then set alone.
        conf = {"spark.sql.ui.retainedExecutions": "50", "spark.sql.ansi.enabled": "false"}
        return {**dbt_profile_target, "spark": {**dbt_profile_target["spark"], "conf": conf}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        # A division by zero is an error under ANSI mode (Spark 4's default), null without it.
        return {"divided.sql": "{{ config(materialized='table') }} select 1 / 0 as x"}

    def test_a_static_setting_is_left_to_the_launch_and_the_others_are_set(self, project):
        run_dbt(["run"])
        rows = project.run_sql(f"select x from {table(project, 'divided')}", fetch="all")
        assert [tuple(r) for r in rows] == [(None,)]
        spark = ENGINE.active
        assert spark.conf.get("spark.sql.ansi.enabled") == "false"
        assert spark.conf.get("spark.sql.ui.retainedExecutions") != "50"  # the server's
