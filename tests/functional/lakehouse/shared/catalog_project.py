"""The project the catalog tests (test_catalogs.py) build on each catalog type besides REST: a
table, an incremental `merge` model built three times (first run, a rerun with changed input,
--full-refresh) with exact rows each time, a dbt snapshot of it, data tests, a view, and `dbt
clone` of the tables; and the profile target and S3 depot each catalog's class starts from."""

from __future__ import annotations

from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from functional.infra.depots import inline_depot
from functional.lakehouse.shared.clones import (
    clone_rows,
    clone_tables,
    clone_target,
    drop_clone_schema,
)
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, snapshot_count

TABLE_SQL = """
{{ config(materialized='table') }}
select * from values (1, 'x'), (2, 'y') as t(id, name)
"""

# Batch 1 inserts 1 and 2; batch 2 updates 2 and inserts 3 (1 stays, as a merge leaves it).
MERGED_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
{% if var('batch', 1) == 1 %}
select * from values (1, 'a'), (2, 'b') as t(id, s)
{% else %}
select * from values (2, 'B'), (3, 'c') as t(id, s)
{% endif %}
"""

# merged's rows kept from its changes (lakehouse.changes): the catalog serves both histories
# and Iceberg's changelog procedure.
MERGED_CHANGES_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('merged')) }}
"""

VIEW_SQL = """
{{ config(materialized='view') }}
select id, upper(s) as s from {{ ref('merged') }}
"""

SNAPSHOT_SQL = """
{% snapshot snap_merged %}
{{ config(unique_key='id', strategy='check', check_cols=['s']) }}
select * from {{ ref('merged') }}
{% endsnapshot %}
"""

SCHEMA_YML = """
version: 2
models:
  - name: merged
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

# The default shuffle partitions, as every other s3_rest test: a profile differing in
# SparkConf gets a warm engine (a JVM) of its own (CI time).
SPARK: dict[str, Any] = {
    "master": "local[2]",
    "driver_memory": "2g",
}

VIEW_REFUSED = "cannot hold views"


def catalog_target(depot: dict[str, Any]) -> dict[str, Any]:
    # Each catalog needs other jars (the PostgreSQL driver, the AWS SDK v2): the engine
    # relaunches the JVM when they change, which these classes exercise one after another.
    return {"type": "lakehouse", "threads": 2, "depot": depot, "spark": SPARK}


def view_rows(project: Any, name: str) -> list[tuple]:
    # A view has no table to refresh; it reads its table as it is now.
    found = project.run_sql(f"select * from {{schema}}.{name}", fetch="all")
    return sorted((tuple(r) for r in found), key=repr)


def s3_catalog_depot(s3: Any, catalog: dict[str, Any], prefix: str, **extra: Any) -> dict[str, Any]:
    return inline_depot(
        bucket=s3.bucket,
        endpoint=s3.endpoint,
        access_key=s3.access_key,
        secret_key=s3.secret_key,
        region=s3.region,
        catalog=catalog,
        prefix=prefix,
        **extra,
    )


PROJECT_MODELS = {
    "plain.sql": TABLE_SQL,
    "merged.sql": MERGED_SQL,
    "merged_changes.sql": MERGED_CHANGES_SQL,
    "upper_view.sql": VIEW_SQL,
    "schema.yml": SCHEMA_YML,
}


class CatalogProject:
    """The same project on each catalog; subclasses give the depot and what their catalog
    adds (views, the catalog's own records)."""

    views: bool = False
    clone_mode: str = "zero-copy"  # what `dbt clone` makes of a table in this catalog

    @pytest.fixture(scope="class")
    def profiles_config_update(
        self, dbt_profile_target: dict[str, Any], unique_schema: str
    ) -> dict[str, Any]:
        outputs = {
            "default": {**dbt_profile_target, "schema": unique_schema},
            "clone": clone_target(dbt_profile_target, unique_schema),
        }
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return dict(PROJECT_MODELS)

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap_merged.sql": SNAPSHOT_SQL}

    def snapshot_rows(self, project: Any) -> list[tuple]:
        return rows(project, "snap_merged", "id, s, dbt_valid_to is null")

    def build(self, project: Any, *args: str) -> str:
        """One `dbt build`; every node passes except, without views, the view, which fails
        with the adapter's explanation."""
        results, stdout = run_dbt_and_capture(["build", *args], expect_pass=self.views)
        # A reused node (nothing it reads moved, docs/reuse.md: here the view, whose definition
        # the rerun leaves as it was) passes as a built one does.
        statuses = {r.node.name: str(r.status).replace("reused", "success") for r in results}
        expected = {
            "plain": "success",
            "merged": "success",
            "merged_changes": "success",
            "snap_merged": "success",
            "upper_view": "success" if self.views else "error",
            "not_null_merged_id": "pass",
            "unique_merged_id": "pass",
        }
        if "--select" in args:  # merged and what follows from it
            expected.pop("plain")
        assert statuses == expected
        if not self.views:
            (failed,) = [r for r in results if r.node.name == "upper_view"]
            assert VIEW_REFUSED in str(failed.message), failed.message
            assert "materialized='table'" in str(failed.message), failed.message
            assert "Traceback" not in str(failed.message)
        return output_text(stdout)

    def check_three_builds(self, project: Any) -> list[str]:
        outputs = [self.build(project)]
        expect(rows(project, "plain"), [(1, "x"), (2, "y")])
        expect(rows(project, "merged"), [(1, "a"), (2, "b")])
        expect(rows(project, "merged_changes"), [(1, "a"), (2, "b")])
        expect(self.snapshot_rows(project), [(1, "a", True), (2, "b", True)])
        if self.views:
            expect(view_rows(project, "upper_view"), [(1, "A"), (2, "B")])

        outputs.append(self.build(project, "--select", "merged+", "--vars", "{batch: 2}"))
        expect(rows(project, "merged"), [(1, "a"), (2, "B"), (3, "c")])
        expect(rows(project, "merged_changes"), [(1, "a"), (2, "B"), (3, "c")])
        assert snapshot_count(project, "merged") == 2  # the first build's and the merge's
        changed = [(1, "a", True), (2, "b", False), (2, "B", True), (3, "c", True)]
        expect(self.snapshot_rows(project), changed)
        if self.views:
            expect(view_rows(project, "upper_view"), [(1, "A"), (2, "B"), (3, "C")])

        outputs.append(self.build(project, "--full-refresh", "--vars", "{batch: 2}"))
        expect(rows(project, "plain"), [(1, "x"), (2, "y")])
        expect(rows(project, "merged"), [(2, "B"), (3, "c")])
        expect(rows(project, "merged_changes"), [(2, "B"), (3, "c")])
        expect(self.snapshot_rows(project), changed)  # a snapshot ignores --full-refresh
        if self.views:
            expect(view_rows(project, "upper_view"), [(2, "B"), (3, "C")])

        # dbt clone of the tables into a second schema, in this catalog's mode.
        messages = clone_tables(project, ["plain", "merged"])
        assert messages == {n: f"CLONE {self.clone_mode}" for n in ("plain", "merged")}
        expect(clone_rows(project, "merged"), [(2, "B"), (3, "c")])
        expect(clone_rows(project, "plain"), [(1, "x"), (2, "y")])
        drop_clone_schema(project)
        return outputs


# --- hadoop ------------------------------------------------------------------------------------
