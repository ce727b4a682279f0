"""An incremental model's on_schema_change: sync_all_columns against a real Iceberg table, each
run checked row for row and column for column. The strategies: test_incremental_strategies.py."""

from __future__ import annotations

import decimal

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import current_snapshot, expect, rows, table

# A strategy's rows are SQL semantics, the same on every catalog and storage: the embedded
# lakehouse, and the profiles where the engine itself differs (tasks on a cluster's executors,
# statements in a Spark Connect server).
pytestmark = pytest.mark.only_profile("local", "cluster", "connect")

# ---- on_schema_change: sync_all_columns ----------------------------------------------------------

SYNC_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% set v = var('v', 1) %}
{% if v == 1 %}
select cast(1 as int) as id, cast(1.5 as float) as f, cast(10.25 as decimal(10,2)) as d,
       'x' as gone
{% elif v == 2 %}
select cast(2 as bigint) as id, cast(2.5 as double) as f,
       cast(123456789.25 as decimal(12,2)) as d, 'n' as added
{% else %}
select cast(3 as int) as id, cast(3.5 as double) as f, cast(1 as decimal(11,2)) as d,
       'm' as added
{% endif %}
"""


class TestSyncAllColumns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"synced.sql": SYNC_SQL}

    def column_types(self, project) -> list[tuple[str, str]]:
        described = project.run_sql(f"describe table {table(project, 'synced')}", fetch="all")
        found = []
        for name, dtype, *_ in described:
            if not name or name.startswith("#"):
                break
            found.append((name, dtype))
        return found

    def test_drop_and_widen_then_refuse_narrowing(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{v: 2}"])
        assert self.column_types(project) == [
            ("id", "bigint"),
            ("f", "double"),
            ("d", "decimal(12,2)"),
            ("added", "string"),
        ]
        expect(
            rows(project, "synced"),
            [
                (1, 1.5, decimal.Decimal("10.25"), None),
                (2, 2.5, decimal.Decimal("123456789.25"), "n"),
            ],
        )
        snapshot = current_snapshot(project, "synced")
        results = run_dbt(["run", "--vars", "{v: 3}"], expect_pass=False)
        message = results[0].message
        assert "id: table has bigint, model gives int" in message, message
        assert "d: table has decimal(12,2), model gives decimal(11,2)" in message
        assert "model 'synced'" in message
        assert current_snapshot(project, "synced") == snapshot
        assert [c for c, _ in self.column_types(project)] == ["id", "f", "d", "added"]
