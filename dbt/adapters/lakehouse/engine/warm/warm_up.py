"""The warm engine's warm-up: while no command is attached, the JVM runs a small project's
statements on a scratch catalog of its own, so the JIT compiles the paths the next commands take.

A new JVM interprets Spark's analyzer, planner, code generator and Iceberg's writers at first;
the JIT compiles a method after thousands of calls, so each of an engine's first dozens of
builds pays for compiling what the build itself runs: on a 2-core machine, a small project's
second to sixth builds took 1.0-1.6 s longer than on an engine that had run fifteen rounds of
this module's statements (bench/RESULTS.md). Those compilations are the same whichever tables
the statements read, so they are done here, in time no command waits on.

- Started by the supervisor (server.py) once the engine is ready; it runs only while no
  command has been attached for IDLE_SECONDS and stops at its budget (the profile's
  `engine: {warm_up_seconds: N}`, statement time counted), so a command that attaches waits
  at most for the one statement in flight.
- Its session is a new one (its own SQL conf and catalogs); its catalog, `lakehouse_warm_up`, is
  an Iceberg JDBC catalog on a SQLite file where the engine has the embedded lakehouse's
  driver (views included), else a Hadoop catalog (no views), both in the engine's folder, and
  removed with every table in it when the warm-up ends. Its jobs carry their own job group.
- Standard library only and no dbt: the supervisor runs without loading dbt.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CATALOG = "lakehouse_warm_up"
NAMESPACE = f"{CATALOG}.warm_up"
JOB_GROUP = "lakehouse-warm-up"
# A command's gap shorter than this (a script's commands, a test suite's) is not taken.
IDLE_SECONDS = 2.0
_SQLITE_DRIVER = "org.sqlite.JDBC"
_JDBC_CATALOG = "org.apache.iceberg.jdbc.JdbcCatalog"

_T = NAMESPACE
# A project's shape: seeds written, staging views with renames and casts, a table over CTEs,
# aggregates and joins, dbt's generic tests, a merge, an append, metadata reads.
_SEEDS = [
    f"create or replace table {_T}.raw_customers using iceberg as select * from values "
    "(1, 'Ann', date'2024-01-01'), (2, 'Bo', date'2024-01-02'), (3, 'Cy', date'2024-01-03') "
    "as v(id, first_name, signed_up)",
    f"create or replace table {_T}.raw_orders using iceberg as select * from values "
    "(1, 1, date'2024-02-01', 'placed', 1050), (2, 1, date'2024-02-02', 'shipped', 300), "
    "(3, 2, date'2024-02-03', 'completed', 725) as v(id, user_id, order_date, status, cents)",
]
_VIEWS = [
    f"create or replace view {_T}.stg_customers as select id as customer_id, "
    f"upper(first_name) as first_name, signed_up from {_T}.raw_customers",
    f"create or replace view {_T}.stg_orders as select id as order_id, user_id as customer_id, "
    f"order_date, status, cast(cents / 100 as decimal(10, 2)) as amount from {_T}.raw_orders",
]
_STAGED = {
    "customers": f"{_T}.stg_customers",
    "orders": f"{_T}.stg_orders",
}
_TESTS = [
    "select count(*) as failures, count(*) != 0 as should_warn, count(*) != 0 as should_error "
    f"from ({sql}) dbt_internal_test"
    for sql in (
        "select customer_id as unique_field, count(*) as n_records from {customers} "
        "where customer_id is not null group by customer_id having count(*) > 1",
        "select order_id from {orders} where order_id is null",
        "with all_values as (select status as value_field, count(*) as n_records from {orders} "
        "group by status) select * from all_values "
        "where value_field not in ('placed', 'shipped', 'completed')",
        "with child as (select customer_id as from_field from {orders} "
        "where customer_id is not null), parent as (select customer_id as to_field "
        f"from {_T}.customers) select from_field from child left join parent "
        "on child.from_field = parent.to_field where parent.to_field is null",
    )
]
_MART = (
    f"create or replace table {_T}.customers using iceberg as "
    "with o as (select customer_id, min(order_date) as first_order, count(*) as orders, "
    "sum(amount) as value from {orders} group by customer_id), "
    "p as (select customer_id, sum(case when status = 'placed' then amount else 0 end) "
    "as placed from {orders} group by customer_id) "
    "select c.customer_id, c.first_name, o.first_order, coalesce(o.orders, 0) as orders, "
    "coalesce(p.placed, 0) as placed, o.value from {customers} c "
    "left join o on c.customer_id = o.customer_id left join p on c.customer_id = p.customer_id"
)
_AFTER = [
    f"merge into {_T}.customers t using (select * from {_T}.customers) s "
    "on t.customer_id = s.customer_id when matched then update set * "
    "when not matched then insert *",
    f"insert into {_T}.raw_orders select id + 10, user_id, order_date, status, cents "
    f"from {_T}.raw_orders",
    f"describe table extended {_T}.customers",
    f"select snapshot_id, committed_at from {_T}.raw_orders.snapshots",
    f"select * from {_T}.raw_orders.refs",
    f"show tables in {_T}",
]


# The staging view's columns, read from the seed directly where the catalog has no views.
_RAW_ORDERS = (
    "(select id as order_id, user_id as customer_id, order_date, status, "
    f"cast(cents / 100 as decimal(10, 2)) as amount from {_T}.raw_orders)"
)
_TABLES = ("customers", "raw_orders", "raw_customers")


def statements(views: bool) -> list[str]:
    """One round: the project built, tested, merged into and dropped. Without views (a
    Hadoop catalog has none), the tables are read directly."""
    staged = _STAGED if views else {"customers": f"{_T}.raw_customers", "orders": _RAW_ORDERS}
    dropped_views = [f"drop view if exists {_T}.stg_{name}" for name in _STAGED]
    return [
        f"create namespace if not exists {NAMESPACE}",
        *_SEEDS,
        *(_VIEWS if views else []),
        _MART.format(**staged),
        *(test.format(**staged) for test in _TESTS),
        *_AFTER,
        *(dropped_views if views else []),
        *(f"drop table if exists {_T}.{table} purge" for table in _TABLES),
    ]


class WarmUp(threading.Thread):
    """Rounds of `statements` on `root`'s new session while `idle()` says no command is
    attached, until `budget_seconds` of statement time is spent or `stop()` is called."""

    def __init__(
        self, root: Any, folder: Path, budget_seconds: float, idle: Callable[[], bool]
    ) -> None:
        super().__init__(name="lakehouse-warm-up", daemon=True)
        self.root = root
        self.folder = folder / "warm-up"
        self.budget_seconds = budget_seconds
        self.idle = idle
        self.stopped = threading.Event()
        self.spent_seconds = 0.0
        self.rounds = 0
        self.state = "waiting"
        self.error: str | None = None

    def stop(self) -> None:
        self.stopped.set()

    def status(self) -> dict[str, Any]:
        status = {
            "state": self.state,
            "rounds": self.rounds,
            "seconds": round(self.spent_seconds, 1),
            "budget_seconds": self.budget_seconds,
        }
        if self.error:
            status["error"] = self.error
        return status

    def run(self) -> None:
        session = None
        try:
            if not self._wait_idle():
                return
            session, views = self._session()
            while self.spent_seconds < self.budget_seconds:
                if not self._round(session, statements(views)):
                    return
        except Exception as exc:  # never the engine's failure: the warm-up just ends
            self.error = " ".join(str(exc).split())[:300] or type(exc).__name__
        finally:
            self.state = "failed" if self.error else "done"
            self._clean(session)
            # the supervisor's output is the engine's log (engine.log), which outlives it
            failed = f": {self.error}" if self.error else ""
            print(
                f"dbt-lakehouse warm-up {self.state}{failed}: {self.rounds} round(s) in "
                f"{self.spent_seconds:.1f} s of statements",
                flush=True,
            )

    def _round(self, session: Any, round_statements: list[str]) -> bool:
        """One round, begun again from its first statement where a command's attach cancelled
        the statement in flight (`interrupt`); False once stopped."""
        for sql in round_statements:
            if not self._wait_idle():
                return False
            started = time.monotonic()
            try:
                session.sql(sql).collect()
            except Exception:
                if self.stopped.is_set():
                    return False  # cancelled: the engine is stopping
                if self.idle():
                    raise  # not cancelled for a command: a failure of its own
                return True  # cancelled: the round is run again, whole, once idle
            finally:
                self.spent_seconds += time.monotonic() - started
        self.rounds += 1
        return True

    def interrupt(self, context: Any) -> None:
        """A command attached, or the engine stops: the statement in flight is cancelled, for
        the command to have the cores (a first round's statement on a new JVM takes seconds)."""
        if self.state == "running":
            try:
                context.cancelJobGroup(JOB_GROUP)
            except Exception:
                pass

    def _wait_idle(self) -> bool:
        while not self.stopped.is_set():
            if self.idle():
                self.state = "running"
                return True
            self.state = "paused" if self.rounds or self.spent_seconds else "waiting"
            self.stopped.wait(0.25)
        return False

    def _session(self) -> tuple[Any, bool]:
        """A session of the warm-up's own with its catalog; whether that catalog has views."""
        jvm = self.root.sparkContext._jvm
        session = self.root._jsparkSession.newSession()
        self.root.sparkContext.setJobGroup(JOB_GROUP, "dbt-lakehouse warm-up")
        self.folder.mkdir(mode=0o700, exist_ok=True)
        prefix = f"spark.sql.catalog.{CATALOG}"
        conf = session.conf()
        conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        conf.set(f"{prefix}.warehouse", (self.folder / "warehouse").as_uri())
        conf.set(f"{prefix}.cache-enabled", "false")
        try:
            jvm.java.lang.Class.forName(
                _SQLITE_DRIVER, True, jvm.java.lang.Thread.currentThread().getContextClassLoader()
            )
            views = True
        except Exception:
            views = False
        if views:
            conf.set(f"{prefix}.catalog-impl", _JDBC_CATALOG)
            conf.set(f"{prefix}.uri", f"jdbc:sqlite:{(self.folder / 'catalog.db').as_posix()}")
            conf.set(f"{prefix}.jdbc.schema-version", "V1")
        else:
            conf.set(f"{prefix}.type", "hadoop")
        return session, views

    def _clean(self, session: Any) -> None:
        if session is not None:
            for table in _TABLES:
                try:
                    session.sql(f"drop table if exists {_T}.{table} purge").collect()
                except Exception:
                    break  # the engine is stopping: the folder goes below all the same
        shutil.rmtree(self.folder, ignore_errors=True)
