"""Spark SQL confs that hold for one statement, in a session every dbt thread shares.

A statement asks for them in comment lines:

    -- lakehouse:conf spark.sql.sources.partitionOverwriteMode=dynamic
    -- lakehouse:plan spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold=64MB

`conf` lines change what a statement means. They are set for the statement alone: statements
carrying them run one at a time (EXCLUSIVE_LOCK), from setting the conf until the statement has
run (DML runs eagerly inside spark.sql), then the earlier value is restored.

`plan` lines only steer how Spark plans (a join strategy), never the rows. Statements asking for
the same value share it and run at once: it is set while any of them runs and restored when the
last one ends; a statement asking another value for a key in use waits. A value the session
already has (the user's own, from the profile's `spark.conf`) is left alone.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple

EXCLUSIVE_LOCK = threading.Lock()
_LINE = re.compile(r"^\s*--\s*lakehouse:(conf|plan)\s+([\w.\-]+)\s*=\s*(\S+)\s*$", re.M)


class StatementConfs(NamedTuple):
    exclusive: dict[str, str]  # `conf` lines: confs that hold for the statement alone
    plan: dict[str, str]  # `plan` lines: planner settings it may share


def statement_confs(statement: str) -> StatementConfs:
    confs = StatementConfs({}, {})
    for kind, key, value in _LINE.findall(statement):
        (confs.exclusive if kind == "conf" else confs.plan)[key] = value
    return confs


def statement_conf(statement: str) -> dict[str, str]:
    return statement_confs(statement).exclusive


def statement_plan_conf(statement: str) -> dict[str, str]:
    return statement_confs(statement).plan


class _SharedPlanConf:
    """Planner settings held while any statement asking for them runs (reference counted)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # key -> [value, how many running statements hold it]
        self._held: dict[str, list[Any]] = {}

    @contextmanager
    def hold(self, spark: Any, settings: dict[str, str]) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(
                lambda: all(
                    key not in self._held or self._held[key][0] == value
                    for key, value in settings.items()
                )
            )
            taken = []
            for key, value in settings.items():
                if key in self._held:
                    self._held[key][1] += 1
                elif spark.conf.get(key, None) is None:  # the user's own value wins
                    spark.conf.set(key, value)
                    self._held[key] = [value, 1]
                else:
                    continue
                taken.append(key)
        try:
            yield
        finally:
            with self._changed:
                for key in taken:
                    entry = self._held[key]
                    entry[1] -= 1
                    if entry[1] == 0:
                        del self._held[key]
                        spark.conf.unset(key)
                self._changed.notify_all()


SHARED_PLAN_CONF = _SharedPlanConf()


@contextmanager
def statement_scope(spark: Any, statement: str) -> Iterator[None]:
    """Run the body with the statement's own confs set (see the module docstring)."""
    exclusive, plan = statement_confs(statement)
    with SHARED_PLAN_CONF.hold(spark, plan) if plan else nullcontext():
        if not exclusive:
            yield
            return
        with EXCLUSIVE_LOCK:
            previous = {key: spark.conf.get(key, None) for key in exclusive}
            try:
                for key, value in exclusive.items():
                    spark.conf.set(key, value)
                yield
            finally:
                for key, earlier in previous.items():
                    if earlier is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, earlier)
