"""A materialized view through the REST catalog: what the catalog and storage change, the view's
record committed through the REST catalog by every kind of refresh. The views' behaviour on the
embedded lakehouse: test_materialized_views.py."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.materialized_view import files
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.mv.mv_records import committed_record, main_head, properties, upstream_key
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, snapshot_count, table

# A GROUP BY of sums and counts over the seed: merged when the seed only appended.
VALUE_TOTALS_SQL = """
{{ config(materialized='materialized_view') }}
select id % 2 as odd, sum(value) as total, count(*) as n from {{ ref('my_seed') }} group by 1
"""


# What the catalog and storage change: the record committed through the REST catalog (table
# properties, the build's snapshot summary) and the metadata tables read from S3, by every
# kind of refresh (CREATE, NO CHANGE, INSERT, MERGE by a MERGE statement and by a rewrite,
# REFRESH). Which kind a history calls for, and the rows, are test_materialized_view_properties.py's
# random histories, on `local`.
@pytest.mark.only_profile("s3_rest")
class TestMaterializedViewOnRestCatalog:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"my_seed.csv": files.MY_SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_materialized_view.sql": files.MY_MATERIALIZED_VIEW,
            "value_totals.sql": VALUE_TOTALS_SQL,
            "value_totals_by_merge.sql": VALUE_TOTALS_SQL.replace(
                "materialized='materialized_view'",
                "materialized='materialized_view', mv_regroup_max_bytes=0",
            ),
        }

    def test_build_noop_and_refresh(self, project):
        run_dbt(["build"])
        expect(rows(project, "my_materialized_view"), [(1, 100), (2, 200), (3, 300)])
        recorded = properties(project, "my_materialized_view")
        assert recorded[upstream_key(project, "my_seed")] == main_head(project, "my_seed")
        before = snapshot_count(project, "my_materialized_view")
        _, out = run_dbt_and_capture(["run"])
        assert "nothing refreshed" in output_text(out)
        assert snapshot_count(project, "my_materialized_view") == before
        project.run_sql(f"insert into {table(project, 'my_seed')} values (4, 400)")
        view = "{{ lakehouse.mv_status(ref('my_materialized_view')) }}"
        status = f"select status, snapshots_behind from {view}"
        shown = run_dbt(["show", "--inline", status])
        assert [tuple(r) for r in shown.results[0].agate_table.rows] == [("stale", 1)]
        results = run_dbt(["run"])
        codes = {r.node.name: r.adapter_response["code"] for r in results.results}
        totals = ("value_totals", "value_totals_by_merge")
        assert codes == {"my_materialized_view": "INSERT", **dict.fromkeys(totals, "MERGE")}, codes
        expect(rows(project, "my_materialized_view"), [(1, 100), (2, 200), (3, 300), (4, 400)])
        for name in totals:
            expect(rows(project, name), [(0, 600, 2), (1, 400, 2)])
        records_committed(project, ("my_materialized_view", *totals))
        # An update: every view rebuilt whole.
        project.run_sql(f"update {table(project, 'my_seed')} set value = 101 where id = 1")
        results = run_dbt(["run"])
        codes = {r.node.name: r.adapter_response["code"] for r in results.results}
        assert set(codes.values()) == {"REFRESH"}, codes
        expect(rows(project, "my_materialized_view"), [(1, 101), (2, 200), (3, 300), (4, 400)])
        for name in totals:
            expect(rows(project, name), [(0, 600, 2), (1, 401, 2)])
        records_committed(project, ("my_materialized_view", *totals))


def records_committed(project, names: tuple[str, ...]) -> None:
    """Each view's record went through the REST catalog in its rows' own commit."""
    for name in names:
        committed = committed_record(project, name)
        assert committed[upstream_key(project, "my_seed")] == main_head(project, "my_seed")
        assert committed == properties(project, name)
