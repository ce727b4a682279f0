"""Model contracts on Iceberg: not_null and primary_key columns are required fields, the key
is the table's identifier fields, and a NULL in one fails the build with the table as it was
and no staging table left. The same table after a first run, a rerun and a --full-refresh, for
a table and an incremental merge model."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, write_file

from functional.lakehouse.shared.tables import expect, rows, table

pytestmark = pytest.mark.only_profile("local")

MODEL_SQL = """
{{{{ config(materialized='{materialized}', unique_key='id', partition_by=['region'],
          on_schema_change='fail') }}}}
select id, region, v from values {rows} as t(id, region, v)
"""
GOOD_ROWS = "(1, 'eu', 'a'), (2, 'us', cast(null as string))"

SCHEMA_YML = """
version: 2
models:
  - name: {name}
    config:
      contract:
        enforced: true
    constraints:
      - type: check
        expression: id > 0
    columns:
      - name: id
        data_type: int
        constraints:
          - type: primary_key
      - name: region
        data_type: string
        constraints:
          - type: not_null
      - name: v
        data_type: string
"""


def _models(name: str, materialized: str, batch: str = GOOD_ROWS) -> dict[str, str]:
    return {
        f"{name}.sql": MODEL_SQL.format(materialized=materialized, rows=batch),
        "schema.yml": SCHEMA_YML.format(name=name),
    }


class _Contract:
    name = ""
    materialized = ""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return _models(self.name, self.materialized)

    def _table_ddl(self, project) -> str:
        (ddl,) = project.run_sql(f"show create table {table(project, self.name)}", fetch="one")
        return str(ddl)

    def _tables(self, project) -> set[str]:
        found = project.run_sql(f"show tables in `{project.test_schema}`", fetch="all")
        return {r[1] for r in found}

    def _last_operation(self, project) -> str:
        project.run_sql(f"refresh table {table(project, self.name)}")
        (operation,) = project.run_sql(
            f"select operation from {table(project, self.name)}.snapshots "
            "order by committed_at desc limit 1",
            fetch="one",
        )
        return str(operation)

    def test_required_fields_and_key_over_three_runs(self, project) -> None:
        for number, args in enumerate((["run"], ["run"], ["run", "--full-refresh"])):
            results = run_dbt(args)
            if number:  # the table has the contract's shape: its rows replaced in one commit
                assert self._last_operation(project) == "overwrite"
            assert [r.status for r in results] == ["success"]
            ddl = self._table_ddl(project)
            assert "id INT NOT NULL" in ddl
            assert "region STRING NOT NULL" in ddl
            assert "v STRING," in ddl or "v STRING)" in ddl
            assert "'identifier-fields' = '[id]'" in ddl
            assert "PARTITIONED BY (region)" in ddl
            expect(rows(project, self.name), [(1, "eu", "a"), (2, "us", None)])
            assert self._tables(project) == {self.name}

    def test_a_null_fails_the_build_and_leaves_the_table(self, project) -> None:
        run_dbt(["run"])
        for column, batch in (
            ("id", "(1, 'eu', 'changed'), (cast(null as int), 'us', 'b')"),
            ("region", "(1, 'eu', 'changed'), (3, cast(null as string), 'b')"),
        ):
            model = _models(self.name, self.materialized, batch)[f"{self.name}.sql"]
            write_file(model, project.project_root, "models", f"{self.name}.sql")
            (result,) = run_dbt(["run"], expect_pass=False)
            # The adapter's line, the same on Spark 3.5 and 4 (whose own texts differ).
            assert f"A NULL reached the required column {column}: " in result.message
            expect(rows(project, self.name), [(1, "eu", "a"), (2, "us", None)])
            assert self._tables(project) == {self.name}
        write_file(
            _models(self.name, self.materialized)[f"{self.name}.sql"],
            project.project_root,
            "models",
            f"{self.name}.sql",
        )


class TestTableContract(_Contract):
    name = "contracted_table"
    materialized = "table"


class TestIncrementalContract(_Contract):
    name = "contracted_incremental"
    materialized = "incremental"


KEYLESS_MERGE_SQL = """
{{ config(materialized='incremental', incremental_strategy='merge', on_schema_change='fail') }}
{% if is_incremental() %}
select * from values (2, 'us', 'B'), (3, 'eu', 'c') as t(id, region, v)
{% else %}
select * from values (1, 'eu', 'a'), (2, 'us', 'b') as t(id, region, v)
{% endif %}
"""


class TestMergeKeysOnTheContractsPrimaryKey:
    """A merge model without a unique_key merges on its contract's primary_key."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "keyless_merge.sql": KEYLESS_MERGE_SQL,
            "schema.yml": SCHEMA_YML.format(name="keyless_merge"),
        }

    def test_first_run_rerun_full_refresh(self, project) -> None:
        run_dbt(["run"])
        expect(rows(project, "keyless_merge"), [(1, "eu", "a"), (2, "us", "b")])
        run_dbt(["run"])  # 2 updated in place, 3 inserted: no second row for key 2
        expect(rows(project, "keyless_merge"), [(1, "eu", "a"), (2, "us", "B"), (3, "eu", "c")])
        run_dbt(["run", "--full-refresh"])
        expect(rows(project, "keyless_merge"), [(1, "eu", "a"), (2, "us", "b")])
