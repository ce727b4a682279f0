"""A DB-API-shaped cursor over `SparkSession.sql`, the only place SQL reaches Spark.

One statement per `spark.sql` call (a batch is split on `;` outside quotes; after a failure,
only its `-- lakehouse:finally` statements still run). Results are
collected on fetch, so a DDL or DML statement runs exactly once, at `execute`. A statement that
loses an Iceberg commit race to another writer is run again with backoff: the failed attempt
committed nothing, so a re-run cannot double-apply.
A statement may carry Spark confs scoped to it alone (`-- lakehouse:conf k=v` and
`-- lakehouse:plan k=v` lines, engine/statement_conf.py).
A statement that can commit an Iceberg snapshot commits it under the dbt invocation and node
(iceberg/lineage.py), and the cursor keeps that snapshot's id for dbt's adapter_response.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sqlparse
from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.checkpoints.catalog_views import create_over_stand_ins
from dbt.adapters.lakehouse.checkpoints.registry import compute_read, with_checkpoints
from dbt.adapters.lakehouse.engine import prepared, runtime
from dbt.adapters.lakehouse.engine.diagnosis import engine_error_text, engine_error_type
from dbt.adapters.lakehouse.engine.statement_conf import statement_confs, statement_scope
from dbt.adapters.lakehouse.engine.written import (
    only_reads,
    without_comments,
    write_target,
    written_object,
)
from dbt.adapters.lakehouse.exceptions import CommitConflictError, ReadOnlyDepotError
from dbt.adapters.lakehouse.iceberg.lineage import (
    commit_kind,
    commit_lineage,
    commit_target,
    committed_snapshot,
)
from dbt.adapters.lakehouse.report.statements import StatementClock
from dbt.adapters.lakehouse.reuse import session_state

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from dbt.adapters.lakehouse.iceberg.describe_memo import DescribeMemo

logger = AdapterLogger("Lakehouse")

Description = tuple[str, str, None, None, None, None, bool]
# A batch's statement with this line runs even when an earlier one failed (cleanup, such as
# dropping a staging table); the batch still fails with the first error.
FINALLY_LINE = re.compile(r"^\s*--\s*lakehouse:finally\s*$", re.M)


def split_statements(sql: str) -> list[str]:
    stripped = sql.strip()
    if ";" not in stripped.rstrip(";"):
        return [stripped.rstrip(";").strip()] if stripped.rstrip(";").strip() else []
    statements = [s.strip().rstrip(";").strip() for s in sqlparse.split(stripped)]
    return [s for s in statements if s and not _only_comments(s)]


def _only_comments(statement: str) -> bool:
    return not without_comments(statement).strip()


def _plain(value: Any) -> Any:
    """Values agate can hold: nested rows, arrays and maps become JSON text."""
    if value is None or isinstance(
        value, (str, int, float, bool, decimal.Decimal, dt.date, dt.datetime)
    ):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return json.dumps(_jsonable(value), default=str, sort_keys=True)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "asDict"):
        return {k: _jsonable(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class LakehouseCursor:
    def __init__(
        self,
        spark: SparkSession,
        job_group: str,
        commit_retries: int = 4,
        sleep: Callable[[float], None] = time.sleep,
        read_only: Mapping[str, str] | None = None,
        node: str | None = None,
        job_description: str = runtime.DEFAULT_JOB_DESCRIPTION,
        tags: str | None = None,
        describe_memo: DescribeMemo | None = None,
    ) -> None:
        self._spark = spark
        self._describe_memo = describe_memo
        self._job_group = job_group
        self._job_description = job_description
        self._tags = tags
        self._commit_retries = commit_retries
        self._sleep = sleep
        # catalog name (lower case) -> the depot mounted there read-only, for messages
        self._read_only = {k.lower(): v for k, v in (read_only or {}).items()}
        self._node = node
        self._df: DataFrame | None = None
        # A query's rows and schema fetched as it ran (`_reads_at_once`), not yet handed out.
        self._ready: tuple[list[Any], Any] | None = None
        self._last_of_batch = True
        self._rows: list[tuple[Any, ...]] | None = None
        self._clock: StatementClock | None = None
        # The Iceberg snapshot the last execute committed (iceberg/lineage.py), for
        # adapter_response.
        self.snapshot_id: int | None = None

    @property
    def description(self) -> list[Description]:
        if self._ready is not None:
            schema = self._ready[1]
        elif self._df is not None:
            schema = self._df.schema
        else:
            return []
        return [
            (f.name, f.dataType.simpleString(), None, None, None, None, f.nullable)
            for f in schema.fields
        ]

    @property
    def rowcount(self) -> int:
        return -1 if self._rows is None else len(self._rows)

    def execute(self, sql: str, bindings: Sequence[Any] | None = None) -> None:
        self._df = None
        self._ready = None
        self._rows = None
        args = list(bindings) if bindings else None
        statements = split_statements(sql)
        for statement in statements:  # every one is checked before the first one runs
            self._refuse_read_only_write(statement)
        self.snapshot_id = None
        failure: Exception | None = None
        for number, statement in enumerate(statements, 1):
            if failure is not None and not FINALLY_LINE.search(statement):
                continue
            # Only the batch's last statement gives the rows a fetch reads.
            self._last_of_batch = number == len(statements)
            self._ready = None
            try:
                self._execute_one(statement, args)
            except Exception as exc:
                if failure is not None:  # the batch fails with its first error
                    logger.debug(f"cleanup statement failed too: {engine_error_text(exc)}")
                    continue
                failure = exc
        if failure is not None:
            raise failure

    def _execute_one(self, statement: str, args: list[Any] | None) -> None:
        if self._describe_memo is not None:  # before it runs: a failed write may have written
            self._describe_memo.statement_ran(statement)
        session_state.statement_ran(self._spark, statement)  # reuse/memo.py relies on it
        target = commit_target(statement)
        # The run's stand-ins it reads are made first, each timed as a statement of its own
        # (checkpoints/registry.py), so a checkpoint's jobs are not this statement's planning.
        reading = with_checkpoints(statement)
        if reading is not statement:
            runtime.tag_thread(self._spark, self._job_group, self._job_description)
            compute_read(reading, self._spark, node=self._node)
        # Timed for the node's wall-time split (report/statements.py); its rows' fetch too.
        self._clock = StatementClock(self._spark, self._node, target is not None)
        self._analysed: DataFrame | None = None
        if target is None:
            self._df = self._run_with_commit_retries(statement, args, reading)
            self._clock.ran(self._df if self._analysed is None else self._analysed)
            return
        lineage = commit_lineage(self._spark, self._node, self._tags, self._job_group)
        with lineage as (properties, session):
            # Under Spark Connect the statement's own clone of the session (iceberg/lineage.py).
            shared, self._spark = self._spark, session
            try:
                self._df = self._run_with_commit_retries(statement, args, reading)
            finally:
                self._spark = shared
        self._clock.ran(self._df)
        committed = committed_snapshot(self._spark, target, properties, commit_kind(statement))
        self._clock.checked()
        if committed is not None:  # the batch's last commit is the one reported
            self.snapshot_id = committed

    def _refuse_read_only_write(self, statement: str) -> None:
        if not self._read_only:
            return
        written = written_object(statement)
        if written is None or written.catalog is None:
            return
        depot = self._read_only.get(written.catalog.lower())
        if depot is not None:
            by = _who(self._node)
            raise ReadOnlyDepotError(
                f"{by} tried to write {written.name} in catalog '{written.catalog}', where depot "
                f"{depot} is mounted read-only (profile `depots:` read_only: true). Nothing was "
                "written. Fix: write the model to another catalog (config `database`), or drop "
                "read_only for that depot."
            )

    def _run_with_commit_retries(
        self, statement: str, args: list[Any] | None, reading: str
    ) -> DataFrame | None:
        """`reading`: the statement over the run's stand-ins (itself when it reads none)."""
        attempt = 0
        while True:
            try:
                runtime.tag_thread(self._spark, self._job_group, self._job_description)
                return self._sql(statement, args, reading)
            except Exception as exc:
                text = engine_error_text(exc)
                if engine_error_type(text) is not CommitConflictError:
                    raise
                if attempt >= self._commit_retries:
                    raise CommitConflictError(
                        commit_conflict_message(self._spark, statement, text, attempt), text
                    ) from exc
                attempt += 1
                delay = min(8.0, 0.25 * 2**attempt) * (0.5 + random.random())
                logger.debug(
                    f"commit conflict, retry {attempt}/{self._commit_retries} "
                    f"in {delay:.2f}s: {text.splitlines()[0]}"
                )
                self._sleep(delay)

    def _sql(self, statement: str, args: list[Any] | None, reading: str) -> DataFrame | None:
        created = None if args else create_over_stand_ins(self._spark, statement)
        if created is not None:  # its query's analysis is the statement's planning
            self._analysed, result = created
            return result
        frame = prepared.take(self._spark, statement)
        write = prepared.take_for_write(self._spark, statement)
        # The run's checkpointed views read as their checkpoints (checkpoints/); a frame
        # analysed over the views themselves is then not the one to run.
        if reading is not statement:
            logger.debug(f"{self._node}: reads this run's checkpoints of the views it names")
            statement, frame, write = reading, None, None
        plain = not args and not any(statement_confs(statement))
        if frame is not None and plain:
            logger.debug(f"{self._node}: runs the query its reuse decision analysed")
            return frame
        if write is not None and plain:
            table = self._create_from_analysed(statement, *write)
            if table is not None:
                return table
        with statement_scope(self._spark, statement):
            if args:
                return self._spark.sql(statement, args=args)
            if self._reads_at_once(statement):
                self._ready = runtime.fetched(self._spark, statement)
                return None
            return runtime.sql(self._spark, statement)

    def _reads_at_once(self, statement: str) -> bool:
        """Whether to fetch the rows as the statement runs: under Spark Connect, one round trip
        in place of four (runtime.fetched), for a statement that only reads and whose caller
        reads its rows straight after (runtime.rows_read_at_once: dbt's `execute` with `fetch`),
        so that it still runs, and fails, within `execute`."""
        return (
            self._last_of_batch
            and runtime.rows_read_now()
            and runtime.is_connect(self._spark)
            and only_reads(statement)
        )

    def _create_from_analysed(self, statement: str, query: str, frame: Any) -> DataFrame | None:
        """A table model's CREATE TABLE ... AS run over the query its reuse decision analysed
        (engine/prepared.py), or None when the query is not found in the statement."""
        found = prepared.over_view(statement, query, frame)
        if found is None:
            return None
        over, view = found
        logger.debug(f"{self._node}: creates its table from the query its reuse decision analysed")
        try:
            return runtime.sql(self._spark, over)
        finally:
            self._spark.catalog.dropTempView(view)

    def _collect(self) -> list[tuple[Any, ...]]:
        if self._rows is None:
            if self._ready is not None:
                self._rows = [tuple(_plain(v) for v in row) for row in self._ready[0]]
            elif self._df is None:
                self._rows = []
            else:
                self._rows = [tuple(_plain(v) for v in row) for row in self._df.collect()]
                if self._clock is not None:
                    self._clock.fetched()
        return self._rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._collect())

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        rows = self._collect()
        batch, self._rows = rows[:size], rows[size:]
        return batch

    def fetchone(self) -> tuple[Any, ...] | None:
        batch = self.fetchmany(1)
        return batch[0] if batch else None

    def cancel(self) -> None:
        runtime.cancel(self._spark, self._job_group)

    def close(self) -> None:
        self._df = None
        self._ready = None
        self._rows = None


# --- what a lost commit race tells the user ----------------------------------------------------
_SNAPSHOT_IDS = re.compile(r"expected id (\d+) != (\d+)")


def _who(connection_name: str | None) -> str:
    """A dbt connection's name as a subject: nodes are named by unique id (model.pkg.name)."""
    if not connection_name:
        return "A statement"
    parts = connection_name.split(".")
    if len(parts) >= 3 and parts[0] in ("model", "seed", "snapshot", "test", "unit_test"):
        return f"{parts[0].capitalize()} '{parts[-1]}' ({connection_name})"
    return f"dbt's step '{connection_name}'"


def latest_snapshot(spark: Any, table: str) -> str | None:
    """The table's newest commit, described from its `snapshots` metadata table."""
    try:
        rows = spark.sql(
            # Epoch millis, not the timestamp: collect() turns a timestamp into the Python
            # process's local time, and the message says UTC.
            "select snapshot_id, operation, unix_millis(committed_at) as committed_millis, "
            f"summary from {table}.snapshots order by committed_at desc limit 1"
        ).collect()
    except Exception:  # e.g. the table does not exist yet: nothing to describe
        return None
    if not rows:
        return None
    row = rows[0]
    summary = dict(row["summary"] or {})
    counts = ", ".join(
        f"{label} {summary[key]}"
        for key, label in (
            ("added-records", "rows added"),
            ("deleted-records", "rows deleted"),
            ("total-records", "rows in total"),
        )
        if key in summary
    )
    committed = dt.datetime.fromtimestamp(row["committed_millis"] / 1000, dt.timezone.utc)
    when = committed.strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"snapshot {row['snapshot_id']} ({row['operation']}, committed {when} UTC"
        + (f"; {counts}" if counts else "")
        + ")"
    )


def commit_conflict_message(spark: Any, statement: str, text: str, retries: int) -> str:
    """Which table lost the race, what the other writer committed, and what to do."""
    table = write_target(statement)
    lines = [
        f"Commit conflict on table {table or '(unknown)'}: another writer committed to it "
        f"first, and {retries} retries also lost the race. This statement changed nothing."
    ]
    other = latest_snapshot(spark, table) if table else None
    if other:
        lines.append(f"The other writer's commit is the table's latest: {other}.")
    else:
        ids = _SNAPSHOT_IDS.search(text)
        if ids:
            lines.append(
                f"The other writer moved the table from snapshot {ids.group(1)} to {ids.group(2)}."
            )
    lines.append(
        "Fix: run the model again (it rebuilds from the table as it now is); if writers "
        "collide often, run them one after another, or raise `commit_retries` in the profile."
    )
    # What Iceberg said (a failed validation lists every conflicting data file) and the
    # statement are for the log (CommitConflictError.engine_text), not the console.
    return "\n".join(lines)
