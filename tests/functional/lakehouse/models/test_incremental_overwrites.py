"""Incremental overwrites against real Iceberg tables, each run checked row for row:
insert_overwrite touching only its partitions, replace and full refresh keeping history, and
microbatch reruns of one batch. Merges: test_incremental_strategies.py."""

from __future__ import annotations

import datetime as dt

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import expect, rows, snapshot_count, table

# A strategy's rows are SQL semantics, the same on every catalog and storage: the embedded
# lakehouse, and the profiles where the engine itself differs (tasks on a cluster's executors,
# statements in a Spark Connect server).
pytestmark = pytest.mark.only_profile("local", "cluster", "connect")


# ---- insert_overwrite and replace ---------------------------------------------------------------

# Run 1 spreads 300 rows over 30 days; run 2 brings 10 rows for days 6 and 7 only.
DAYS_SQL = """
{{{{ config(materialized='incremental', incremental_strategy='{strategy}',
          partition_by=['days(ts)']) }}}}
{{% if var('run', 1) == 1 %}}
select id, timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(id % 30 as int)) as ts,
       'r1' as v
from range({offset}, {offset} + 300)
{{% else %}}
select id, timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, cast(5 + id % 2 as int)) as ts,
       'r2' as v
from range(1000, 1010)
{{% endif %}}
"""


def _day_rows(ids, day_of, v: str) -> list[tuple]:
    return [(i, dt.datetime(2024, 1, 1) + dt.timedelta(days=day_of(i)), v) for i in ids]


# An identity-only spec, which Spark describes under "# Partition Information" rather than
# "# Partitioning": run 2 overwrites partition g = '1' only.
IDENTITY_SQL = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by=['g']) }}
{% if var('run', 1) == 1 %}
select id, cast(id % 3 as string) as g from range(0, 9)
{% else %}
select id, '1' as g from range(100, 102)
{% endif %}
"""

RUN1 = _day_rows(range(300), lambda i: i % 30, "r1")
RUN2 = _day_rows(range(1000, 1010), lambda i: 5 + i % 2, "r2")


class TestOverwrites:
    """insert_overwrite (dynamic) and replace (static) models run side by side on 4 threads:
    the overwrite mode is scoped per statement, so neither may act like the other."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "io_days.sql": DAYS_SQL.format(strategy="insert_overwrite", offset=0),
            "io_again.sql": DAYS_SQL.format(strategy="insert_overwrite", offset=0),
            "replace_days.sql": DAYS_SQL.format(strategy="replace", offset=0),
            "replace_again.sql": DAYS_SQL.format(strategy="replace", offset=0),
            "io_identity.sql": IDENTITY_SQL,
            "io_unpartitioned.sql": (
                "{{ config(materialized='incremental', incremental_strategy='insert_overwrite')"
                " }}\nselect 1 as id"
            ),
        }

    def test_overwrites(self, project):
        run_dbt(["run", "--exclude", "io_unpartitioned"])
        for name in ("io_days", "io_again", "replace_days", "replace_again"):
            expect(rows(project, name), RUN1)
        files_sql = (
            "select partition.ts_day, file_path from {}.files order by partition.ts_day, file_path"
        )
        before = project.run_sql(files_sql.format(table(project, "io_days")), fetch="all")
        replace_snapshots = snapshot_count(project, "replace_days")

        run_dbt(["run", "--exclude", "io_unpartitioned", "--vars", "{run: 2}"])
        touched = {dt.date(2024, 1, 6), dt.date(2024, 1, 7)}
        kept = [r for r in RUN1 if r[1].date() not in touched]
        for name in ("io_days", "io_again"):
            expect(rows(project, name), kept + RUN2)
        for name in ("replace_days", "replace_again"):
            expect(rows(project, name), RUN2)
        expect(
            rows(project, "io_identity"),
            [(i, str(i % 3)) for i in range(9) if i % 3 != 1] + [(100, "1"), (101, "1")],
        )
        assert snapshot_count(project, "replace_days") == replace_snapshots + 1

        project.run_sql(f"refresh table {table(project, 'io_days')}")
        after = project.run_sql(files_sql.format(table(project, "io_days")), fetch="all")

        def by_day(found):
            grouped: dict = {}
            for day, path in found:
                grouped.setdefault(str(day), set()).add(path)
            return grouped

        before_days, after_days = by_day(before), by_day(after)
        assert len(before_days) == 30 and set(after_days) == set(before_days)
        changed = {day for day in before_days if before_days[day] != after_days[day]}
        assert changed == {"2024-01-06", "2024-01-07"}
        assert not any(before_days[d] & after_days[d] for d in changed)

        results = run_dbt(["run", "--select", "io_unpartitioned"], expect_pass=False)
        assert "'insert_overwrite'" in results[0].message
        assert "needs partition_by" in results[0].message
        assert "model 'io_unpartitioned'" in results[0].message


# ---- microbatch ----------------------------------------------------------------------------------

EVENTS_SQL = """
{{ config(materialized='table', event_time='ts') }}
select id, ts, v from values
  (1, timestamp'2024-01-01 10:00:00', 'a'),
  (2, timestamp'2024-01-02 10:00:00', 'b'),
  (3, timestamp'2024-01-03 10:00:00', 'c')
  as t(id, ts, v)
"""

DAILY_SQL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin=modules.datetime.datetime(2024, 1, 1)) }}
select id, ts, v from {{ ref('events') }}
"""


class TestMicrobatchRerun:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS_SQL, "daily.sql": DAILY_SQL}

    def test_rerun_of_one_batch(self, project):
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-04"]
        run_dbt(["run", *window])
        ts = [dt.datetime(2024, 1, d, 10) for d in (1, 2, 3)]
        expect(rows(project, "daily"), [(1, ts[0], "a"), (2, ts[1], "b"), (3, ts[2], "c")])

        events = table(project, "events")
        project.run_sql(f"update {events} set v = 'B' where id = 2")
        project.run_sql(
            f"insert into {events} values (4, timestamp'2024-01-02 12:00:00', 'b2'), "
            "(5, timestamp'2024-01-03 11:00:00', 'c2')"
        )
        day_two = ["--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03"]
        expected = [
            (1, ts[0], "a"),
            (2, ts[1], "B"),
            (3, ts[2], "c"),
            (4, dt.datetime(2024, 1, 2, 12), "b2"),
        ]
        for _ in range(2):  # the second rerun changes nothing
            run_dbt(["run", "--select", "daily", *day_two])
            expect(rows(project, "daily"), expected)
