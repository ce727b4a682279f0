"""dbt connections over the shared SparkSession, and the one place engine errors are mapped.

A dbt "connection" is cheap here: a handle on the process-wide session plus a job group for
cancelling that thread's Spark jobs. Spark has no transactions; every Iceberg write is its own
atomic commit, so begin/commit/rollback are no-ops.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.sql import SQLConnectionManager
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.cursor import LakehouseCursor
from dbt.adapters.lakehouse.depot import Depot, _safe_url
from dbt.adapters.lakehouse.exceptions import (
    DataCheckError,
    engine_error_text,
    engine_error_type,
    explain_engine_error,
    failed_check_message,
)
from dbt.adapters.lakehouse.preflight import scrub, secret_values
from dbt.adapters.lakehouse.session import get_spark, resolve_profile_depot

if TYPE_CHECKING:
    import agate
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")


class LakehouseHandle:
    """What dbt holds as `connection.handle`."""

    def __init__(self, spark: SparkSession, name: str, commit_retries: int) -> None:
        self.spark = spark
        self.job_group = f"dbt-{name}-{threading.get_ident()}"
        self._commit_retries = commit_retries

    def cursor(self) -> LakehouseCursor:
        return LakehouseCursor(self.spark, self.job_group, self._commit_retries)

    def cancel(self) -> None:
        self.spark.sparkContext.cancelJobGroup(self.job_group)

    def close(self) -> None:
        """The session is shared and outlives connections: nothing to release."""

    def rollback(self) -> None:
        """Iceberg commits are atomic per statement: there is nothing to roll back."""


class LakehouseConnectionManager(SQLConnectionManager):
    TYPE = "lakehouse"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds: LakehouseCredentials = connection.credentials  # type: ignore[assignment]
        spark = get_spark(creds)
        connection.handle = LakehouseHandle(spark, connection.name or "conn", creds.commit_retries)
        connection.state = ConnectionState.OPEN
        return connection

    @contextmanager
    def exception_handler(self, sql: str) -> Generator[None, None, None]:
        try:
            yield
        except DbtRuntimeError:
            raise
        except Exception as exc:
            depot = self._depot()
            hidden = secret_values(depot) if depot is not None else []
            text = scrub(engine_error_text(exc), hidden)
            logger.debug(f"Lakehouse: error while running:\n{sql}\n{text}")
            failed_check = failed_check_message(text)
            if failed_check is not None:
                raise DataCheckError(failed_check) from exc
            if type(exc).__name__ in {"Py4JNetworkError", "Py4JError"} and "java" not in text:
                raise DbtRuntimeError(
                    f"Lost the connection to the Spark JVM ({text}). It may have run out of "
                    "memory or been killed; see logs/spark.log. Raise `spark.driver_memory` in "
                    "the profile if it was memory."
                ) from exc
            remote = depot is not None and depot.catalog.type in ("rest", "nessie")
            uri = depot.catalog.uri if remote and depot is not None else None
            explained = explain_engine_error(text, _safe_url(uri) if uri else None)
            message = f"{explained}\n{text}" if explained else text
            raise engine_error_type(text)(message) from exc

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> tuple[AdapterResponse, agate.Table]:
        # A query runs in Spark when its rows are fetched, after add_query's handler has
        # returned: its errors need the same mapping.
        with self.exception_handler(sql):
            return super().execute(sql, auto_begin=auto_begin, fetch=fetch, limit=limit)

    def _depot(self) -> Depot | None:
        """The profile's depot, to name its catalog and mask its secrets in error messages."""
        cached: Depot | None = getattr(self, "_resolved_depot", None)
        if cached is None:
            try:
                cached = resolve_profile_depot(self.profile.credentials)  # type: ignore[arg-type]
            except Exception:  # a message without the catalog's uri beats no message
                return None
            self._resolved_depot = cached
        return cached

    def cancel(self, connection: Connection) -> None:
        handle = connection.handle
        if isinstance(handle, LakehouseHandle):
            handle.cancel()

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        rows = getattr(cursor, "rowcount", -1)
        return AdapterResponse(_message="OK", rows_affected=rows if rows >= 0 else None)

    @classmethod
    def data_type_code_to_name(cls, type_code: Any) -> str:
        # The cursor describes columns with Spark's own type names (`timestamp`, `bigint`).
        return str(type_code)

    def add_begin_query(self, *args: Any, **kwargs: Any) -> None:
        pass

    def add_commit_query(self, *args: Any, **kwargs: Any) -> None:
        pass

    def begin(self) -> None:
        pass

    def commit(self) -> None:
        pass

    def rollback_if_open(self) -> None:
        pass
