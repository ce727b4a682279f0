"""Whether this process's Spark session still resolves names and expressions as a new session
does, which a remembered reuse decision (reuse/memo.py) assumes: no statement changed its
current namespace, its settings, its functions or variables, no Python model ran in it, and
the query names no temporary view a statement of this process made (it would shadow the
catalog's object of that name). What changed it is kept on the session object itself, which a
restarted engine replaces."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Lakehouse")
T = TypeVar("T")

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
_CONF = "_lakehouse_kept_conf"  # SQL conf values read or set here, while unchanged
_SESSION_LOCK = threading.Lock()
# Held across a kept value's read from the session and across a kept conf's write, so that a
# read finishing after a write never keeps what it read before it, and threads asking at once
# (every node's first decision) wait for one read rather than each sending its own.
_READ_LOCK = threading.RLock()


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

    def read() -> tuple[str, str]:
        return str(spark.catalog.currentCatalog()), str(spark.catalog.currentDatabase())

    return _kept(spark, _CONTEXT, read)


def kept_conf(spark: Any, key: str) -> str | None:
    """The session's SQL conf `key` (None: unset), read once per session while no statement
    could have changed it (a SET or RESET, a Python model): under Spark Connect each read is a
    round trip, and the audited run's branch (`spark.wap.branch`) is asked by every
    connection's open and every decision. A value the adapter sets goes through set_kept_conf."""

    def read() -> dict[str, str | None]:
        return _conf_with(spark, key, spark.conf.get(key, None))

    kept = _kept(spark, _CONF, read, lambda known: key in known)
    return kept[key]


def set_kept_conf(spark: Any, key: str, value: str | None) -> None:
    """Set (None: unset) the session's SQL conf `key`, unless it holds `value` already."""
    with _READ_LOCK:
        if kept_conf(spark, key) == value:
            return
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
        _keep(spark, _CONF, _conf_with(spark, key, value))


def _conf_with(spark: Any, key: str, value: str | None) -> dict[str, str | None]:
    return {**(getattr(spark, _CONF, None) or {}), key: value}


def _kept(
    spark: Any, attribute: str, read: Callable[[], T], holds: Callable[[T], bool] = lambda _: True
) -> T:
    """The value kept on the session under `attribute` when it `holds` what is asked, else
    `read()`, kept while no statement changed the session (a change noted during the read
    leaves nothing kept)."""
    with _SESSION_LOCK:
        changed = getattr(spark, _CHANGED, None) is not None
    if changed:  # nothing is kept any more: no other reader's read to wait for
        return read()
    with _READ_LOCK:
        with _SESSION_LOCK:
            known = None if getattr(spark, _CHANGED, None) else getattr(spark, attribute, None)
        if known is not None and holds(known):
            return known
        found = read()
        _keep(spark, attribute, found)
        return found


def _keep(spark: Any, attribute: str, value: Any) -> None:
    """Keep `value` on the session, unless a statement changed it meanwhile."""
    with _SESSION_LOCK:
        if getattr(spark, _CHANGED, None) is None:
            setattr(spark, attribute, value)


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
