"""Under Spark Connect a read whose rows dbt fetches straight after goes to the server as the
plan to run (engine/runtime.py `fetched`, one round trip; cursor.py `_reads_at_once`)."""

from __future__ import annotations

import decimal

import pytest
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtDatabaseError

from dbt.adapters.lakehouse.engine import runtime
from functional.lakehouse.shared.tables import table

SEED_CSV = "id,name,amount\n1,alpha,10.5\n2,beta,20.0\n3,gamma,30.25\n"


@pytest.mark.only_profile("connect")
class TestConnectReads:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people_seed.csv": SEED_CSV}

    def test_reads_fetched_at_once_give_what_collect_gives_and_fail_as_statements(self, project):
        """The same rows and columns as the statement run by `spark.sql` and collected, for
        each kind of value; dbt's `execute` with `fetch`; an error mapped as any statement's."""
        run_dbt(["seed"])
        people = table(project, "people_seed")
        query = (
            "select timestamp'2024-01-02 03:04:05' as ts, cast(1.50 as decimal(5, 2)) as d, "
            "date'2024-02-29' as day, X'CAFE' as b, array(1, 2) as a, "
            "named_struct('k', 'v') as st, map('m', 1) as mp, cast(null as string) as n, "
            f"(select count(*) from {people} where id > 1) as failures"
        )
        adapter = project.adapter
        with adapter.connection_named("__test"):
            read = {}
            for at_once in (True, False):
                with runtime.rows_read_at_once(at_once):
                    _, cursor = adapter.connections.add_query(query, auto_begin=False)
                    read[at_once] = (cursor.description, cursor.fetchall(), cursor._ready)
            assert read[True][2] is not None and read[False][2] is None  # the path each took
            assert read[True][:2] == read[False][:2]
            [row] = read[True][1]
            assert row[-1] == 2 and row[1] == decimal.Decimal("1.50") and row[3] == "cafe"
            _, agate_table = adapter.execute(f"select count(*) as n from {people}", fetch=True)
            assert [tuple(r) for r in agate_table.rows] == [(3,)]
            with pytest.raises(DbtDatabaseError, match="TABLE_OR_VIEW_NOT_FOUND"):
                adapter.execute(f"select * from {table(project, 'no_such_table')}", fetch=True)
