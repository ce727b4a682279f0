"""Statement-scoped confs: `conf` lines held alone, `plan` lines shared between statements."""

from __future__ import annotations

import threading
import time
from typing import Any

from dbt.adapters.lakehouse.engine.statement_conf import (
    statement_conf,
    statement_plan_conf,
    statement_scope,
)

PLAN_KEY = "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold"
MERGE = f"-- lakehouse:plan {PLAN_KEY}=64MB\nmerge into t using s on t.id = s.id"


class FakeConf:
    """A session's runtime conf: get with a default, set, unset."""

    def __init__(self, **values: str) -> None:
        self.values: dict[str, str] = dict(values)
        self.sets: list[tuple[str, str]] = []

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.sets.append((key, value))
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class FakeSession:
    def __init__(self, **values: str) -> None:
        self.conf = FakeConf(**values)


def test_lines_are_told_apart() -> None:
    statement = f"-- lakehouse:conf a.b=1\n-- lakehouse:plan {PLAN_KEY}=64MB\nselect 1"
    assert statement_conf(statement) == {"a.b": "1"}
    assert statement_plan_conf(statement) == {PLAN_KEY: "64MB"}
    assert statement_plan_conf("select '-- lakehouse:plan a=b'") == {}


def test_plan_conf_holds_for_the_statement_then_is_unset() -> None:
    spark = FakeSession()
    with statement_scope(spark, MERGE):
        assert spark.conf.get(PLAN_KEY) == "64MB"
    assert spark.conf.get(PLAN_KEY) is None


def test_the_users_own_value_is_left_alone() -> None:
    spark = FakeSession(**{PLAN_KEY: "0"})
    with statement_scope(spark, MERGE):
        assert spark.conf.get(PLAN_KEY) == "0"
    assert spark.conf.get(PLAN_KEY) == "0"
    assert spark.conf.sets == []


def test_concurrent_statements_share_a_plan_conf_until_the_last_ends() -> None:
    spark = FakeSession()
    first_in, second_in, release_first = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def first() -> None:
        with statement_scope(spark, MERGE):
            first_in.set()
            release_first.wait(5)
        seen["after_first"] = spark.conf.get(PLAN_KEY)

    def second() -> None:
        first_in.wait(5)
        with statement_scope(spark, MERGE):
            second_in.set()  # entered while the first still runs: not serialized
            release_first.set()
            time.sleep(0.2)
            seen["during_second"] = spark.conf.get(PLAN_KEY)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert second_in.is_set()
    assert seen == {"after_first": "64MB", "during_second": "64MB"}
    assert spark.conf.get(PLAN_KEY) is None
    assert spark.conf.sets == [(PLAN_KEY, "64MB")]


def test_another_value_waits_for_the_key_to_be_free() -> None:
    spark = FakeSession()
    other = f"-- lakehouse:plan {PLAN_KEY}=1MB\nselect 1"
    inside, order = threading.Event(), []

    def holder() -> None:
        with statement_scope(spark, MERGE):
            inside.set()
            time.sleep(0.3)
            order.append(("holder", spark.conf.get(PLAN_KEY)))

    def waiter() -> None:
        inside.wait(5)
        with statement_scope(spark, other):
            order.append(("waiter", spark.conf.get(PLAN_KEY)))

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert order == [("holder", "64MB"), ("waiter", "1MB")]
    assert spark.conf.get(PLAN_KEY) is None


def test_conf_lines_are_restored_after_a_failure() -> None:
    spark = FakeSession(**{"spark.sql.sources.partitionOverwriteMode": "static"})
    statement = "-- lakehouse:conf spark.sql.sources.partitionOverwriteMode=dynamic\ninsert 1"
    try:
        with statement_scope(spark, statement):
            assert spark.conf.get("spark.sql.sources.partitionOverwriteMode") == "dynamic"
            raise RuntimeError("the statement failed")
    except RuntimeError:
        pass
    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode") == "static"
