"""What Delta readers could not follow on a dual-format table (`table_formats: [iceberg,
delta]`) is refused before anything is written: merge-on-read, a type change, a column renamed,
or dropped and added again (by dbt or outside it). The sequence of writes that are mirrored:
test_delta_format.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.delta_readers import (
    DUAL,
    DeltaReaders,
    check_dual,
    describe,
    main_snapshot,
    messages,
    profile_readers,
    spark_rows,
)
from functional.lakehouse.shared.tables import table


@pytest.fixture(scope="class")
def readers(request: pytest.FixtureRequest) -> DeltaReaders:
    return profile_readers(request)


# ---- refusals: what Delta readers could not follow, refused before anything is written ------

# A new table whose config asks for merge-on-read.
MOR_NEW_SQL = """
{{ config(materialized='table', table_properties={'write.delete.mode': 'merge-on-read'}) }}
select 1 as id
"""
# An existing table: the config turns merge-on-read (var mor), or an ALTER outside dbt does.
MOR_OLD_SQL = """
{{ config(materialized='incremental', unique_key='id',
          table_properties=({'write.merge.mode': 'merge-on-read'} if var('mor', false) else {})) }}
select {{ var('step', 1) }} as id, 'v{{ var('step', 1) }}' as v
"""
# Step 2 widens id: int -> bigint.
RETYPE_SQL = """
{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}
select cast({{ var('step', 1) }} as {{ 'bigint' if var('step', 1) == 2 else 'int' }}) as id
"""
# Step 2 drops c (allowed), step 3 adds it again (refused: step 1's file still holds c).
READD_SQL = """
{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}
select {{ var('step', 1) }} as id
{%- if var('step', 1) != 2 %}, 'c{{ var('step', 1) }}' as c{% endif %}
"""
# Column a is renamed to b outside dbt before step 2.
RENAMED_SQL = """
{{ config(materialized='incremental') }}
select {{ var('step', 1) }} as id, 'a{{ var('step', 1) }}' as a
"""
# Column c is dropped and added again outside dbt before step 2 (same name and type).
READD_OUTSIDE_SQL = """
{{ config(materialized='incremental') }}
select {{ var('step', 1) }} as id, 'c{{ var('step', 1) }}' as c
"""


# What is refused, and that nothing is written, is the adapter's own check before any write:
# the same on every storage (CI time; the sequence above runs on s3_rest too).
@pytest.mark.only_profile("local")
class TestDualFormatRefusals:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "mor_new.sql": MOR_NEW_SQL,
            "mor_old.sql": MOR_OLD_SQL,
            "retype.sql": RETYPE_SQL,
            "readd.sql": READD_SQL,
            "renamed.sql": RENAMED_SQL,
            "readd_outside.sql": READD_OUTSIDE_SQL,
        }

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": DUAL}

    def state(self, project: Any, readers: DeltaReaders, name: str) -> tuple:
        """What a refused run must leave as it was: main's snapshot and rows, the Delta log's
        version and rows (after a rename outside dbt, the log still has the old name)."""
        snapshot = main_snapshot(project, name)
        columns, uri = describe(project, name)
        handle = readers.handle(uri)
        delta_columns = [f.name for f in handle.schema().fields]
        return (
            snapshot,
            spark_rows(project, name, columns),
            int(handle.version()),
            readers.delta_rs_rows(uri, delta_columns),
        )

    def refused(self, results: Any, name: str, *reasons: str) -> None:
        result = next(r for r in results if r.node.name == name)
        assert result.status == "error", f"{name} was not refused: {result.status}"
        message = result.message or ""
        for reason in (f"Model '{name}'", *reasons, "Nothing was written"):
            assert reason in message, f"{reason!r} not in {name}'s message: {message}"

    def test_refused_before_writing(self, project: Any, readers: DeltaReaders) -> None:
        results = run_dbt(["run"], expect_pass=False)
        assert {r.node.name for r in results if r.status == "success"} == {
            "mor_old",
            "retype",
            "readd",
            "renamed",
            "readd_outside",
        }
        self.refused(results, "mor_new", "merge-on-read", "write.delete.mode")
        relations = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}`", fetch="all"
        )
        assert "mor_new" not in {r[1] for r in relations}, relations

        # Step 2: merge-on-read in an existing table's config, a type change, a column renamed
        # outside dbt, a column dropped and added again outside dbt: refused, nothing written.
        # A plain column drop is mirrored.
        refused = ("mor_old", "retype", "renamed", "readd_outside")
        project.run_sql(f"alter table {table(project, 'renamed')} rename column a to b")
        readd_outside = table(project, "readd_outside")
        outside_uri = describe(project, "readd_outside")[1]
        fields = readers.handle(outside_uri).schema().fields
        assert {f.name: f.metadata.get("iceberg.field-id") for f in fields} == {"id": 1, "c": 2}
        project.run_sql(f"alter table {readd_outside} drop column c")
        project.run_sql(f"alter table {readd_outside} add column c string")
        # No new snapshot, yet the log is wrong already: Iceberg reads NULL from the old file
        # (new field id), delta-rs the dropped values (by name). The sync says so, and stops.
        assert spark_rows(project, "readd_outside", describe(project, "readd_outside")[0]) == [
            (1, None)
        ]
        assert readers.delta_rs_rows(outside_uri, ["id", "c"]) == [(1, "c1")]
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_sync_delta", "--args", "{select: [readd_outside]}"],
            expect_pass=False,
        )
        assert "column 'c' was dropped and added again" in messages(out), out
        before = {name: self.state(project, readers, name) for name in refused}
        readd_uri = describe(project, "readd")[1]
        assert [f.name for f in readers.handle(readd_uri).schema().fields] == ["id", "c"]
        results = run_dbt(
            ["run", "--exclude", "mor_new", "--vars", "{step: 2, mor: true}"], expect_pass=False
        )
        self.refused(results, "mor_old", "merge-on-read", "write.merge.mode")
        self.refused(results, "retype", "changing the type of id")
        self.refused(results, "renamed", "column 'a' was renamed to 'b'")
        self.refused(results, "readd_outside", "column 'c' was dropped and added again")
        for name in refused:
            assert self.state(project, readers, name) == before[name], name
        _, rows = check_dual(project, readers, "readd")
        assert rows == [(1,), (2,)]

        # Step 3: merge-on-read set outside dbt; the dropped column c added again.
        mor_old = table(project, "mor_old")
        project.run_sql(
            f"alter table {mor_old} set tblproperties ('write.delete.mode' = 'merge-on-read')"
        )
        refused = ("mor_old", "readd")
        before = {name: self.state(project, readers, name) for name in refused}
        results = run_dbt(["run", "--select", *refused, "--vars", "{step: 3}"], expect_pass=False)
        self.refused(results, "mor_old", "merge-on-read", "write.delete.mode", "existing table")
        self.refused(results, "readd", "adding column(s) c again")
        for name in refused:
            assert self.state(project, readers, name) == before[name], name
