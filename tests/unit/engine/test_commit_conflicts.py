"""A commit race lost after every retry: retried with growing backoff, then explained with the
table and the other writer's commit. The retry loop is pure logic and runs on a scripted
session with an injected sleep."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pyspark.sql import Row

from dbt.adapters.lakehouse.cursor import LakehouseCursor, split_statements
from dbt.adapters.lakehouse.engine.diagnosis import explain_engine_error
from dbt.adapters.lakehouse.engine.written import without_comments, write_target, written_object
from dbt.adapters.lakehouse.exceptions import CommitConflictError
from unit.engine.engine_texts import (
    CONFLICT,
)

# --- commit conflicts ----------------------------------------------------------------------


class ScriptedSpark:
    """Raises a commit conflict for the first `conflicts` writes, then succeeds."""

    def __init__(self, conflicts: int, snapshot: Row | None) -> None:
        self.conflicts = conflicts
        self.snapshot = snapshot
        self.statements: list[str] = []
        self.sparkContext = self
        self.conflict_text = CONFLICT

    def setJobGroup(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 - Spark's name
        pass

    def sql(self, statement: str, args: Any = None) -> Any:
        self.statements.append(statement)
        if statement.endswith(".snapshots order by committed_at desc limit 1"):
            return _Collected([self.snapshot] if self.snapshot else [])
        if self.conflicts > 0:
            self.conflicts -= 1
            raise RuntimeError(self.conflict_text)
        return _Collected([])


class _Collected:
    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def collect(self) -> list[Row]:
        return self.rows


MERGE = "/* dbt */ merge into `lakehouse`.`s`.`orders` as t using src on t.id = src.id"
SNAPSHOT = Row(
    snapshot_id=222,
    operation="overwrite",
    committed_millis=int(
        dt.datetime(2026, 11, 23, 4, 5, 6, tzinfo=dt.timezone.utc).timestamp() * 1000
    ),
    summary={"added-records": "10", "deleted-records": "2", "total-records": "108"},
)


def test_conflicts_are_retried_with_growing_backoff() -> None:
    sleeps: list[float] = []
    spark = ScriptedSpark(conflicts=3, snapshot=SNAPSHOT)
    cursor = LakehouseCursor(spark, "g", commit_retries=4, sleep=sleeps.append)  # type: ignore[arg-type]
    cursor.execute(MERGE)
    assert spark.statements == [MERGE] * 4
    assert len(sleeps) == 3
    # 0.25 * 2**n, jittered by a factor in [0.5, 1.5): the ranges do not overlap for n = 1..3.
    for n, delay in enumerate(sleeps, start=1):
        assert 0.25 * 2**n * 0.5 <= delay < 0.25 * 2**n * 1.5


def test_final_conflict_names_the_table_and_the_other_writers_commit() -> None:
    sleeps: list[float] = []
    spark = ScriptedSpark(conflicts=10, snapshot=SNAPSHOT)
    cursor = LakehouseCursor(spark, "g", commit_retries=2, sleep=sleeps.append)  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError) as info:
        cursor.execute(MERGE)
    message = info.value.msg
    assert len(sleeps) == 2
    assert message.startswith(
        "Commit conflict on table `lakehouse`.`s`.`orders`: another writer committed to it "
        "first, and 2 retries also lost the race. This statement changed nothing."
    )
    assert (
        "The other writer's commit is the table's latest: snapshot 222 (overwrite, committed "
        "2026-11-23 04:05:06 UTC; rows added 10, rows deleted 2, rows in total 108)."
    ) in message
    assert info.value.engine_text == CONFLICT  # for the log
    assert "`lakehouse`.`s`.`orders`.snapshots" in spark.statements[-1]


# Iceberg's own words for a merge that lost to another merge of the same rows: every data file
# the other writer added, on one line.
VALIDATION = (
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can "
    'contain records matching ref(name="id") in (1, 2, 3): '
    + ", ".join(f"[file:/w/s/orders/data/00000-{i}-0a1b-00001.parquet]" for i in range(40))
)


def test_the_console_block_of_a_lost_race_is_the_message_and_the_fix_only() -> None:
    spark = ScriptedSpark(conflicts=1, snapshot=SNAPSHOT)
    spark.conflict_text = VALIDATION
    cursor = LakehouseCursor(spark, "g", commit_retries=0, sleep=lambda s: None)  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError) as info:
        cursor.execute(MERGE)
    assert info.value.msg.splitlines() == [
        "Commit conflict on table `lakehouse`.`s`.`orders`: another writer committed to it "
        "first, and 0 retries also lost the race. This statement changed nothing.",
        "The other writer's commit is the table's latest: snapshot 222 (overwrite, committed "
        "2026-11-23 04:05:06 UTC; rows added 10, rows deleted 2, rows in total 108).",
        "Fix: run the model again (it rebuilds from the table as it now is); if writers "
        "collide often, run them one after another, or raise `commit_retries` in the profile.",
    ]
    # The file list and the statement are the log's (connections.exception_handler logs the
    # engine text, scrubbed, under the statement).
    assert info.value.engine_text == VALIDATION


def test_final_conflict_without_snapshots_uses_icebergs_ids() -> None:
    spark = ScriptedSpark(conflicts=10, snapshot=None)
    cursor = LakehouseCursor(spark, "g", commit_retries=0, sleep=lambda s: None)  # type: ignore[arg-type]
    with pytest.raises(CommitConflictError) as info:
        cursor.execute(MERGE)
    assert "The other writer moved the table from snapshot 111 to 222." in info.value.msg


def test_non_conflicts_are_not_retried() -> None:
    class Failing(ScriptedSpark):
        def sql(self, statement: str, args: Any = None) -> Any:
            self.statements.append(statement)
            raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] nope")

    spark = Failing(conflicts=0, snapshot=None)
    cursor = LakehouseCursor(spark, "g", sleep=lambda s: pytest.fail("no retry"))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        cursor.execute(MERGE)
    assert spark.statements == [MERGE]


@pytest.mark.parametrize(
    ("statement", "table"),
    [
        ("insert overwrite table a.b select 1", "a.b"),
        ("-- lakehouse:conf k=v\ninsert into `x` . `y` values (1)", "`x`.`y`"),
        ("create or replace table lakehouse.s.t using iceberg as select 1", "lakehouse.s.t"),
        ("delete from c.s.t where id = 1", "c.s.t"),
        ("select 1", None),
        # A leading WITH's expressions are read past, to the statement Spark runs.
        ("with a as (select 1), b as (select (2)) insert into c.s.t select * from a", "c.s.t"),
        ("WITH a AS (SELECT 1) MERGE INTO `c`.`s`.`t` USING a ON true", "`c`.`s`.`t`"),
        ("with a as (select 1) select * from a", None),
        ("with insert_rows as (select 1) select * from insert_rows", None),
    ],
)
def test_write_target(statement: str, table: str | None) -> None:
    assert write_target(statement) == table


def test_rest_connect_timeout_is_unreachable_too() -> None:
    text = (
        "org.apache.iceberg.exceptions.RESTException: Error occurred while processing GET request"
        "\n  caused by: org.apache.iceberg.shaded.org.apache.hc.client5.http."
        "ConnectTimeoutException: Connect to http://10.1.2.3:8181 [/10.1.2.3] failed: "
        "Connect timed out"
    )
    explained = explain_engine_error(text) or ""
    assert explained.startswith(
        "The Iceberg REST catalog at http://10.1.2.3:8181 is unreachable (Connect timed out)."
    )


def test_a_statement_of_any_length_is_read_comments_aside() -> None:
    # sqlparse's formatter refuses over 10,000 tokens; a wide model's CTAS has more
    wide = ", ".join(f"c{i} as d{i} -- {i}\n" for i in range(3000))
    ctas = f"-- a model\ncreate or replace table lakehouse.s.t as select {wide} from x"
    written = written_object(ctas)
    assert written is not None and (written.name, written.catalog) == ("lakehouse.s.t", "lakehouse")
    assert without_comments("select '-- kept' /* gone */ from t") == "select '-- kept'   from t"
    assert split_statements(f"{ctas};\n-- only a comment\n;select 1") == [ctas, "select 1"]
