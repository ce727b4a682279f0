"""A column mistyped in a config that becomes SQL (`incremental_predicates`, a snapshot's
`check_cols`) fails naming the config it came from, with Spark's suggestion and without Spark's
logical plan on the console (the plan stays in the debug log); the failed run writes nothing,
and a `--full-refresh` (which reads no predicate) leaves the rows of a first build."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import current_snapshot, expect, rows
from functional.rebuilds import BuildsEveryRun

pytestmark = pytest.mark.only_profile("local")

MERGE_SQL = """
{{ config(
    materialized='incremental', incremental_strategy='merge', unique_key='id',
    incremental_predicates=["DBT_INTERNAL_DEST.amount > 0",
                            "DBT_INTERNAL_DEST.updatd_at > date'2020-01-01'"]) }}
select * from values (1, 10, date'2026-01-01'), (2, 20, date'2026-01-02')
  as t(id, amount, updated_at)
"""
SNAPSHOT_SQL = """
{% snapshot snap %}
{{ config(target_schema=target.schema, unique_key='id', strategy='check',
          check_cols=['amount', 'amout']) }}
select * from values (1, 10), (2, 20) as t(id, amount)
{% endsnapshot %}
"""
FIRST = [(1, 10), (2, 20)]
# Spark's plan of a failed statement starts with its root node on the line after the message.
PLAN_NODES = ("'MergeIntoTable", "SubqueryAlias", "'GlobalLimit", "LogicalRDD")


def failed_output(args: list[str]) -> str:
    _, output = run_dbt_and_capture(args, expect_pass=False)
    return output_text(output)


# A rerun with nothing moved is what reads the misspelled config: built every run.
class TestConfigColumnErrors(BuildsEveryRun):
    @pytest.fixture(scope="class")
    def models(self):
        return {"merged.sql": MERGE_SQL}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snap.sql": SNAPSHOT_SQL}

    def test_incremental_predicates_typo_names_the_config(self, project, logs_dir):
        run_dbt(["run"])  # a first build reads no predicate
        built = current_snapshot(project, "merged")
        output = failed_output(["run"])
        assert (
            "Column `DBT_INTERNAL_DEST`.`updatd_at` cannot be resolved; config "
            "`incremental_predicates` of this node names it" in output
        )
        assert "`DBT_INTERNAL_DEST`.`updated_at`" in output  # Spark's suggestion kept
        assert not [node for node in PLAN_NODES if node in output], output
        # Nothing was written by the failed run.
        assert current_snapshot(project, "merged") == built
        expect(rows(project, "merged", "id, amount"), FIRST)
        run_dbt(["run", "--full-refresh"])
        expect(rows(project, "merged", "id, amount"), FIRST)
        log = (Path(logs_dir) / "dbt.log").read_text()
        assert "'MergeIntoTable" in log  # the plan is in the debug log

    def test_check_cols_typo_names_the_config(self, project):
        run_dbt(["snapshot"])  # dbt reads check_cols only once the snapshot exists
        output = failed_output(["snapshot"])
        assert "Column `amout` cannot be resolved; config `check_cols` of this node" in output
        assert "Did you mean one of: `amount`, `id`?" in output
        assert not [node for node in PLAN_NODES if node in output], output
        expect(rows(project, "snap", "id, amount"), FIRST)
