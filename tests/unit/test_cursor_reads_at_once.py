"""Under Spark Connect, a read whose rows the caller reads straight after is fetched as it runs
(one round trip, engine/runtime.py `fetched`); anything else goes through `spark.sql`."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from dbt.adapters.lakehouse.cursor import LakehouseCursor
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.written import only_reads

SCHEMA = StructType([StructField("failures", LongType(), False), StructField("s", StringType())])


class _ConnectSession:
    """Stands for a Spark Connect client session (runtime.is_connect reads the module)."""

    def __init__(self) -> None:
        self.sql_statements: list[str] = []
        self.fetched: list[str] = []

    def clearTags(self) -> None:  # noqa: N802 - Spark's name
        pass

    def addTag(self, tag: str) -> None:  # noqa: N802 - Spark's name
        pass

    def sql(self, statement: str, args: Any = None) -> Any:
        self.sql_statements.append(statement)
        raise AssertionError("this test's statements are fetched at once, not through sql")


_ConnectSession.__module__ = "pyspark.sql.connect.session_for_test"


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> _ConnectSession:
    spark = _ConnectSession()

    def fetched(given: Any, statement: str) -> tuple[list[Any], Any]:
        assert given is spark
        spark.fetched.append(statement)
        if "missing_table" in statement:
            raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] missing_table")
        return [(3, "a")], SCHEMA

    monkeypatch.setattr(runtime, "fetched", fetched)
    return spark


def test_a_fetched_read_runs_once_as_it_executes_and_its_schema_describes_it(
    session: _ConnectSession,
) -> None:
    cursor = LakehouseCursor(session, "g")  # type: ignore[arg-type]
    with runtime.rows_read_at_once():
        cursor.execute("/* dbt's comment */ select count(*) as failures, 'a' as s from t")
    assert session.fetched == ["/* dbt's comment */ select count(*) as failures, 'a' as s from t"]
    assert session.sql_statements == []
    # dbt's get_response reads the row count before the fetch: unknown then, as for any query.
    assert cursor.rowcount == -1
    assert [(d[0], d[1], d[6]) for d in cursor.description] == [
        ("failures", "bigint", False),
        ("s", "string", True),
    ]
    assert cursor.fetchall() == [(3, "a")]
    assert cursor.rowcount == 1
    assert session.fetched == [session.fetched[0]]  # the fetch asked nothing more


def test_a_failing_read_fails_within_execute(session: _ConnectSession) -> None:
    cursor = LakehouseCursor(session, "g")  # type: ignore[arg-type]
    with runtime.rows_read_at_once(), pytest.raises(RuntimeError, match="TABLE_OR_VIEW"):
        cursor.execute("select * from missing_table")


def test_without_a_fetch_straight_after_the_statement_goes_through_sql(
    session: _ConnectSession,
) -> None:
    cursor = LakehouseCursor(session, "g")  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="not through sql"):
        cursor.execute("select 1")
    with runtime.rows_read_at_once(False), pytest.raises(AssertionError, match="not through sql"):
        cursor.execute("select 1")
    assert session.sql_statements == ["select 1", "select 1"] and session.fetched == []


def test_only_the_batchs_last_statement_is_fetched(session: _ConnectSession) -> None:
    cursor = LakehouseCursor(session, "g")  # type: ignore[arg-type]
    with runtime.rows_read_at_once(), pytest.raises(AssertionError, match="not through sql"):
        cursor.execute("select 1; select 2")
    assert session.sql_statements == ["select 1"] and session.fetched == []
    session.sql = lambda statement, args=None: None  # type: ignore[method-assign]
    with runtime.rows_read_at_once():
        cursor.execute("select 1; select 2")
    assert session.fetched == ["select 2"] and cursor.fetchall() == [(3, "a")]


def test_a_statement_that_writes_goes_through_sql_even_when_fetched(
    session: _ConnectSession,
) -> None:
    cursor = LakehouseCursor(session, "g")  # type: ignore[arg-type]
    with runtime.rows_read_at_once(), pytest.raises(AssertionError, match="not through sql"):
        cursor.execute("with a as (select 1 as x) insert into c.n.t select * from a")
    assert session.fetched == []


@pytest.mark.parametrize(
    ("statement", "reads"),
    [
        ('/* {"node": 1} */\nselect 1', True),
        ("-- note\n  with x as (select 1) select * from x", True),
        ("(select 1) union all (select 2)", True),
        ("show tables in c.n", True),
        ("describe table extended c.n.t", True),
        ("explain extended select 1", True),
        ("values (1), (2)", True),
        ("selection_is_not_a_keyword", False),
        ("insert into c.n.t select 1", False),
        ("create table c.n.t as select 1", False),
        ("with a as (select 1) merge into c.n.t using a on true when matched then delete", False),
        ("set spark.sql.ansi.enabled = true", False),
    ],
)
def test_only_reads(statement: str, reads: bool) -> None:
    assert only_reads(statement) is reads
