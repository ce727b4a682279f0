"""`lakehouse.changes`: incremental models reading only what changed upstream, exact across an
insert, an update, a delete, several upstream writes between runs, a failed run, a rerun, an
upstream rollback (changes lost: rebuilt, or failing by config) and a full refresh.

The upstreams are written with plain Spark SQL, not dbt: another engine's commits. The main
case runs on both profiles (the embedded JDBC catalog, and the REST catalog on S3); the audited
one on `local`; test_catalogs.py reads changes on the hadoop, jdbc and glue catalogs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.audit.run import branch_for
from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows, table

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: orders
      - name: refunds
"""

# The upstream's current rows, kept by merging its changes: updates and deletes applied.
CURRENT_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(source('raw', 'orders')) }}
where {{ var('guard', 'true') }}
"""
# Every row ever inserted upstream (append of inserts); and every change event of two
# upstreams at once (the change type renamed, so it is the model's own column).
INSERTED_SQL = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select * from {{ lakehouse.changes(source('raw', 'orders')) }}
"""
BOTH_SQL = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select 'order' as kind, id, amount, _change_type as change
from {{ lakehouse.changes(source('raw', 'orders')) }}
union all
select 'refund', id, amount, _change_type from {{ lakehouse.changes(source('raw', 'refunds')) }}
"""
# Changes lost make this one fail instead of rebuilding.
STRICT_SQL = """
{{ config(materialized='incremental', unique_key='id', on_lost_changes='fail') }}
select * from {{ lakehouse.changes(source('raw', 'orders')) }}
"""

MODELS = ["current", "inserted", "both", "strict"]


def upstream(project, name: str) -> str:
    return table(project, name)


def head(project, name: str) -> int:
    project.run_sql(f"refresh table {table(project, name)}")
    return project.run_sql(
        f"select snapshot_id from {table(project, name)}.refs where name = 'main'", fetch="one"
    )[0]


def record(project, model: str, upstream_name: str) -> str | None:
    """The upstream snapshot the model's current snapshot records as consumed."""
    project.run_sql(f"refresh table {table(project, model)}")
    key = f"dbt.changes.{project.database}.{project.test_schema}.{upstream_name}"
    return project.run_sql(
        f"select s.summary['{key}'] from {table(project, model)}.snapshots s "
        f"join {table(project, model)}.refs r on r.snapshot_id = s.snapshot_id "
        "where r.name = 'main'",
        fetch="one",
    )[0]


# Changes are read from the table's snapshots, the same whatever catalog and storage hold them:
# the embedded lakehouse only (docs/tests.md).
@pytest.mark.only_profile("local")
class TestChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_YML,
            "current.sql": CURRENT_SQL,
            "inserted.sql": INSERTED_SQL,
            "both.sql": BOTH_SQL,
            "strict.sql": STRICT_SQL,
        }

    def test_changes_across_runs(self, project):
        orders, refunds = upstream(project, "orders"), upstream(project, "refunds")
        project.run_sql(f"create table {orders} (id int, amount int) using iceberg")
        # refunds writes merge-on-read: its delete is a delete file, which Iceberg's changelog
        # refuses, so its changes are read as the difference of two snapshots.
        project.run_sql(
            f"create table {refunds} (id int, amount int) using iceberg tblproperties "
            "('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
        )
        project.run_sql(f"insert into {orders} values (1, 10), (2, 20), (3, 30)")
        # One data file for both rows, so deleting one of them cannot drop a whole file.
        project.run_sql(
            f"insert into {refunds} select /*+ COALESCE(1) */ * from values (7, 70), (9, 90)"
        )

        def upstream_rows():
            return rows(project, "orders")

        # First run: everything, every row an insert; a rerun reads nothing new.
        for _ in range(2):
            run_dbt(["run", "-s", *MODELS])
            expect(rows(project, "current"), upstream_rows())
            expect(rows(project, "inserted"), [(1, 10), (2, 20), (3, 30)])
            expect(
                rows(project, "both"),
                [
                    ("order", 1, 10, "INSERT"),
                    ("order", 2, 20, "INSERT"),
                    ("order", 3, 30, "INSERT"),
                    ("refund", 7, 70, "INSERT"),
                    ("refund", 9, 90, "INSERT"),
                ],
            )
        assert record(project, "current", "orders") == str(head(project, "orders"))
        assert record(project, "both", "refunds") == str(head(project, "refunds"))
        before_changes = head(project, "orders")

        # Three upstream commits between two runs: an insert, an update, a delete.
        project.run_sql(f"insert into {orders} values (4, 40)")
        project.run_sql(f"update {orders} set amount = 21 where id = 2")
        project.run_sql(f"delete from {orders} where id = 1")
        project.run_sql(f"insert into {refunds} values (8, 80)")
        project.run_sql(f"delete from {refunds} where id = 7")
        run_dbt(["run", "-s", *MODELS])
        expect(rows(project, "current"), [(2, 21), (3, 30), (4, 40)])
        expect(rows(project, "strict"), [(2, 21), (3, 30), (4, 40)])
        expect(rows(project, "inserted"), [(1, 10), (2, 20), (3, 30), (4, 40), (2, 21)])
        expect(
            rows(project, "both"),
            [
                ("order", 1, 10, "INSERT"),
                ("order", 2, 20, "INSERT"),
                ("order", 3, 30, "INSERT"),
                ("refund", 7, 70, "INSERT"),
                ("refund", 9, 90, "INSERT"),
                ("order", 4, 40, "INSERT"),
                ("order", 2, 21, "INSERT"),
                ("order", 2, 20, "DELETE"),
                ("order", 1, 10, "DELETE"),
                ("refund", 8, 80, "INSERT"),
                ("refund", 7, 70, "DELETE"),
            ],
        )
        deletes = project.run_sql(f"select count(*) from {refunds}.delete_files", fetch="one")[0]
        assert deletes == 1, "the refunds delete should have written a delete file"
        consumed = head(project, "orders")
        assert record(project, "current", "orders") == str(consumed)

        # A failed run consumes nothing: the next run still applies the update it missed.
        project.run_sql(f"update {orders} set amount = 31 where id = 3")
        failing = json.dumps({"guard": "raise_error('boom') is null"})
        run_dbt(["run", "-s", "current", "--vars", failing], expect_pass=False)
        assert record(project, "current", "orders") == str(consumed)
        expect(rows(project, "current"), [(2, 21), (3, 30), (4, 40)])
        run_dbt(["run", "-s", "current"])
        expect(rows(project, "current"), [(2, 21), (3, 31), (4, 40)])

        # The upstream rolled back past what was consumed: the changes are lost. By default the
        # model is rebuilt from the whole upstream; with on_lost_changes: fail it fails.
        project.run_sql(
            f"call `{project.database}`.system.rollback_to_snapshot("
            f"'`{project.test_schema}`.`orders`', {before_changes})"
        )
        expect(upstream_rows(), [(1, 10), (2, 20), (3, 30)])
        results, output = run_dbt_and_capture(["run", "-s", *MODELS], expect_pass=False)
        text = output_text(output)
        assert "is not an ancestor of its current snapshot" in text
        assert "Fix: run the model with --full-refresh" in text
        assert [r.node.name for r in results if r.status == "error"] == ["strict"]
        expect(rows(project, "current"), [(1, 10), (2, 20), (3, 30)])
        expect(rows(project, "inserted"), [(1, 10), (2, 20), (3, 30)])
        expect(rows(project, "strict"), [(2, 21), (3, 30), (4, 40)])

        # A full refresh reads everything: the same tables as the rebuild; then a rerun.
        for extra in (["--full-refresh"], []):
            run_dbt(["run", "-s", *MODELS, *extra])
            for model in ("current", "strict"):
                expect(rows(project, model), [(1, 10), (2, 20), (3, 30)])
            expect(rows(project, "inserted"), [(1, 10), (2, 20), (3, 30)])
            assert record(project, "strict", "orders") == str(before_changes)

        # The consumed snapshot expired: lost again, `current` rebuilt from the whole upstream.
        project.run_sql(f"insert into {orders} values (5, 50)")
        project.run_sql(
            f"call `{project.database}`.system.expire_snapshots(table => "
            f"'`{project.test_schema}`.`orders`', "
            "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
        )
        _, output = run_dbt_and_capture(["run", "-s", "current"])
        assert "is no longer in its history" in output_text(output)
        expect(rows(project, "current"), [(1, 10), (2, 20), (3, 30), (5, 50)])


NO_NEGATIVE_SQL = "select * from {{ ref('current') }} where amount < 0"


def seed_csv(rows: dict[int, int]) -> str:
    return "id,amount\n" + "".join(f"{k},{v}\n" for k, v in sorted(rows.items()))


@pytest.mark.only_profile("local")
class TestChangesInAuditedRuns:
    """An audited run reads its upstream's changes on the run's branch (where the run wrote
    them) and records their consumption on `main` only when the branch is published."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"raw_orders.csv": seed_csv({1: 10, 2: 20})}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "current.sql": """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('raw_orders')) }}
"""
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {"no_negative_amounts.sql": NO_NEGATIVE_SQL}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    def test_consumed_only_when_published(self, project):
        seed_file = Path(project.project_root) / "seeds" / "raw_orders.csv"
        run_dbt(["build"])
        expect(rows(project, "current"), [(1, 10), (2, 20)])
        consumed = record(project, "current", "raw_orders")
        assert consumed == str(head(project, "raw_orders"))

        # A failing audit: the branch holds the changes read from the seed's branch; main and
        # its record stay as they were.
        seed_file.write_text(seed_csv({1: 11, 2: -5, 3: 30}))
        run_dbt(["build", "--target", "audited"], expect_pass=False)
        branch = branch_of_last_run(project)
        project.run_sql(f"refresh table {table(project, 'current')}")
        found = project.run_sql(
            f"select id, amount from {table(project, 'current')} version as of '{branch}'",
            fetch="all",
        )
        expect(sorted(tuple(r) for r in found), [(1, 11), (2, -5), (3, 30)])
        expect(rows(project, "current"), [(1, 10), (2, 20)])
        assert record(project, "current", "raw_orders") == consumed
        run_dbt(["run-operation", "lakehouse_discard", "--args", f"{{branch: {branch}}}"])

        # Fixed and published: the changes since the last consumption are applied, once.
        seed_file.write_text(seed_csv({1: 11, 3: 30}))
        run_dbt(["build", "--target", "audited"])
        expect(rows(project, "current"), [(1, 11), (3, 30)])
        assert record(project, "current", "raw_orders") == str(head(project, "raw_orders"))
        run_dbt(["build", "--target", "audited"])
        expect(rows(project, "current"), [(1, 11), (3, 30)])


def branch_of_last_run(project) -> str:
    results = json.loads((Path(project.project_root) / "target" / "run_results.json").read_text())
    return branch_for(results["metadata"]["invocation_id"])
