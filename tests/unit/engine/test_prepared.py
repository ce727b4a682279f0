"""engine/prepared.py: a data test's analysed query is taken only by the statement that runs
exactly that query, in the same session, once; a view's, only by that view's stand-in, which
statements in between leave it for; a table model's, only by the CREATE TABLE ... AS it was
rendered for, right after."""

from __future__ import annotations

import threading

from dbt.adapters.lakehouse.engine import prepared

QUERY = "\n    select count(*) as failures\n    from (\n      select 'a  b' as s\n    ) t\n"
COMMENT = '/* {"app": "dbt", "node_id": "test.p.t"} */'


def setup_function() -> None:
    prepared.forget()
    prepared.forget_stand_in()
    prepared.take_for_write(object(), "")


CTAS = f"{COMMENT}\n  create or replace table `c`.`s`.`t`\n  using iceberg\n  as\n{QUERY}  "


class Frame:
    """A DataFrame as over_view uses it: made a temporary view by name."""

    def __init__(self) -> None:
        self.views: list[str] = []

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 (PySpark's name)
        self.views.append(name)


def test_the_statement_with_dbts_comment_before_or_after_takes_it() -> None:
    session, frame = object(), object()
    prepared.keep(session, QUERY, frame)
    assert prepared.take(session, f"{COMMENT}\n\n{QUERY}\n  ") is frame
    prepared.keep(session, QUERY, frame)
    assert prepared.take(session, f"{QUERY}\n{COMMENT}") is frame
    prepared.keep(session, QUERY, frame)
    assert prepared.take(session, QUERY) is frame  # query comments turned off


def test_taken_once_and_only_by_the_statement_right_after() -> None:
    session, frame = object(), object()
    prepared.keep(session, QUERY, frame)
    assert prepared.take(session, QUERY) is frame
    assert prepared.take(session, QUERY) is None
    prepared.keep(session, QUERY, frame)
    assert prepared.take(session, "set spark.sql.ansi.enabled = true") is None
    assert prepared.take(session, QUERY) is None  # a statement ran in between


def test_another_text_or_session_falls_back() -> None:
    session, frame = object(), object()
    for other in (
        QUERY.replace("'a  b'", "'a b'"),  # blanks inside a literal are the query
        QUERY.replace("failures", "failures, 1 as x"),
        f"{COMMENT}\n/* the user's */ {QUERY}",
    ):
        prepared.keep(session, QUERY, frame)
        assert prepared.take(session, other) is None, other
    prepared.keep(session, QUERY, frame)
    assert prepared.take(object(), QUERY) is None


def test_each_thread_has_its_own() -> None:
    session, frame = object(), object()
    prepared.keep(session, QUERY, frame)
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(prepared.take(session, QUERY)))
    worker.start()
    worker.join()
    assert seen == [None]
    assert prepared.take(session, QUERY) is frame


def test_a_views_frame_is_for_its_stand_in_across_its_statement() -> None:
    session, frame = object(), object()
    prepared.keep_for_stand_in(session, QUERY, frame)
    assert prepared.take(session, QUERY) is None  # a statement: not its slot
    assert prepared.take_stand_in_frame(f"  {QUERY}\n") == (session, frame)
    assert prepared.take_stand_in_frame(QUERY) is None  # once
    prepared.keep_for_stand_in(session, QUERY, frame)
    assert prepared.take_stand_in_frame(QUERY.replace("'a  b'", "'a b'")) is None
    assert prepared.take_stand_in_frame(QUERY) is None  # emptied by the miss
    prepared.keep_for_stand_in(session, QUERY, frame)
    prepared.forget_stand_in()
    assert prepared.take_stand_in_frame(QUERY) is None


def test_a_tables_frame_is_for_its_create_table_right_after() -> None:
    session, frame = object(), Frame()
    prepared.keep_for_write(session, CTAS, QUERY, frame)
    assert prepared.take(session, CTAS) is None  # the data tests' slot is another
    assert prepared.take_for_write(session, CTAS) == (QUERY.strip(), frame)
    assert prepared.take_for_write(session, CTAS) is None  # once
    prepared.keep_for_write(session, CTAS, QUERY, frame)
    assert prepared.take_for_write(session, "drop view if exists `c`.`s`.`t`") is None
    assert prepared.take_for_write(session, CTAS) is None  # a statement ran in between
    prepared.keep_for_write(session, CTAS, QUERY, frame)
    assert prepared.take_for_write(object(), CTAS) is None  # another session


def test_only_a_create_table_whose_query_holds_the_query_is_kept() -> None:
    session, frame = object(), Frame()
    for statement, query in (
        (f"insert into `c`.`s`.`t`\n{QUERY}", QUERY),  # not a CREATE TABLE ... AS
        (f"create table `c`.`s`.`t` comment '{QUERY}'", QUERY),  # not in its query
        (CTAS, QUERY.replace("'a  b'", "'a b'")),  # another query than the statement's
        (CTAS, "   "),
    ):
        prepared.keep_for_write(session, statement, query, frame)
        assert prepared.take_for_write(session, statement) is None, statement
    # An incremental model's first build: the query a subquery of the CREATE's.
    first_build = f"create or replace table `c`.`s`.`t` as select a from (\n{QUERY}\n) as n"
    prepared.keep_for_write(session, first_build, QUERY, frame)
    assert prepared.take_for_write(session, first_build) == (QUERY.strip(), frame)
    statement, view = prepared.over_view(first_build, QUERY.strip(), frame) or ("", "")
    assert statement.endswith(f"select a from (\n\n    select * from `{view}`\n\n) as n")


def test_the_statement_reads_a_view_of_the_frame_where_its_query_was() -> None:
    frame = Frame()
    found = prepared.over_view(CTAS, QUERY.strip(), frame)
    assert found is not None
    statement, view = found
    assert frame.views == [view] and view.startswith("lakehouse_analysed_")
    assert statement.startswith(f"{COMMENT}\n  create or replace table `c`.`s`.`t`")
    assert statement.rstrip().endswith(f"as\n\n    select * from `{view}`")
    assert "count(*)" not in statement
    assert prepared.over_view("create table t as select 1", QUERY.strip(), frame) is None
