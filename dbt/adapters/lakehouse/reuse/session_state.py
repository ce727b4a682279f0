"""Whether this process's Spark session still resolves names and expressions as a new session
does, which a remembered reuse decision (reuse/memo.py) assumes: no statement changed its
current namespace, its settings, its functions or variables, no Python model ran in it, and
the query names no temporary view a statement of this process made (it would shadow the
catalog's object of that name). What changed it is kept on the session object itself, which a
restarted engine replaces."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Lakehouse")

# A statement's first keywords, after blanks and comments (dbt's query comment).
_FIRST_WORDS = re.compile(r"(?:\s|--[^\n]*|/\*.*?\*/)*((?:[A-Za-z_]+\s*){1,5})", re.S)
_CHANGES_SESSION = re.compile(
    r"^(?:use|set|reset|declare|add|(?:create|drop)(?: or replace)?(?: temporary| temp)?"
    r" function|drop temporary variable)\b"
)
_TEMP_VIEW = re.compile(
    r"create\s+(?:or\s+replace\s+)?(?:global\s+)?(?:temporary|temp)\s+view\s+"
    r"(?:if\s+not\s+exists\s+)?`?([\w$]+)`?",
    re.I,
)
# Kept on the session object itself, which a restarted engine replaces.
_CHANGED = "_lakehouse_memo_changed"  # what changed it
_TEMP_VIEWS = "_lakehouse_memo_temp_views"  # the temporary views statements made in it
_CONTEXT = "_lakehouse_name_context"  # its current catalog and namespace, while unchanged
_SESSION_LOCK = threading.Lock()


def statement_ran(spark: Any, statement: str) -> None:
    """Note a statement that leaves the session resolving names or expressions otherwise than a
    new session would (USE, SET, RESET, DECLARE, ADD JAR, a function made or dropped), and the
    temporary views statements make, which shadow a one-part name."""
    words = _FIRST_WORDS.match(statement)
    first = " ".join(words.group(1).lower().split()) if words else ""
    if _CHANGES_SESSION.match(first):
        session_changed(spark, first.split(" ")[0].upper())
        return
    temp = _TEMP_VIEW.match(statement, words.start(1)) if words else None
    if temp is not None:
        with _SESSION_LOCK:
            if getattr(spark, _TEMP_VIEWS, None) is None:
                setattr(spark, _TEMP_VIEWS, set())
            getattr(spark, _TEMP_VIEWS).add(temp.group(1).lower())


def session_changed(spark: Any, why: str) -> None:
    """No decision is remembered or recalled on this session from now on."""
    with _SESSION_LOCK:
        if getattr(spark, _CHANGED, None) is None:
            logger.debug(f"reuse decisions are not recalled in this session any more: {why}")
            setattr(spark, _CHANGED, why)


def name_context(spark: Any) -> tuple[str, str]:
    """(current catalog, current namespace): where the session resolves a name of one or two
    parts. Read once per session while no statement changed how it resolves names; each read
    is a round trip under Spark Connect, and every view's decision asks."""
    with _SESSION_LOCK:
        known = None if getattr(spark, _CHANGED, None) else getattr(spark, _CONTEXT, None)
    if known is not None:
        return known
    found = (str(spark.catalog.currentCatalog()), str(spark.catalog.currentDatabase()))
    with _SESSION_LOCK:
        # A USE is noted before it runs: one noted since the read began leaves nothing kept.
        if getattr(spark, _CHANGED, None) is None:
            setattr(spark, _CONTEXT, found)
    return found


def session_as_new(texts: Sequence[str]) -> bool:
    """Whether the session resolves `texts` as a new session would."""
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

    session = ENGINE.active
    if session is None:  # nothing ran in it yet
        return True
    with _SESSION_LOCK:
        if getattr(session, _CHANGED, None) is not None:
            return False
        temp_views = set(getattr(session, _TEMP_VIEWS, None) or ())
    if not temp_views:
        return True
    words = {w.lower() for text in texts for w in re.findall(r"[\w$]+", text)}
    return not (words & temp_views)
