"""Format v3 (`format_version: 3`): deletion vectors and row lineage, on real Spark and Iceberg.

One project, four dbt invocations, each step reading what the one before left:
1. round 1 (`dbt build`): a v3 merge-on-read incremental model, a v2 one and a v2 snapshot to
   upgrade later, a v3 table model, a v3 dual-format (Delta log) model; refused before
   writing: a v3 dual-format model with merge-on-read (deletion vectors cannot go into the
   Delta log) and a format_version 4.
2. round 2, incremental: the v3 merge writes deletion vectors (Puffin) and keeps updated rows'
   `_row_id`; the v2 table and the snapshot are upgraded to v3 before their writes, and the
   table's deletes are then deletion vectors too; delta-rs reads the dual-format table's rows
   as Spark does.
3. round 2 again with --full-refresh: the same rows as the incremental run left, still v3.
4. asking the upgraded table and snapshot for v2: refused naming the table, nothing written.
"""

from __future__ import annotations

from typing import Any

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.models.test_tables_and_views import current_metadata
from functional.lakehouse.shared.delta_readers import (
    DeltaReaders,
    describe,
    profile_readers,
    spark_rows,
)
from functional.lakehouse.shared.tables import current_snapshot, rows, table


@pytest.fixture(scope="class")
def readers(request: pytest.FixtureRequest) -> DeltaReaders:
    """delta-rs on the profile's storage, as in the Delta format tests."""
    return profile_readers(request)


MOR = (
    "{'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read', "
    "'write.delete.mode': 'merge-on-read'}"
)
# Rows are a function of var('round') alone: round 2 changes ids divisible by 5, deletes ids
# divisible by 7 (delete_condition) and adds ids 30-34. The incremental run reads only those.
ROWS = """
select id, p, v, op from (
  select id, cast(id % 3 as int) as p,
         case when {{ var('round') }} >= 2 and id % 5 = 0 then 'changed' else 'first' end as v,
         case when {{ var('round') }} >= 2 and id % 7 = 0 then 'd' else 'u' end as op
  from range(0, 30 + ({{ var('round') }} - 1) * 5)
) as r
{% if is_incremental() %} where id % 5 = 0 or id % 7 = 0 or id >= 30 {% endif %}
"""
MERGE = "materialized='incremental', unique_key='id', delete_condition=\"op = 'd'\""

MODELS = {
    "orders_v3.sql": (
        f"{{{{ config({MERGE}, format_version=3, partition_by=['p'], table_properties={MOR}) }}}}"
        + ROWS
    ),
    "upgraded.sql": (
        f"{{{{ config({MERGE}, format_version=var('upgrade_to', 2), table_properties={MOR}) }}}}"
        + ROWS
    ),
    "daily_v3.sql": "{{ config(materialized='table', format_version='3') }}\nselect 1 as id",
    "dual_v3.sql": (
        f"{{{{ config({MERGE}, format_version=3, table_formats=['iceberg', 'delta']) }}}}" + ROWS
    ),
    "dual_mor_v3.sql": (
        "{{ config(materialized='table', format_version=3, table_formats=['iceberg', 'delta'], "
        f"table_properties={MOR}) }}}}\nselect 1 as id"
    ),
    "bad_version.sql": "{{ config(materialized='table', format_version=4) }}\nselect 1 as id",
}


def expected_round_2() -> list[tuple]:
    found = [(i, i % 3, "changed" if i % 5 == 0 else "first", "u") for i in range(35)]
    return sorted((r for r in found if r[0] % 7 != 0), key=repr)


def format_version(project: Any, name: str) -> int:
    return int(current_metadata(project, name)["format-version"])


def delete_formats(project: Any, name: str) -> set[str]:
    found = project.run_sql(
        f"select distinct file_format from {table(project, name)}.delete_files", fetch="all"
    )
    return {str(r[0]) for r in found}


def lineage(project: Any, name: str) -> dict[int, tuple[int, int]]:
    found = project.run_sql(
        f"select id, _row_id, _last_updated_sequence_number from {table(project, name)}",
        fetch="all",
    )
    return {int(r[0]): (r[1], r[2]) for r in found}


def refused(results: Any, name: str, *reasons: str) -> None:
    result = next(r for r in results if r.node.name == name)
    assert result.status == "error", f"{name} was not refused: {result.status}"
    for reason in reasons:
        assert reason in (result.message or ""), f"{reason!r} not in: {result.message}"


SNAPSHOT = """
{% snapshot snap %}
{{ config(unique_key='id', strategy='check', check_cols=['v'],
          format_version=var('upgrade_to', 2)) }}
select id, v from {{ ref('orders_v3') }}
{% endsnapshot %}
"""


class TestFormatV3:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap.sql": SNAPSHOT}

    def test_first_run_and_refusals(self, project: Any) -> None:
        results = run_dbt(["build", "--vars", "{round: 1}"], expect_pass=False)
        assert {r.node.name for r in results if r.status == "success"} == {
            "orders_v3",
            "upgraded",
            "daily_v3",
            "dual_v3",
            "snap",
        }
        refused(results, "dual_mor_v3", "deletion vectors", "Nothing was written")
        refused(results, "bad_version", "format_version of Model 'bad_version' is 4", "1, 2 or 3")
        schema = f"`{project.database}`.`{project.test_schema}`"
        shown = {r[1] for r in project.run_sql(f"show tables in {schema}", fetch="all")}
        assert not {"dual_mor_v3", "bad_version"} & shown
        for name in ("orders_v3", "daily_v3", "dual_v3"):
            assert format_version(project, name) == 3, name
        assert format_version(project, "upgraded") == 2
        assert format_version(project, "snap") == 2

    def test_incremental_run_deletion_vectors_lineage_upgrade(
        self, project: Any, readers: DeltaReaders
    ) -> None:
        before = lineage(project, "orders_v3")
        selected = ["--select", "orders_v3 upgraded dual_v3 snap"]
        run_dbt(["build", "--vars", "{round: 2, upgrade_to: 3}", *selected])
        assert format_version(project, "snap") == 3
        snap_rows = project.run_sql(
            f"select count(*), count_if(dbt_valid_to is null) from {table(project, 'snap')}",
            fetch="one",
        )
        # 30 first versions; round 2 changes ids 5-25 by 5 (5 closed, 5 new versions) and adds
        # 30-34; its deleted ids stay current (hard_deletes: ignore, dbt's default).
        assert tuple(snap_rows) == (30 + 5 + 5, 30 + 5)
        for name in ("orders_v3", "upgraded", "dual_v3"):
            assert rows(project, name) == expected_round_2(), name
            assert format_version(project, name) == 3, name
        # Merge-on-read in v3: one deletion vector (Puffin) per data file, no position-delete
        # Parquet files; the upgraded table's first merge after the upgrade writes them too.
        assert delete_formats(project, "orders_v3") == {"PUFFIN"}
        assert delete_formats(project, "upgraded") == {"PUFFIN"}
        # Row lineage: an updated row keeps its _row_id and gets a later sequence number; an
        # untouched one keeps both.
        after = lineage(project, "orders_v3")
        assert after[5][0] == before[5][0] and after[5][1] > before[5][1]
        assert after[1] == before[1]
        # The dual-format table is copy-on-write: delta-rs reads the rows Spark reads, though
        # the rewritten files also hold Iceberg's lineage columns (Delta's schema names none).
        columns, uri = describe(project, "dual_v3")
        names = [c for c, _ in columns]
        assert readers.delta_rs_rows(uri, names) == spark_rows(project, "dual_v3", columns)

    def test_full_refresh_same_table_and_downgrade_refused(self, project: Any) -> None:
        incremental = {n: rows(project, n) for n in ("orders_v3", "upgraded")}
        run_dbt(
            ["run", "--full-refresh", "--vars", "{round: 2, upgrade_to: 3}"]
            + ["--select", "orders_v3 upgraded"]
        )
        for name, found in incremental.items():
            assert rows(project, name) == found == expected_round_2(), name
            assert format_version(project, name) == 3, name
        snapshots = {n: current_snapshot(project, n) for n in ("upgraded", "snap")}
        results = run_dbt(
            ["build", "--vars", "{round: 2, upgrade_to: 2}", "--select", "upgraded snap"],
            expect_pass=False,
        )
        for name, snapshot in snapshots.items():
            refused(
                results,
                name,
                "asks for format version 2",
                "already format version 3",
                "cannot be downgraded",
                "Nothing was written",
            )
            assert current_snapshot(project, name) == snapshot
            assert format_version(project, name) == 3
