"""The adapter's methods for reused data tests (impl.py mixes them in), exposed to the `test`
materialization (macros/materializations/test.sql) and delegating to reuse/tests.py; and the
invocation's end, where the results its tests recorded are written (reuse/test_store_write.py)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import later, runtime
from dbt.adapters.lakehouse.reuse import memo, test_store, test_store_write, tests

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

logger = AdapterLogger("Lakehouse")


class TestReuseMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    __test__ = False  # pytest: a class named Test* that is not a test class

    @available
    def reuse_test_plan(
        self: LakehouseAdapter,
        model: Any,
        query: str,
        sql_header: str | None,
        stores_failures: bool,
    ) -> dict[str, Any]:
        """Whether the data test returns its recorded result instead of running its query."""
        return tests.decide(self, model, query, sql_header, stores_failures)

    @available
    def reuse_test_response(self) -> Any:
        """A reused test's response before its verdict is added (reuse_test_done): no
        statement ran."""
        from dbt.adapters.lakehouse.report.response import LakehouseAdapterResponse

        return LakehouseAdapterResponse(_message="OK", code="REUSED", rows_affected=0)

    @available
    def reuse_test_done(self, model: Any, response: Any, table: Any, reused: bool) -> Any:
        """The test's response carrying its verdict and costs; an executed test's result kept
        for the store."""
        costs = self.connections.node_costs()  # type: ignore[attr-defined]
        return tests.finish(model, response, table, reused, costs)

    def cleanup_connections(self) -> None:
        """The invocation's end (dbt calls it after the last node): its tests' results are
        written, one commit per catalog, started before the connections go and not waited for
        (reuse/test_store_write.py); under Spark Connect, run and waited for."""
        adapter = cast("LakehouseAdapter", self)
        try:
            memo.save_all()  # the decisions this invocation learnt, for the next one
            tests.forget_pending()
            rows, found = test_store.end_invocation()
            if rows:
                started_at = time.monotonic()
                with adapter.connection_named("lakehouse_test_results"):
                    handle = adapter.connections.get_thread_connection().handle
                    with adapter._spark_session("record test results") as spark:
                        # Under Spark Connect no JVM of this process could finish them later.
                        waited = runtime.is_connect(spark)

                        def start(statements: list[str], table: str, catalogs: list[str]) -> Any:
                            if waited:
                                return test_store_write.run_now(spark, statements)
                            return later.run_later(spark, statements, table, catalogs)

                        started = test_store_write.write(start, rows, found, handle.refuses_writes)
                how = "written in" if waited else "started in"
                logger.debug(
                    f"recording {started} of {len(rows)} test result(s): {how} "
                    f"{time.monotonic() - started_at:.2f}s{'' if waited else ', not waited for'}"
                )
        finally:
            super().cleanup_connections()  # type: ignore[misc]
