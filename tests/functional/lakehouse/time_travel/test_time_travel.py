"""Time travel in models (`lakehouse.as_of`, a source's `config: {as_of: ...}`) reads exactly
the old rows, a point the table lacks fails naming the table, and `lakehouse_rollback` restores
exact contents or refuses, changing nothing, a snapshot outside main's line."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import current_snapshot, expect, rows, table

ORDERS_SQL = """
{{ config(materialized='table') }}
select * from values {{ var('orders', "(1, 'a'), (2, 'b')") }} as t(id, v)
"""

# Read at the first build of `orders`, by snapshot id, by timestamp, and through two sources.
BY_ID_SQL = """
{{ config(materialized='table') }}
select * from {{ lakehouse.as_of(ref('orders'), snapshot_id=var('first_snapshot', 0)) }}
"""
BY_TIME_SQL = """
{{ config(materialized='table') }}
select * from {{ lakehouse.as_of(ref('orders'), timestamp=var('first_time', '2000-01-01')) }}
"""
FROM_SOURCE_SQL = """
{{ config(materialized='table') }}
select * from {{ source('raw', 'orders') }}
"""
FROM_PINNED_SOURCE_SQL = """
{{ config(materialized='table') }}
select * from {{ source('pinned', 'orders') }}
"""

# `raw` pins every table by time (source level); `pinned` pins its table by id (table level).
SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    config:
      as_of: {timestamp: "{{ var('first_time', '2000-01-01') }}"}
    tables:
      - name: orders
  - name: pinned
    schema: "{{ target.schema }}"
    tables:
      - name: orders
        config:
          as_of: {snapshot_id: "{{ var('first_snapshot', 0) }}"}
"""

FIRST = [(1, "a"), (2, "b")]
READERS = ["by_id", "by_time", "from_source", "from_pinned_source"]


def history(project, name: str) -> list[tuple[int, str]]:
    """(snapshot id, made current at, as messages print it), oldest first."""
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(
        "select snapshot_id, date_format(made_current_at, 'yyyy-MM-dd HH:mm:ss.SSS') "
        f"from {table(project, name)}.history order by made_current_at",
        fetch="all",
    )
    return [(int(r[0]), str(r[1])) for r in found]


def snapshots(project, name: str) -> dict[int, str]:
    """{snapshot id: committed at, as messages print it}."""
    found = project.run_sql(
        "select snapshot_id, date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') "
        f"from {table(project, name)}.snapshots",
        fetch="all",
    )
    return {int(r[0]): str(r[1]) for r in found}


def failure(results, name: str) -> str:
    result = next(r for r in results if r.node.name == name)
    assert result.status == "error", f"{name} should have failed: {result.status}"
    return result.message


def rollback(project, to, relation: str | None = None, expect_pass: bool = True) -> str:
    args = {"relation": relation or f"{project.test_schema}.ledger", "to": to}
    _, output = run_dbt_and_capture(
        ["run-operation", "lakehouse_rollback", "--args", json.dumps(args)],
        expect_pass=expect_pass,
    )
    # One message per line, without dbt's time prefix.
    return "\n".join(
        re.sub(r"^(?:\x1b\[0m)?\d\d:\d\d:\d\d  ", "", line)
        for line in output_text(output).splitlines()
    )


# Reading a table as of a snapshot or tag reads its metadata files, whatever catalog points at
# them: the embedded lakehouse only (CI time; docs/tests.md).
@pytest.mark.only_profile("local")
class TestTimeTravel:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "by_id.sql": BY_ID_SQL,
            "by_time.sql": BY_TIME_SQL,
            "from_source.sql": FROM_SOURCE_SQL,
            "from_pinned_source.sql": FROM_PINNED_SOURCE_SQL,
            "sources.yml": SOURCES_YML,
        }

    def test_as_of_reads_the_first_build(self, project):
        run_dbt(["run", "-s", "orders"])
        run_dbt(["run", "-s", "orders", "--vars", "{orders: \"(3, 'c')\"}"])
        expect(rows(project, "orders"), [(3, "c")])
        (first, first_time), _ = history(project, "orders")
        pinned = json.dumps({"first_snapshot": first, "first_time": first_time})

        # A first run, a rerun and a full refresh give the same tables: the first build's rows.
        for extra in ([], [], ["--full-refresh"]):
            results = run_dbt(["run", "-s", *READERS, "--vars", pinned, *extra])
            assert len(results) == len(READERS)
            for name in READERS:
                expect(rows(project, name), FIRST)

        # compile only renders: no check, no table needed.
        early = json.dumps({"first_snapshot": first, "first_time": "2001-01-01 00:00:00"})
        run_dbt(["compile", "-s", "by_time", "from_source", "--vars", early])
        compiled = Path(project.project_root, "target", "compiled").rglob("by_time.sql")
        assert f"{table(project, 'orders')} TIMESTAMP AS OF '2001-01-01 00:00:00'" in (
            next(compiled).read_text()
        )

        # Before the oldest snapshot: the node fails naming the table and that snapshot's time,
        # before its SQL runs (its table keeps the rows of the last run).
        results = run_dbt(
            ["run", "-s", "by_time", "from_source", "--vars", early], expect_pass=False
        )
        for name in ("by_time", "from_source"):
            message = failure(results, name)
            assert (
                f"Table {table(project, 'orders')} has no snapshot as of 2001-01-01 00:00:00: "
                f"its oldest snapshot ({first}) dates from {first_time} UTC." in message
            ), message
            expect(rows(project, name), FIRST)

    def test_rollback_by_id_and_timestamp(self, project):
        ledger = table(project, "ledger")
        project.run_sql(f"create table {ledger} (id int) using iceberg")
        for value in (1, 2, 3):
            project.run_sql(f"insert into {ledger} values ({value})")
        one, two, three = (snapshot for snapshot, _ in history(project, "ledger"))
        committed = snapshots(project, "ledger")

        output = rollback(project, two)
        assert (
            f"lakehouse_rollback: rolled back main of {ledger}\n"
            f"  before: snapshot {three} (committed {committed[three]} UTC)\n"
            f"  after:  snapshot {two} (committed {committed[two]} UTC)"
        ) in output, output
        expect(rows(project, "ledger"), [(1,), (2,)])

        # The snapshot rolled back over is no longer main's: refused, nothing changes.
        output = rollback(project, three, expect_pass=False)
        assert (
            f"lakehouse_rollback refused: snapshot {three} of table {ledger} is not an ancestor "
            f"of main's current snapshot {two} (committed {committed[two]} UTC): main was rolled "
            "back past it" in output
        ), output
        assert "Nothing was changed." in output
        # So is a snapshot on a branch.
        project.run_sql(f"alter table {ledger} create branch side")
        project.run_sql(f"insert into {ledger}.branch_side values (9)")
        side = max(set(snapshots(project, "ledger")) - set(committed))
        output = rollback(project, side, expect_pass=False)
        assert f"is not an ancestor of main's current snapshot {two}" in output, output
        assert "it belongs to branch 'side', not to main. Nothing was changed." in output
        assert current_snapshot(project, "ledger") == two
        expect(rows(project, "ledger"), [(1,), (2,)])

        # By timestamp, three-part name: the newest of main's snapshots committed before it.
        at = dt.datetime.strptime(committed[one], "%Y-%m-%d %H:%M:%S.%f")
        just_after_one = f"{at + dt.timedelta(milliseconds=1):%Y-%m-%d %H:%M:%S.%f}"
        output = rollback(
            project,
            just_after_one,
            relation=f"{project.database}.{project.test_schema}.ledger",
        )
        assert (
            f"  before: snapshot {two} (committed {committed[two]} UTC)\n"
            f"  after:  snapshot {one} (committed {committed[one]} UTC)"
        ) in output, output
        expect(rows(project, "ledger"), [(1,)])


# One model reads two tables as of different points, the second one's arguments wrong; another
# gives a timestamp that does not parse. While dbt parses, ref() gives the calling model: the
# arguments are checked once the relation is real, so each message names the table read.
BASE_SQL = "{{ config(materialized='table') }}\nselect 1 as id"
TWO_POINTS_SQL = """
{{ config(materialized='table') }}
select a.id from {{ lakehouse.as_of(ref('base_a'), ref_name='main') }} as a
join {{ lakehouse.as_of(ref('base_b'), timestamp='2026-01-01 00:00:00', snapshot_id=1) }} as b
  on a.id = b.id
"""
BAD_TIMESTAMP_SQL = """
{{ config(materialized='table') }}
select * from {{ lakehouse.as_of(ref('base_a'), timestamp='not a time') }}
"""


@pytest.mark.only_profile("local")
class TestAsOfArgumentsNameTheTableRead:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "base_a.sql": BASE_SQL,
            "base_b.sql": BASE_SQL,
            "two_points.sql": TWO_POINTS_SQL,
            "bad_timestamp.sql": BAD_TIMESTAMP_SQL,
        }

    def test_each_message_names_the_table_read(self, project):
        results = run_dbt(["run"], expect_pass=False)
        statuses = {r.node.name: r.status for r in results}
        assert statuses["base_a"] == "success" and statuses["base_b"] == "success"
        two_points = failure(results, "two_points")
        assert "lakehouse.as_of(" in two_points and "`base_b`" in two_points
        assert "needs exactly one of timestamp, snapshot_id, ref_name" in two_points
        assert "`two_points`" not in two_points and "`base_a`" not in two_points
        bad_timestamp = failure(results, "bad_timestamp")
        assert "`base_a`" in bad_timestamp and "'not a time' is not a timestamp" in bad_timestamp
        assert "`bad_timestamp`" not in bad_timestamp
