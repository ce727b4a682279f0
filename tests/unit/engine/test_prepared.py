"""engine/prepared.py: a data test's analysed query is taken only by the statement that runs
exactly that query, in the same session, once; a view's, only by that view's stand-in, which
statements in between leave it for."""

from __future__ import annotations

import threading

from dbt.adapters.lakehouse.engine import prepared

QUERY = "\n    select count(*) as failures\n    from (\n      select 'a  b' as s\n    ) t\n"
COMMENT = '/* {"app": "dbt", "node_id": "test.p.t"} */'


def setup_function() -> None:
    prepared.forget()
    prepared.forget_stand_in()


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
    assert prepared.take_for_stand_in(session, f"  {QUERY}\n") is frame
    assert prepared.take_for_stand_in(session, QUERY) is None  # once
    prepared.keep_for_stand_in(session, QUERY, frame)
    assert prepared.take_for_stand_in(session, QUERY.replace("'a  b'", "'a b'")) is None
    assert prepared.take_for_stand_in(session, QUERY) is None  # emptied by the miss
    prepared.keep_for_stand_in(session, QUERY, frame)
    assert prepared.take_for_stand_in(object(), QUERY) is None
    prepared.keep_for_stand_in(session, QUERY, frame)
    prepared.forget_stand_in()
    assert prepared.take_for_stand_in(session, QUERY) is None
