"""dbt connections over the shared SparkSession, and the one place engine errors are mapped.

A dbt "connection" is cheap here: a handle on the process-wide session plus a job group for
cancelling that thread's Spark jobs. Spark has no transactions; every Iceberg write is its own
atomic commit, so begin/commit/rollback are no-ops.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.sql import SQLConnectionManager
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.checkpoints.registry import take_note
from dbt.adapters.lakehouse.command_setup import set_up_command
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.cursor import LakehouseCursor
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.connect import interrupt_commit
from dbt.adapters.lakehouse.engine.diagnosis import (
    engine_error_text,
    engine_error_type,
    explain_engine_error,
)
from dbt.adapters.lakehouse.engine.launch import spark_log_path
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.engine.spec import catalog_contexts
from dbt.adapters.lakehouse.engine.sql_errors import failed_check_message
from dbt.adapters.lakehouse.engine.sql_origin import explain_config_column, without_plans
from dbt.adapters.lakehouse.engine.warm.client import lost_engine_message
from dbt.adapters.lakehouse.exceptions import CommitConflictError, DataCheckError
from dbt.adapters.lakehouse.iceberg.describe_memo import DescribeMemo
from dbt.adapters.lakehouse.iceberg.tables import JAVA_TABLE_FEATURES, WITHOUT_CONNECT
from dbt.adapters.lakehouse.profile.resolved import ResolvedProfile, resolve_profile
from dbt.adapters.lakehouse.profile.secrets import safe_url, scrub
from dbt.adapters.lakehouse.report.native import node_share
from dbt.adapters.lakehouse.report.response import (
    LakehouseAdapterResponse,
    cost_fields,
    response_fields,
)
from dbt.adapters.lakehouse.report.spark_jobs import JobsDone, node_jobs
from dbt.adapters.lakehouse.report.statements import read_phases
from dbt.adapters.lakehouse.report.tags import job_description, query_tags
from dbt.adapters.lakehouse.report.work import take as take_work
from dbt.adapters.lakehouse.reuse.verdicts import take_verdict

if TYPE_CHECKING:
    import agate
    from pyspark.sql import SparkSession

logger = AdapterLogger("Lakehouse")


class LakehouseHandle:
    """What dbt holds as `connection.handle`."""

    def __init__(
        self,
        spark: SparkSession,
        name: str,
        commit_retries: int,
        read_only: Mapping[str, str] | None = None,
        tags: str | None = None,
    ) -> None:
        from dbt_common.invocation import get_invocation_id

        self.spark = spark
        self.name = name
        # The invocation in the group: a warm engine's earlier runs of this node are other
        # groups, so the node's Spark jobs (report/spark_jobs.py) are this run's alone.
        invocation_id = get_invocation_id()
        self.job_group = f"dbt-{invocation_id}-{name}-{threading.get_ident()}"
        self.job_description = job_description(name, invocation_id, tags)
        self.tags = tags
        self._commit_retries = commit_retries
        self._read_only = dict(read_only or {})
        # Temporary views whose rows this connection computed and holds (runtime.compute_once):
        # dropped when it closes, so a node that failed before dropping its view does not
        # leave the rows cached (under Spark Connect, in a server that outlives this process).
        self.computed_views: set[str] = set()
        # The node's DESCRIBE results while its materialization keeps them (describe_memo.py).
        self.describe_memo = DescribeMemo()

    def refuses_writes(self, catalog: str) -> bool:
        """Whether `catalog` is a depot mounted read-only (the cursor refuses its writes)."""
        return catalog.lower() in {name.lower() for name in self._read_only}

    def cursor(self) -> LakehouseCursor:
        return LakehouseCursor(
            self.spark,
            self.job_group,
            self._commit_retries,
            read_only=self._read_only,
            node=self.name,
            job_description=self.job_description,
            tags=self.tags,
            describe_memo=self.describe_memo,
        )

    def cancel(self) -> None:
        runtime.cancel(self.spark, self.job_group)
        if runtime.is_connect(self.spark):  # a commit runs on a clone of the session
            interrupt_commit(self.spark, self.job_group)

    def compute_view(self, view_name: str) -> None:
        """Compute a temporary view's rows once and point the view at them (runtime.compute_once),
        held until the view is dropped or this connection closes.

        A local checkpoint, not CACHE TABLE: it is computed in this session by the first statement
        reading the view and cuts the lineage, so the key check and the MERGE read the same rows
        without the model's query running again; CACHE TABLE would plan in a cloned session that
        reloads the catalogs and re-caches after every write to the tables it reads. The rows
        stay with the executors until the view is dropped and Spark's cleaner frees them.
        """
        logger.debug(f"checkpointing temporary view {view_name}: its first reader computes it")
        self.computed_views.add(view_name)
        runtime.compute_once(self.spark, view_name)

    def drop_view(self, view_name: str) -> None:
        self.spark.catalog.dropTempView(view_name)
        self.computed_views.discard(view_name)
        self.describe_memo.forget(view_name)

    def close(self) -> None:
        """The session is shared and outlives connections; only the rows this connection
        computed are released."""
        while self.computed_views:
            view = self.computed_views.pop()
            try:
                self.spark.catalog.dropTempView(view)
            except Exception as exc:  # the session is gone: nothing is held any more
                logger.debug(f"temporary view {view} not dropped: {exc}")

    def rollback(self) -> None:
        """Iceberg commits are atomic per statement: there is nothing to roll back."""


class LakehouseConnectionManager(SQLConnectionManager):
    TYPE = "lakehouse"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        # Constructed when dbt registers the adapter, before it parses the project.
        if isinstance(profile.credentials, LakehouseCredentials):
            set_up_command(profile, os.environ)
        self._noted = threading.local()

    def note_config_sql(self, noted: Mapping[str, list[str]]) -> None:
        """The SQL the running node's configs contribute (engine/sql_origin.py), so an error on a
        column
        written there names the config. Kept per thread, for the node its connection runs."""
        connection = self.get_if_exists()
        self._noted.node = connection.name if connection is not None else None
        self._noted.sql = dict(noted)

    def _config_sql(self) -> Mapping[str, list[str]]:
        connection = self.get_if_exists()
        node = connection.name if connection is not None else None
        if node is None or getattr(self._noted, "node", None) != node:
            return {}
        return self._noted.sql  # type: ignore[no-any-return]

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds: LakehouseCredentials = connection.credentials  # type: ignore[assignment]
        resolved = resolve_profile(creds)
        spark = ENGINE.get(resolved.spec)
        run = audit.current_run()
        if run is not None:
            # Before any statement: an audited run reads and writes branches through the
            # table's Java object, which a Connect client has not got.
            runtime.driver_jvm(spark, JAVA_TABLE_FEATURES, WITHOUT_CONNECT)
        audit.point_session(spark, run.branch if run is not None else None)
        connection.handle = LakehouseHandle(
            spark,
            connection.name or "conn",
            creds.commit_retries,
            resolved.read_only,
            query_tags(creds.query_tags, os.environ),
        )
        connection.state = ConnectionState.OPEN
        return connection

    @contextmanager
    def exception_handler(self, sql: str) -> Generator[None, None, None]:
        try:
            yield
        except CommitConflictError as exc:
            # The cursor's message is the console's; what Iceberg said goes to the log only, and
            # once: `execute` and dbt's `add_query` inside it both enter this handler.
            if exc.engine_text:
                logger.debug(f"error while running:\n{sql}\n{self._scrubbed(exc.engine_text)}")
                exc.engine_text = ""
            raise
        except DbtRuntimeError:
            raise
        except Exception as exc:
            resolved = self._resolved()
            text = self._scrubbed(engine_error_text(exc), resolved)
            logger.debug(f"error while running:\n{sql}\n{text}")
            error_type = engine_error_type(text)
            if error_type is DataCheckError:  # the check's own message says it all
                raise DataCheckError(failed_check_message(text) or text) from exc
            if type(exc).__name__ == "SparkConnectGrpcException" and "UNAVAILABLE" in text:
                master = self.profile.credentials.spark.master  # type: ignore[attr-defined]
                raise DbtRuntimeError(
                    f"Lost the connection to the Spark Connect server {safe_url(master)} "
                    f"({text.splitlines()[0]}). It may have stopped or restarted; its own log "
                    "says why. The statement running then may or may not have committed: check "
                    "the table's snapshots before running it again."
                ) from exc
            lost = lost_engine_message(ENGINE.attachment, exc, text)
            if lost is not None:
                raise DbtRuntimeError(lost) from exc
            if type(exc).__name__ in {"Py4JNetworkError", "Py4JError"} and "java" not in text:
                raise DbtRuntimeError(
                    f"Lost the connection to the Spark JVM ({text}). It may have run out of "
                    f"memory or been killed; see {spark_log_path()}. Raise `spark.driver_memory` "
                    "in the profile if it was memory."
                ) from exc
            explained = explain_config_column(text, self._config_sql()) or explain_engine_error(
                text,
                self._remote_catalog_uri(resolved),
                catalog_contexts(resolved.spec) if resolved is not None else None,
            )
            shown = without_plans(text)
            message = f"{explained}\n{shown}" if explained else shown
            raise error_type(message) from exc

    def execute(
        self, sql: str, auto_begin: bool = False, fetch: bool = False, limit: int | None = None
    ) -> tuple[AdapterResponse, agate.Table]:
        # A query runs in Spark when its rows are fetched, after add_query's handler has
        # returned: its errors need the same mapping. Rows fetched straight after may be
        # fetched as the statement runs (cursor.py `_reads_at_once`).
        with self.exception_handler(sql), runtime.rows_read_at_once(fetch):
            return super().execute(sql, auto_begin=auto_begin, fetch=fetch, limit=limit)

    @staticmethod
    def _remote_catalog_uri(resolved: ResolvedProfile | None) -> str | None:
        """The uri to name in a catalog error: only when one remote catalog is mounted, since
        the engine's text does not say which catalog answered."""
        uris = {c.uri for c in resolved.spec.catalogs if c.uri} if resolved is not None else set()
        return uris.pop() if len(uris) == 1 else None

    def _resolved(self) -> ResolvedProfile | None:
        """The profile's depots, to name the catalog and mask every secret in messages."""
        try:
            return resolve_profile(self.profile.credentials)  # type: ignore[arg-type]
        except Exception:  # a message without the catalog's uri beats no message
            return None

    def _scrubbed(self, text: str, resolved: ResolvedProfile | None = None) -> str:
        """`text` with every secret of the profile's depots masked."""
        resolved = resolved or self._resolved()
        return scrub(text, resolved.secret_values() if resolved is not None else [])

    def cancel(self, connection: Connection) -> None:
        handle = connection.handle
        if isinstance(handle, LakehouseHandle):
            handle.cancel()

    def node_response(
        self,
        code: str,
        rows_given: int | None = None,
        main: Any = None,
        message: str | None = None,
    ) -> LakehouseAdapterResponse:
        """The running node's response: its commits and Spark jobs in this invocation
        (report/), under `code`. `main`: the response its main statement gave, whose snapshot
        stands when the node recorded no commit (lineage off)."""
        from dbt_common.invocation import get_invocation_id

        connection = self.get_thread_connection()
        name = connection.name or "conn"
        work = take_work(get_invocation_id(), name)
        read_phases(work.statements)
        jobs = self._node_jobs(connection)
        native = node_share(connection.handle.spark, jobs.job_ids) if jobs and jobs.jobs else None
        fields = response_fields(code, work, jobs, rows_given, message, native)
        fields.setdefault("snapshot_id", getattr(main, "snapshot_id", None))
        fields.update(take_verdict(get_invocation_id(), name))
        fields.update(take_note(str(get_invocation_id()), name))
        return LakehouseAdapterResponse(**fields)

    def node_costs(self) -> dict[str, Any]:
        """The running node's Spark jobs and wall-time split (report/), for a node whose
        response stays its main statement's (a data test)."""
        from dbt_common.invocation import get_invocation_id

        connection = self.get_thread_connection()
        work = take_work(get_invocation_id(), connection.name or "conn")
        read_phases(work.statements)
        return cost_fields(work, self._node_jobs(connection))

    @staticmethod
    def _node_jobs(connection: Connection) -> JobsDone | None:
        """The node's Spark jobs; none without asking Spark when its connection never opened
        in this node (a node reused from a remembered decision made no Spark call at all)."""
        if connection.state != ConnectionState.OPEN:
            return JobsDone(0, 0.0)
        handle: LakehouseHandle = connection.handle
        return node_jobs(handle.spark, handle.job_group)

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        rows = getattr(cursor, "rowcount", -1)
        return LakehouseAdapterResponse(
            _message="OK",
            rows_affected=rows if rows >= 0 else None,
            snapshot_id=getattr(cursor, "snapshot_id", None),
        )

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
