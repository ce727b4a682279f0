"""Snapshots against real Iceberg tables, checked row for row: a two-column unique key, the
timestamp strategy with `hard_deletes: invalidate`, the check strategy with `hard_deletes:
ignore`, a column added to the source, and the snapshot history Iceberg keeps per run."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

SNAP_TS = """
{% snapshot snap_ts %}
{{ config(unique_key=['a', 'b'], strategy='timestamp', updated_at='updated_at',
          hard_deletes='invalidate') }}
select * from {{ target.schema }}.src
{% endsnapshot %}
"""

SNAP_CHECK = """
{% snapshot snap_check %}
{{ config(unique_key=['a', 'b'], strategy='check', check_cols=['v'], hard_deletes='ignore') }}
select * from {{ target.schema }}.src
{% endsnapshot %}
"""

# A DESCRIBE in dbt's debug log, with the snapshot that ran it.
DESCRIBE_LINE = re.compile(
    r"On snapshot\.\w+\.(\w+): /\*(?:[^*]|\*(?!/))*\*/\s*describe table extended"
)

DAY1 = dt.datetime(2024, 1, 1)
DAY2 = dt.datetime(2024, 1, 2)


# A snapshot's rows are dbt's flow and one MERGE, the same on every catalog; a snapshot's
# commits through the REST catalog are test_commit_lineage.py's (both profiles).
@pytest.mark.only_profile("local")
class TestSnapshotKeysDeletesNewColumns:
    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap_ts.sql": SNAP_TS, "snap_check.sql": SNAP_CHECK}

    def _rows(self, project, name: str) -> list[tuple]:
        found = project.run_sql(
            "select a, b, v, w, dbt_valid_to is null, dbt_valid_to "
            f"from {{schema}}.{name} order by a, b, dbt_valid_from",
            fetch="all",
        )
        return [tuple(row) for row in found]

    def test_two_runs(self, project) -> None:
        project.run_sql(
            "create table {schema}.src (a int, b string, v string, updated_at timestamp) "
            "using iceberg"
        )
        project.run_sql(
            "insert into {schema}.src values "
            "(1, 'x', 'one', timestamp'2024-01-01 00:00:00'), "
            "(1, 'y', 'two', timestamp'2024-01-01 00:00:00'), "
            "(2, 'x', 'three', timestamp'2024-01-01 00:00:00')"
        )
        assert len(run_dbt(["snapshot"])) == 2

        # (1,x) changes, (2,x) is deleted, a column appears, (1,y) gets a value in it without a
        # newer updated_at, and (3,z) is new.
        project.run_sql(
            "update {schema}.src set v = 'one-2', updated_at = timestamp'2024-01-02 00:00:00' "
            "where a = 1 and b = 'x'"
        )
        project.run_sql("delete from {schema}.src where a = 2")
        project.run_sql("alter table {schema}.src add column w string")
        project.run_sql("update {schema}.src set w = 'late' where a = 1 and b = 'y'")
        project.run_sql(
            "insert into {schema}.src values (3, 'z', 'four', timestamp'2024-01-02 00:00:00', 'w3')"
        )
        results, log = run_dbt_and_capture(["--debug", "snapshot"])
        assert len(results) == 2
        # dbt's flow asks for the target's and the staging view's columns seven times; each is
        # described once until a statement writes it: the target, the staging view, and the
        # staging view again after the new column's ALTER (iceberg/describe_memo.py).
        assert Counter(DESCRIBE_LINE.findall(log)) == {"snap_ts": 3, "snap_check": 3}

        timestamp_rows = self._rows(project, "snap_ts")
        assert [row[:5] for row in timestamp_rows] == [
            (1, "x", "one", None, False),
            (1, "x", "one-2", None, True),
            (1, "y", "two", None, True),
            (2, "x", "three", None, False),
            (3, "z", "four", "w3", True),
        ]
        # The timestamp strategy closes a version at the new version's updated_at; a hard
        # delete is closed at snapshot time.
        assert timestamp_rows[0][5] == DAY2
        assert timestamp_rows[3][5] > DAY2

        check_rows = self._rows(project, "snap_check")
        assert [row[:5] for row in check_rows] == [
            (1, "x", "one", None, False),
            (1, "x", "one-2", None, True),
            (1, "y", "two", None, True),
            (2, "x", "three", None, True),  # hard_deletes: ignore keeps it current
            (3, "z", "four", "w3", True),
        ]

        # The create and the second run's MERGE are one Iceberg commit each.
        commits = project.run_sql("select count(*) from {schema}.snap_ts.snapshots", fetch="one")
        assert commits[0] == 2
