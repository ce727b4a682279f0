"""Audited runs (profile key `write_audit_publish`): a run's commits wait on an Iceberg branch
and reach `main` only when every node passed.

One project, one story, each step building on the one before (the steps run in order):
a plain build (the rows readers start with); an audited build whose test fails (nothing moves
on `main`, a second process sees the old rows, the branch holds the new ones, a table created
by the run shows no rows on main) and its publish; a failed audited build discarded; audited
builds that pass (a full refresh and a rerun: published in one run, branch gone, same rows);
and two audited runs on the same tables where the second publishes first, so the first one's
publish must fail cleanly and lose nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.audit.run import branch_for
from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.dbt_output import output_text

ORDERS_SQL = "{{ config(materialized='table') }}\nselect id, amount from {{ ref('raw_orders') }}"
ORDERS_INC_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
select id, amount from {{ ref('orders') }}
"""
# Added to the project just before the first audited run, which creates it.
NEW_TBL_SQL = "{{ config(materialized='table') }}\nselect id from {{ ref('orders') }}"
SNAPSHOT_YML = """
snapshots:
  - name: orders_snap
    relation: ref('orders')
    config:
      unique_key: id
      strategy: check
      check_cols: all
"""
# Opted out: its writes land on main at once, even in an audited run.
ORDERS_DIRECT_SQL = """
{{ config(materialized='table', write_audit_publish=false) }}
select id, amount from {{ ref('raw_orders') }}
"""
# On the leaf, so a failing batch still builds every table before the test fails.
NO_NEGATIVE_SQL = "select * from {{ ref('orders_inc') }} where amount < 0"

TABLES = ("raw_orders", "orders", "orders_inc", "orders_snap")


def csv(rows: dict[int, int]) -> str:
    return "id,amount\n" + "".join(f"{k},{v}\n" for k, v in sorted(rows.items()))


class TestAuditedRuns:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"raw_orders.csv": csv({1: 10, 2: 20})}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "orders.sql": ORDERS_SQL,
            "orders_inc.sql": ORDERS_INC_SQL,
            "orders_direct.sql": ORDERS_DIRECT_SQL,
        }

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"orders_snap.yml": SNAPSHOT_YML}

    @pytest.fixture(scope="class")
    def tests(self) -> dict[str, str]:
        return {"no_negative_amounts.sql": NO_NEGATIVE_SQL}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    # ---- helpers -----------------------------------------------------------------------------

    def name(self, project: Any, table: str) -> str:
        return f"`{project.database}`.`{project.test_schema}`.`{table}`"

    def rows(self, project: Any, table: str, ref: str | None = None) -> list[tuple]:
        name = self.name(project, table)
        project.run_sql(f"refresh table {name}")
        version = f" version as of '{ref}'" if ref else ""
        found = project.run_sql(f"select id, amount from {name}{version}", fetch="all")
        return sorted(tuple(r) for r in found)

    def refs(self, project: Any, table: str) -> dict[str, int]:
        name = self.name(project, table)
        project.run_sql(f"refresh table {name}")
        return {
            r[0]: r[1]
            for r in project.run_sql(f"select name, snapshot_id from {name}.refs", fetch="all")
        }

    def mains(self, project: Any) -> dict[str, int | None]:
        return {t: self.refs(project, t).get("main") for t in TABLES}

    def write_seed(self, project: Any, rows: dict[int, int]) -> None:
        (Path(project.project_root) / "seeds" / "raw_orders.csv").write_text(csv(rows))

    def branch_of_last_run(self, project: Any) -> str:
        results = json.loads(
            (Path(project.project_root) / "target" / "run_results.json").read_text()
        )
        return branch_for(results["metadata"]["invocation_id"])

    def audited_build(
        self, project: Any, v: int, *extra: str, expect_pass: bool = True
    ) -> tuple[str, str]:
        _, out = run_dbt_and_capture(
            ["build", "--target", "audited", "--vars", f"{{v: {v}}}", *extra],
            expect_pass=expect_pass,
        )
        return self.branch_of_last_run(project), output_text(out)

    def second_process_rows(self, project: Any, table: str) -> list[tuple]:
        """What a reader in another process, without the key, sees."""
        dbt = str(Path(sys.executable).with_name("dbt"))
        done = subprocess.run(
            [
                dbt,
                "show",
                "--inline",
                f"select id, amount from {self.name(project, table)}",
                "--limit",
                "100",
                "--output",
                "json",
                "--log-format",
                "json",
                "--project-dir",
                str(project.project_root),
                "--profiles-dir",
                str(project.profiles_dir),
                "--target-path",
                str(Path(project.project_root) / "reader_target"),
            ],
            cwd=project.project_root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        for line in done.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            preview = event.get("data", {}).get("preview")
            if preview:
                return sorted((r["id"], r["amount"]) for r in json.loads(preview))
        raise AssertionError(f"no preview in dbt show output:\n{done.stdout[-3000:]}")

    # ---- the story ---------------------------------------------------------------------------

    def test_failed_audit_then_publish(self, project: Any) -> None:
        run_dbt(["build", "--vars", "{v: 1}"])
        before = self.mains(project)
        assert self.rows(project, "orders") == [(1, 10), (2, 20)]

        self.write_seed(project, {1: 11, 2: -5, 3: 30})
        (Path(project.project_root) / "models" / "new_tbl.sql").write_text(NEW_TBL_SQL)
        branch, out = self.audited_build(project, 2, expect_pass=False)

        # Nothing moved on main; a plain reader, here and in another process, sees the old rows.
        assert self.mains(project) == before
        assert self.rows(project, "orders") == [(1, 10), (2, 20)]
        assert self.rows(project, "orders_inc") == [(1, 10), (2, 20)]
        assert self.second_process_rows(project, "orders_inc") == [(1, 10), (2, 20)]
        # The branch holds the run's rows: seed, table, incremental merge, snapshot, new table.
        new_rows = [(1, 11), (2, -5), (3, 30)]
        for table in ("raw_orders", "orders", "orders_inc"):
            assert self.rows(project, table, branch) == new_rows, table
        assert branch in self.refs(project, "orders_snap")
        snap = self.name(project, "orders_snap")
        current = project.run_sql(
            f"select id, amount from {snap} version as of '{branch}' where dbt_valid_to is null",
            fetch="all",
        )
        assert sorted(tuple(r) for r in current) == new_rows
        # The model that opted out wrote main directly (from the rows the run saw).
        assert self.rows(project, "orders_direct") == new_rows
        assert set(self.refs(project, "orders_direct")) == {"main"}
        # A table the run created has no main yet: readers see it empty.
        new_tbl = self.name(project, "new_tbl")
        assert set(self.refs(project, "new_tbl")) == {branch}
        assert project.run_sql(f"select count(*) from {new_tbl}", fetch="one")[0] == 0
        # The output names the branch and the two commands that end it.
        assert "Audited run not published" in out
        assert f"lakehouse_publish --args '{{branch: {branch}}}'" in out
        assert f"lakehouse_discard --args '{{branch: {branch}}}'" in out

        run_dbt(
            [
                "run-operation",
                "lakehouse_publish",
                "--args",
                f"{{branch: {branch}}}",
                "--vars",
                "{v: 2}",
            ]
        )
        for table in ("raw_orders", "orders", "orders_inc"):
            assert self.rows(project, table) == new_rows, table
            assert set(self.refs(project, table)) == {"main"}, table
        assert sorted(r[0] for r in project.run_sql(f"select id from {new_tbl}", fetch="all")) == [
            1,
            2,
            3,
        ]

    # Dropping the branch is one ref change, which the publish and the racing runs already
    # make through every catalog (CI time).
    @pytest.mark.only_profile("local")
    def test_failed_audit_then_discard(self, project: Any) -> None:
        before = self.mains(project)
        self.write_seed(project, {1: 12, 2: -22})
        branch, _ = self.audited_build(project, 3, expect_pass=False)
        assert self.rows(project, "orders", branch) == [(1, 12), (2, -22)]

        run_dbt(
            [
                "run-operation",
                "lakehouse_discard",
                "--args",
                f"{{branch: {branch}}}",
                "--vars",
                "{v: 3}",
            ]
        )
        assert self.mains(project) == before
        for table in TABLES:
            assert branch not in self.refs(project, table), table
        assert self.rows(project, "orders") == [(1, 11), (2, -5), (3, 30)]

    def test_passing_audits_publish_in_the_run(self, project: Any, request: Any) -> None:
        self.write_seed(project, {1: 13, 2: 23, 4: 40})
        expected = [(1, 13), (2, 23), (4, 40)]
        # A full refresh (every table replaced on the branch), then a rerun: same rows. The
        # rerun's publish in the run is the racing runs' second one on every profile, so it
        # runs here on local only (CI time).
        rerun: list[list[str]] = [[]] if request.config.getoption("--profile") == "local" else []
        for extra in [["--full-refresh"], *rerun]:
            branch, out = self.audited_build(project, 4, *extra)
            assert "Audited run published" in out
            for table in ("raw_orders", "orders", "orders_inc"):
                assert self.rows(project, table) == expected, (extra, table)
                assert set(self.refs(project, table)) == {"main"}, (extra, table)
            assert branch not in self.refs(project, "orders_snap")

    def test_racing_runs_one_publishes_other_fails_cleanly(self, project: Any) -> None:
        # Run A branches and fails its test; run B branches from the same main and publishes.
        self.write_seed(project, {1: -1})
        branch_a, _ = self.audited_build(project, 5, expect_pass=False)
        self.write_seed(project, {1: 16, 2: 26})
        branch_b, _ = self.audited_build(project, 6)
        assert branch_a != branch_b
        published = self.mains(project)

        # A's publish now finds main moved by B: it fails naming the table and both snapshots.
        _, out = run_dbt_and_capture(
            [
                "run-operation",
                "lakehouse_publish",
                "--args",
                f"{{branch: {branch_a}}}",
                "--vars",
                "{v: 5}",
            ],
            expect_pass=False,
        )
        text = output_text(out)
        orders_refs = self.refs(project, "orders")
        assert f"Cannot publish branch {branch_a}" in text
        assert (
            f"snapshot {orders_refs['main']}" in text
            and f"snapshot {orders_refs[branch_a]}" in text
        )
        assert f"{project.database}.{project.test_schema}.orders:" in text
        # Nothing lost: main keeps B's rows, A's branch keeps A's rows.
        assert self.mains(project) == published
        assert self.rows(project, "orders") == [(1, 16), (2, 26)]
        assert self.rows(project, "orders", branch_a) == [(1, -1)]

        run_dbt(
            [
                "run-operation",
                "lakehouse_discard",
                "--args",
                f"{{branch: {branch_a}}}",
                "--vars",
                "{v: 5}",
            ]
        )
        assert branch_a not in self.refs(project, "orders")
