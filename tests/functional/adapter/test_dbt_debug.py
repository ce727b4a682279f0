"""dbt-tests-adapter `dbt_debug/` suite: `dbt debug` on good and broken profiles and projects.

`BaseDebugPostgres` reads three more targets from the `test` profile, which dbt-postgres's
test profile defines for Postgres; here they are given in this adapter's terms (data only):
- `nopass`: a target dbt cannot load. A Postgres target without its password is invalid;
  this adapter requires no key (every key has a default), so the invalid target is one with a
  key the adapter refuses (`commit_retries` out of range).
- `wronguser`: a target that loads but cannot connect. A Postgres user the server refuses;
  here a depot the depots file (which does not exist) cannot resolve.
- `none_target`: an empty target, as in the suite.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_debug.test_dbt_debug import (
    BaseDebugInvalidProjectPostgres,
    BaseDebugPostgres,
)
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.engine.jars.lines import installed_line, pyspark_version

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestDebug(BaseDebugPostgres):
    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema, tmp_path_factory):
        missing = tmp_path_factory.mktemp("dbt_debug") / "no-such-depots.yaml"
        return {
            "test": {
                "outputs": {
                    "default": {**dbt_profile_target, "schema": unique_schema},
                    "nopass": {**dbt_profile_target, "schema": unique_schema, "commit_retries": -1},
                    "wronguser": {
                        "type": "lakehouse",
                        "threads": 4,
                        "schema": unique_schema,
                        "depot": "dataos://no-such-depot",
                        "depots_file": str(missing),
                    },
                    "none_target": None,
                },
                "target": "default",
            },
        }

    def test_ok_names_the_engine_line(self, project):
        # The profiles folder named: the suite's own tests before this one pass `--profiles-dir
        # NONE`, which dbt keeps for later invocations in the same process.
        run_dbt(["debug", "--profiles-dir", str(project.profiles_dir)])
        output = self.capsys.readouterr().out
        line = installed_line()
        assert (
            f"engine: Spark {pyspark_version()} (line {line.spark}, Scala {line.scala})" in output
        )
        assert "Iceberg 1.12.0" in output


class TestDebugInvalidProject(BaseDebugInvalidProjectPostgres):
    pass
