"""A query analysed ahead of its statement, handed to the statement that runs it.

A data test's reuse decision analyses the test's query (reuse/inputs.py); when the test then
runs, its statement would parse and analyse the same text again. On a project with a test on
every column that second analysis is a large share of each test's time. The decision keeps
its DataFrame here, and the thread's next statement takes it instead of calling `spark.sql`
when that statement is exactly the kept query: the same session, the same text once dbt's
query comment is set aside (leading and trailing blanks aside). Anything else (another text,
another session, a statement with its own confs, a statement in between) falls back to
`spark.sql`, and a kept frame is taken at most once.

A view's reuse decision analyses the view's query the same way (over the stand-ins of the views
it reads, reuse/views.py), and the view's stand-in for the run's later statements is that same
query's frame (checkpoints/adapter.py): the decision keeps it in a slot of its own, which the
view's statement in between (CREATE VIEW, SHOW TBLPROPERTIES) leaves alone, for the stand-in of
that view to take when its text is exactly the kept query's.

A table model's reuse decision analyses its query too, and when the model is built its CREATE
TABLE ... AS statement would analyse it again (for a table over a stack of views, seconds).
The decision keeps the frame with the statement it was rendered for; when that exact statement
is the thread's next, it creates the table from the kept frame (a temporary view of it, read
whole, in place of the query's text), so the query is analysed once. An incremental model's
first build does the same, its query a subquery of the CREATE's.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from typing import Any

# dbt's query comment, before the statement (the default) or after it (`append: true`). dbt
# refuses a comment holding `*/`, so the first `*/` ends it.
_LEADING_COMMENT = re.compile(r"^\s*/\*.*?\*/", re.S)
_TRAILING_COMMENT = re.compile(r"/\*[^*]*(?:\*(?!/)[^*]*)*\*/\s*$", re.S)

_SLOT = threading.local()
# A CREATE TABLE ... AS, whose query holds the model's query: as all of it (a table model), or
# as a subquery (an incremental model's first build: one row per key, a batch window).
_CREATE_TABLE_AS = re.compile(
    r"^(?:create\s+or\s+replace|replace|create)\s+table\s.*\bas\b", re.I | re.S
)


def keep(spark: Any, query: str, frame: Any) -> None:
    """Keep `frame`, the analysed `query` of `spark`, for this thread's next statement."""
    _SLOT.kept = (spark, query.strip(), frame)


def forget() -> None:
    _SLOT.kept = None


def take(spark: Any, statement: str) -> Any | None:
    """The kept frame when `statement` runs exactly its query in the same session; the slot is
    emptied either way (only the statement right after the decision may take it)."""
    return _take("kept", spark, statement, statement_text)


def keep_for_stand_in(spark: Any, query: str, frame: Any) -> None:
    """Keep `frame`, the analysed `query` of `spark`, for the stand-in of the view this thread
    decided last."""
    _SLOT.stand_in = (spark, query.strip(), frame)


def forget_stand_in() -> None:
    _SLOT.stand_in = None


def take_stand_in_frame(query: str) -> tuple[Any, Any] | None:
    """(the session, the kept frame) when `query` is its text, for the stand-in, made now or
    later on another thread (which takes the frame when its session is that one); the slot is
    emptied either way (a stand-in made otherwise analyses its own query)."""
    kept = getattr(_SLOT, "stand_in", None)
    _SLOT.stand_in = None
    if kept is None or kept[1] != query.strip():
        return None
    return kept[0], kept[2]


def keep_for_write(spark: Any, statement: str, query: str, frame: Any) -> None:
    """Keep `frame`, the analysed `query` of `spark`, for this thread's next statement when that
    is `statement`, a CREATE TABLE ... AS whose query holds `query`; anything else keeps
    nothing."""
    text, body = statement_text(statement), query.strip()
    at = text.rfind(body) if body else -1
    if at > 0 and _CREATE_TABLE_AS.match(text[:at]):
        _SLOT.write = (spark, text, (body, frame))
    else:
        _SLOT.write = None


def take_for_write(spark: Any, statement: str) -> tuple[str, Any] | None:
    """(the query, its kept frame) when `statement` is the one the frame was kept for, in the
    same session; the slot is emptied either way."""
    kept = _take("write", spark, statement, statement_text)
    return None if kept is None else (kept[0], kept[1])


def over_view(statement: str, query: str, frame: Any) -> tuple[str, str] | None:
    """`statement` reading a temporary view of `frame` where it held `query`, and that view's
    name (made here: the caller drops it); None when the query is not in the statement."""
    at = statement.rfind(query)
    if at < 0:
        return None
    view = f"lakehouse_analysed_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(view)
    return f"{statement[:at]}select * from `{view}`{statement[at + len(query) :]}", view


def _take(slot: str, spark: Any, given: str, text_of: Callable[[str], str]) -> Any | None:
    """The frame in this thread's `slot` when it was kept for `text_of(given)` in `spark`; the
    slot is emptied either way. The text is made only when something is kept: the cursor asks
    for every statement, which can be megabytes."""
    kept = getattr(_SLOT, slot, None)
    setattr(_SLOT, slot, None)
    if kept is None or kept[0] is not spark:
        return None
    return kept[2] if text_of(given) == kept[1] else None


def statement_text(statement: str) -> str:
    """The statement without dbt's query comment, stripped."""
    text = _LEADING_COMMENT.sub("", statement, count=1).strip()
    if text == statement.strip():  # no leading comment: it may follow the statement
        text = _TRAILING_COMMENT.sub("", text, count=1).strip()
    return text
