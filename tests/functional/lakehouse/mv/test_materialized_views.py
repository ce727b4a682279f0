"""Materialized views: built from the model's SQL with their upstreams' snapshots recorded in
table properties; a rerun with nothing moved is a no-op; any upstream write (insert, update,
delete), a schema change, `--full-refresh` or a watched setting rebuilds them with rows equal to
the query's, and appends under a row-by-row query are inserted alone (under a GROUP BY of sums
and counts: merged); an audited run that is not published leaves them reading `main`; their
status, with freshness thresholds, is readable from a model (`lakehouse.mv_status`) and the
console (`dbt-lakehouse mv status`).

The upstream `orders` is written with plain Spark SQL (another engine's commits); `my_seed` and
`my_materialized_view` are dbt-tests-adapter's own materialized-view fixtures
(dbt.tests.adapter.materialized_view.files). Through the REST catalog:
test_materialized_views_rest.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt.adapters.contracts.relation import RelationType
from dbt.tests.adapter.materialized_view import files
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.cli.main import main as lakehouse_cli
from functional.lakehouse.mv.mv_records import committed_record, main_head, properties, upstream_key
from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, snapshot_count, table

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: orders
"""

# A filter, a projection and an aggregate over one source; partitioning, the reaction to a
# changed setting and the freshness thresholds are vars, so the steps below change them without
# editing the file. Warned as soon as it is stale at all (past 0 minutes).
TOTALS_SQL = """
{{ config(materialized='materialized_view', partition_by=var('totals_partition', none),
          on_configuration_change=var('on_change', 'apply'),
          mv_regroup_max_bytes=var('totals_regroup', none),
          mv_freshness=var('totals_freshness', {'warn_after': {'count': 0, 'period': 'minute'},
                                                'error_after': {'count': 1, 'period': 'day'}})) }}
select customer, sum(amount) as total, count(*) as orders
from {{ source('raw', 'orders') }}
where amount > 0
group by customer
"""

# Row by row over one source: refreshed incrementally when the source only appended.
BIG_ORDERS_SQL = """
{{ config(materialized='materialized_view') }}
select id, upper(customer) as customer, amount * 10 as cents
from {{ source('raw', 'orders') }}
where amount > 4
"""

# An inner join of the source with a table model that does not move: appends to the source
# are joined alone.
ORDER_LABELS_SQL = """
{{ config(materialized='materialized_view') }}
select o.id, o.amount, l.label
from {{ source('raw', 'orders') }} o join {{ ref('labels') }} l on o.customer = l.customer
"""
# A seed: `dbt run` leaves it where it was (a table model would be replaced on every run).
LABELS_CSV = "customer,label\na,Ann\nb,Bo\nd,Di\n"

# Fails an audited run on demand (it refers to no upstream of my_materialized_view, so that
# view's node still runs in the audited run).
AUDIT_SQL = "select * from {{ ref('totals') }} where {{ var('audit_fails', 'false') }}"


def compiled_rows(project, model: str) -> list[tuple]:
    """The model's own SQL, as dbt compiled it, run directly: what the view must hold."""
    compiled = next(Path(project.project_root, "target", "compiled").rglob(f"{model}.sql"))
    found = project.run_sql(compiled.read_text(), fetch="all")
    return sorted((tuple(r) for r in found), key=repr)


def relation_type(project, name: str) -> str:
    """The type dbt's cache and get_relation see (the manifest names the view's model)."""
    adapter = project.adapter
    with adapter.connection_named("__test"):
        found = adapter.get_relation(project.database, project.test_schema, name)
    return str(found.type)


@pytest.mark.only_profile("local")
class TestMaterializedViews:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"my_seed.csv": files.MY_SEED, "labels.csv": LABELS_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "totals.sql": TOTALS_SQL,
            "big_orders.sql": BIG_ORDERS_SQL,
            "order_labels.sql": ORDER_LABELS_SQL,
            "my_materialized_view.sql": files.MY_MATERIALIZED_VIEW,
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {"audit_gate.sql": AUDIT_SQL}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    def test_1_build_records_upstreams(self, project):
        orders = table(project, "orders")
        project.run_sql(
            f"create table {orders} (id int, customer string, amount int) using iceberg"
        )
        project.run_sql(f"insert into {orders} values (1, 'a', 10), (2, 'a', 5), (3, 'b', 7)")
        run_dbt(["build"])
        expect(rows(project, "totals"), compiled_rows(project, "totals"))
        expect(rows(project, "big_orders"), compiled_rows(project, "big_orders"))
        expect(rows(project, "my_materialized_view"), [(1, 100), (2, 200), (3, 300)])
        recorded = properties(project, "totals")
        assert recorded[upstream_key(project, "orders")] == main_head(project, "orders")
        assert len(recorded["lakehouse.mv.sql_hash"]) == 64
        assert recorded["lakehouse.mv.refreshed_at"].endswith("Z")
        seed_record = properties(project, "my_materialized_view")
        assert seed_record[upstream_key(project, "my_seed")] == main_head(project, "my_seed")

    def test_2_rerun_is_a_noop(self, project):
        before = {
            n: snapshot_count(project, n) for n in ("totals", "big_orders", "my_materialized_view")
        }
        recorded = properties(project, "totals")
        results, out = run_dbt_and_capture(["run"])
        assert output_text(out).count("nothing refreshed (only metadata was read") == 4
        for result in results.results:
            response = result.adapter_response
            assert response["code"] == "NO CHANGE", response
            assert not response.get("snapshots") and not response.get("bytes_written"), response
        assert {n: snapshot_count(project, n) for n in before} == before
        assert properties(project, "totals") == recorded
        expect(rows(project, "totals"), compiled_rows(project, "totals"))

    def test_3_upstream_writes_rebuild(self, project):
        orders = table(project, "orders")
        # A schema change alone commits no snapshot (main stays), yet is seen.
        project.run_sql(f"alter table {orders} add column note string")
        results = run_dbt(["run", "-s", "big_orders"])
        assert results.results[0].adapter_response["code"] == "REFRESH"
        # An insert, an update and a delete: three commits.
        project.run_sql(f"insert into {orders} values (4, 'c', 3, null), (5, 'b', -1, null)")
        project.run_sql(f"update {orders} set amount = 50 where id = 2")
        project.run_sql(f"delete from {orders} where id = 3")
        before = snapshot_count(project, "totals")
        results = run_dbt(["run", "-s", "totals", "big_orders", "order_labels"])
        # Not appends only: each rebuilt whole.
        assert {r.adapter_response["code"] for r in results.results} == {"REFRESH"}
        assert snapshot_count(project, "totals") == before + 1
        expect(rows(project, "totals"), compiled_rows(project, "totals"))
        expect(rows(project, "totals"), [("a", 60, 2), ("c", 3, 1)])
        expect(rows(project, "big_orders"), compiled_rows(project, "big_orders"))
        expect(rows(project, "order_labels"), compiled_rows(project, "order_labels"))
        assert properties(project, "totals")[upstream_key(project, "orders")] == main_head(
            project, "orders"
        )

    def test_4_rollback_and_full_refresh_rebuild(self, project):
        # The view's table set back to its first build: its properties (not versioned) still
        # name the newest upstream snapshots, but its main no longer holds that build's rows.
        totals = table(project, "totals")
        project.run_sql(f"refresh table {totals}")
        first = project.run_sql(
            f"select snapshot_id from {totals}.snapshots order by committed_at limit 1",
            fetch="one",
        )[0]
        project.run_sql(
            f"call `{project.database}`.system.set_current_snapshot("
            f"'`{project.test_schema}`.`totals`', {first})"
        )
        assert rows(project, "totals") != compiled_rows(project, "totals")
        run_dbt(["run", "-s", "totals"])
        expect(rows(project, "totals"), compiled_rows(project, "totals"))
        before = snapshot_count(project, "totals")
        _, out = run_dbt_and_capture(["--debug", "run", "-s", "totals", "--full-refresh"])
        assert f"Applying REPLACE to: {table(project, 'totals')}" in output_text(out)
        assert snapshot_count(project, "totals") == before + 1
        expect(rows(project, "totals"), compiled_rows(project, "totals"))

    def test_5_on_configuration_change(self, project):
        recorded = properties(project, "totals")
        # A malformed threshold fails the node before anything is read or written.
        malformed = "{totals_freshness: {warn_after: {count: 1}}}"
        _, out = run_dbt_and_capture(
            ["run", "-s", "totals", "--vars", malformed], expect_pass=False
        )
        assert "materialized_view model 'totals': mv_freshness takes warn_after" in output_text(out)
        # So does a malformed mv_regroup_max_bytes, on a run with nothing to fold in.
        _, out = run_dbt_and_capture(
            ["run", "-s", "totals", "--vars", "{totals_regroup: 64MB}"], expect_pass=False
        )
        assert "mv_regroup_max_bytes must be a whole number of bytes" in output_text(out)
        changed = "{totals_partition: customer, on_change: fail}"
        _, out = run_dbt_and_capture(["run", "-s", "totals", "--vars", changed], expect_pass=False)
        assert "`on_configuration_change` was set to `fail`" in output_text(out)
        assert properties(project, "totals") == recorded
        run_dbt(["run", "-s", "totals", "--vars", "{totals_partition: customer}"])
        now = properties(project, "totals")
        assert now["lakehouse.mv.config_hash"] != recorded["lakehouse.mv.config_hash"]
        spec = project.run_sql(f"describe table {table(project, 'totals')}", fetch="all")
        names = [str(r[0]) for r in spec]
        assert names[names.index("# Partition Information") + 2 :] == ["customer"], spec
        expect(rows(project, "totals"), compiled_rows(project, "totals"))

    def test_6_unpublished_audited_run_leaves_main(self, project):
        seed = Path(project.project_root) / "seeds" / "my_seed.csv"
        seed.write_text(files.MY_SEED + "\n4,400\n")
        before = rows(project, "my_materialized_view")
        _, out = run_dbt_and_capture(
            ["build", "--target", "audited", "--vars", "{audit_fails: 'true'}"], expect_pass=False
        )
        assert "is not refreshed in an audited run" in output_text(out)
        # The seed's new row is on the run's branch only; the view refreshed now reads main.
        _, out = run_dbt_and_capture(["run", "-s", "my_materialized_view"])
        assert "nothing refreshed" in output_text(out)
        expect(rows(project, "my_materialized_view"), before)
        assert relation_type(project, "my_materialized_view") == RelationType.MaterializedView
        # dbt docs: the catalog types both views so.
        catalog = run_dbt(["docs", "generate"])
        types = {n.metadata.name: n.metadata.type for n in catalog.nodes.values()}
        assert types["totals"] == types["my_materialized_view"] == "materialized_view", types
        assert types["my_seed"] == "table", types

    def test_7_status(self, project, capsys):
        orders = table(project, "orders")
        project.run_sql(f"insert into {orders} values (6, 'd', 1, null)")
        project.run_sql(f"insert into {orders} values (7, 'a', 20, null)")
        status_sql = "select * from {{ lakehouse.mv_status(ref('totals')) }}"
        shown = run_dbt(["show", "--inline", status_sql])
        table_rows = shown.results[0].agate_table.rows
        found = [(r["status"], r["snapshots_behind"], r["freshness"]) for r in table_rows]
        assert found == [("stale", 2, "warn")]
        where = ["--profiles-dir", str(project.profiles_dir)]
        where += ["--project-dir", str(project.project_root)]
        code = lakehouse_cli(["mv", "status", "--check", *where])
        out = capsys.readouterr().out
        # big_orders sets no thresholds: stale fails --check, as it always did.
        assert code == 1, out
        totals = f"{project.database}.{project.test_schema}.totals"
        assert f"{totals}: stale, warn: stale for " in out
        assert "over warn_after 0 minutes" in out
        assert "orders: moved 2 snapshots since" in out
        assert f"{project.database}.{project.test_schema}.my_materialized_view: fresh" in out
        # Past warn_after only: a warning and exit 0 (as dbt source freshness), unless
        # --warn-error.
        assert lakehouse_cli(["mv", "status", totals, "--check", *where]) == 0
        assert f"warning: stale past warn_after: {totals}" in capsys.readouterr().out
        assert lakehouse_cli(["mv", "status", totals, "--check", "--warn-error", *where]) == 1
        # Past error_after: the show's parse writes the manifest the CLI reads thresholds from.
        errors = "{totals_freshness: {error_after: {count: 0, period: minute}}}"
        shown = run_dbt(["show", "--inline", status_sql, "--vars", errors])
        assert [r["freshness"] for r in shown.results[0].agate_table.rows] == ["error"]
        capsys.readouterr()
        assert lakehouse_cli(["mv", "status", totals, "--check", *where]) == 1
        assert "over error_after 0 minutes" in capsys.readouterr().out
        # Two appends upstream: the row-by-row views insert the query over them alone (the
        # join's unchanged side, labels, read whole); the aggregate (its partitioning as last
        # built, so no setting changed) merges the aggregate over them: group a combined, group
        # d new.
        before = snapshot_count(project, "big_orders")
        results, out = run_dbt_and_capture(
            [
                "--debug",
                "run",
                "-s",
                "big_orders",
                "order_labels",
                "totals",
                "--vars",
                "{totals_partition: customer}",
            ]
        )
        codes = {r.node.name: r.adapter_response["code"] for r in results.results}
        assert codes == {"big_orders": "INSERT", "order_labels": "INSERT", "totals": "MERGE"}, [
            line for line in output_text(out).splitlines() if "materialized view" in line
        ]
        # A view this small is rewritten, regrouped (mv/aggregate.py), partitions and all.
        assert re.search(r"insert overwrite table \S*totals`?\s+select", output_text(out))
        # Its three groups' rows replaced or added, none removed: a merge's count (report/).
        folded = next(r.adapter_response for r in results.results if r.node.name == "totals")
        assert (folded["rows_inserted"] + folded["rows_updated"], folded["rows_deleted"]) == (3, 0)
        assert snapshot_count(project, "big_orders") == before + 1
        expect(rows(project, "big_orders"), compiled_rows(project, "big_orders"))
        expect(rows(project, "big_orders"), [(1, "A", 100), (2, "A", 500), (7, "A", 200)])
        expect(rows(project, "totals"), compiled_rows(project, "totals"))
        expect(rows(project, "totals"), [("a", 80, 3), ("c", 3, 1), ("d", 1, 1)])
        expect(rows(project, "order_labels"), compiled_rows(project, "order_labels"))
        expect(
            rows(project, "order_labels"),
            [(1, 10, "Ann"), (2, 50, "Ann"), (5, -1, "Bo"), (6, 1, "Di"), (7, 20, "Ann")],
        )
        # The record is in the MERGE's own commit; the properties mirror it.
        committed = committed_record(project, "totals")
        assert committed[upstream_key(project, "orders")] == main_head(project, "orders")
        assert committed == properties(project, "totals")

    def test_8_properties_that_do_not_mirror_the_commit_are_rewritten(self, project):
        # As if the write after the rows' commit had failed: the next run reads the record
        # from the commit (nothing moved: no rows read or written) and rewrites the mirror.
        committed = committed_record(project, "big_orders")
        view = table(project, "big_orders")
        project.run_sql(f"alter table {view} set tblproperties ('lakehouse.mv.sql_hash' = 'x')")
        before = snapshot_count(project, "big_orders")
        results, out = run_dbt_and_capture(["run", "-s", "big_orders"])
        assert results.results[0].adapter_response["code"] == "NO CHANGE"
        assert "did not mirror the record committed with its rows: rewritten" in output_text(out)
        assert properties(project, "big_orders") == committed
        assert snapshot_count(project, "big_orders") == before
