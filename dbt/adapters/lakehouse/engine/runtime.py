"""The one seam between the adapter and the kind of Spark session it holds.

Most of the adapter speaks SQL, which an in-process driver and a Spark Connect client
(`spark.master: sc://host:port`) run alike. A few things do not: cancelling a thread's jobs,
computing a view's rows once, and the features that reach into Iceberg's Java objects through
py4j (commit lineage, audited publishing, the Delta log). Each of those asks here; under Spark
Connect a call either has its Connect form or is refused with a `ConnectUnsupportedError` that
names the feature, why it needs the driver in this process, and what to do instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from dbt.adapters.lakehouse.exceptions import ConnectUnsupportedError

CONNECT_SCHEME = "sc://"
CONNECT_DEFAULT_PORT = 15002


def is_connect_master(master: str) -> bool:
    return master.strip().lower().startswith(CONNECT_SCHEME)


def is_connect(spark: Any) -> bool:
    """A Spark Connect client session (pyspark.sql.connect), not an in-process driver."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def connect_address(master: str) -> tuple[str, int]:
    """The host and port an `sc://host[:port][/;params]` URL names."""
    rest = master.strip()[len(CONNECT_SCHEME) :]
    authority = rest.split("/", 1)[0].split(";", 1)[0]
    host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    return (host, int(port)) if port.isdigit() else (authority, CONNECT_DEFAULT_PORT)


# PySpark 4 logs each error that carries a query context (a failed model's SQL error, in process
# or under Spark Connect) as JSON with the JVM's stack trace on stderr, then raises it; the adapter
# reports the error itself (connections.py), so these loggers stay quiet. PySpark 3.5 has none.
_QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def quiet_error_logs() -> None:
    """Keep PySpark's own logging of a failed statement off dbt's stderr (PySpark 4)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5: errors are only raised
        return
    for name in _QUERY_CONTEXT_LOGGERS:
        # Made as PySpark makes it (with its handler), then above every level it logs at.
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 1)


def driver_jvm(spark: Any, feature: str, instead: str) -> Any:
    """The driver's JVM view (py4j) for `feature`; refused under Spark Connect, where the
    driver runs in the server's process and this one has no JVM to reflect into."""
    if is_connect(spark):
        raise ConnectUnsupportedError(
            f"{feature} is not available under Spark Connect (spark.master sc://...): it reads "
            "Iceberg's Java objects in the Spark driver, which runs in the Connect server's "
            f"process, not in dbt's. Fix: {instead}"
        )
    return spark._jvm


DEFAULT_JOB_DESCRIPTION = "dbt-lakehouse"


def tag_thread(spark: Any, group: str, description: str = DEFAULT_JOB_DESCRIPTION) -> None:
    """Mark this thread's next Spark jobs as the connection's, so `cancel` stops them, and
    describe them (a node's description names it: report/tags.py)."""
    if is_connect(spark):
        # Connect tags are per thread, like a job group: one tag names the connection.
        spark.clearTags()
        spark.addTag(group)
    else:
        # What is set lives in the JVM thread serving this Python thread's py4j connection: set
        # once for a node's statements and decisions, not three round trips before each.
        tagged = (spark, group, description, _py4j_connection(spark))
        if tagged[3] is not None and getattr(_TAGGED, "last", None) == tagged:
            return
        spark.sparkContext.setJobGroup(group, description, interruptOnCancel=True)
        tag = getattr(spark, "_lakehouse_job_tag", None)
        if tag is not None:
            # On a warm engine (engine/warm/): the tag the engine cancels this command's jobs by
            # if the command dies, and this session as the thread's active one, which Iceberg's
            # catalogs read outside a statement (the JVM's default session is the engine's).
            spark.sparkContext.addJobTag(tag)
            make_active(spark)
        _TAGGED.last = tagged


_TAGGED = threading.local()


def _py4j_connection(spark: Any) -> Any:
    """The py4j connection this thread's calls go through (pinned threads), else None."""
    client = getattr(getattr(spark.sparkContext, "_gateway", None), "_gateway_client", None)
    get = getattr(client, "get_thread_connection", None)
    return get() if get is not None else None


def make_active(spark: Any) -> None:
    """This session as the thread's active one in the driver, which Spark and Iceberg read
    where no statement names a session (a parser's checks, a catalog's lookups)."""
    _session_class(spark).setActiveSession(spark._jsparkSession)


def scala_items(seq: Any) -> list[Any]:
    """A Scala sequence's items, through py4j."""
    return [seq.apply(i) for i in range(seq.size())]


def java_class(gateway: Any, name: str) -> Any:
    """The Java class `name` (its full name, a nested one's with `$`) for py4j calls, made on this
    side (`gateway`: a py4j gateway or its `jvm`). `jvm.a.b.C` asks the JVM about `a`, then
    `a.b`, then `a.b.C`: a round trip each, and each miss a class-loader search through every
    jar on the driver's classpath."""
    from py4j.java_gateway import JavaClass

    return JavaClass(name, gateway._gateway_client)


T = TypeVar("T")


class PerContext(Generic[T]):
    """One value per SparkContext (a Connect client's session stands for its context), built
    once under a lock: a restarted session has a new context, and so gets a new value."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: tuple[Any, T] | None = None

    def get(self, context: Any, build: Callable[[], T]) -> T:
        found = self._held
        if found is not None and found[0] is context:
            return found[1]
        with self._lock:
            if self._held is None or self._held[0] is not context:
                self._held = (context, build())
            return self._held[1]

    def forget(self) -> None:
        self._held = None


def java_strings(gateway: Any, values: Sequence[str | None]) -> Any:
    """A Java String[] of `values`, for a py4j call that takes one."""
    array = gateway.new_array(java_class(gateway, "java.lang.String"), len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def compile_java(jvm: Any, source: str, class_name: str) -> Any:
    """An instance (no-argument constructor) of `class_name` from `source`, compiled in the
    driver with Janino (Spark's own compiler: the runtime has no javac). Its loader's parent is
    the thread's context loader, which sees spark.jars (Iceberg's runtime); py4j's does not."""
    compiler = java_class(jvm, "org.codehaus.janino.SimpleCompiler")()
    thread = java_class(jvm, "java.lang.Thread").currentThread()
    compiler.setParentClassLoader(thread.getContextClassLoader())
    compiler.cook(source)
    return compiler.getClassLoader().loadClass(class_name).newInstance()


def sql(spark: Any, statement: str, args: dict[str, str] | None = None) -> Any:
    """`spark.sql(statement, args=args)` (`args`: named text parameters). In process, straight to
    the JVM's `sql(text)` or `sql(text, args)`, which makes the parameters' literals there:
    PySpark's own asks py4j for `PythonUtils` (a search through every jar for each package it
    imported before the one that has it) and builds an arguments array first, two round trips
    a statement, and wraps each parameter with `lit`, whose first call in a process imports
    pandas, numpy and pyarrow (0.25 s, under the import lock dbt's other threads wait on)."""
    session = None if is_connect(spark) else getattr(spark, "_jsparkSession", None)
    if session is None:  # a Connect client's session (or one standing in for a session)
        return spark.sql(statement, args=args) if args else spark.sql(statement)
    from pyspark.sql import DataFrame

    return DataFrame(session.sql(statement, args) if args else session.sql(statement), spark)


# Set while a caller runs a statement whose rows it reads straight after (dbt's `execute` with
# `fetch`, the adapter's metadata reads): the cursor may then fetch them as it runs it.
_ROWS_READ_AT_ONCE = contextvars.ContextVar("lakehouse_rows_read_at_once", default=False)


@contextlib.contextmanager
def rows_read_at_once(reading: bool = True) -> Iterator[None]:
    """Within it, the statements run on this thread have their rows read straight after."""
    token = _ROWS_READ_AT_ONCE.set(reading)
    try:
        yield
    finally:
        _ROWS_READ_AT_ONCE.reset(token)


def rows_read_now() -> bool:
    return _ROWS_READ_AT_ONCE.get()


def fetched(spark: Any, statement: str) -> tuple[list[Any], Any]:
    """A statement's rows (PySpark `Row`s) and schema, for a caller that reads them at once.

    Under Spark Connect on PySpark 4, one round trip: the statement goes as the plan to run.
    `spark.sql` first sends it as a command the server analyses (and a query's text comes back
    to be analysed again when its rows are fetched), `collect` then asks the server for a
    setting (`binaryAsBytes`) and `schema` is one more request: four round trips and three
    analyses for a data test's count (bench/connect_decision_cost.py). A command (SHOW,
    EXPLAIN) in a plan runs once too, as the server analyses it. Binary values come as bytes,
    PySpark's default. Elsewhere, and on PySpark 3.5, whose client has no such path: `sql`
    then `collect`."""
    one_trip = _one_trip(spark)
    if one_trip is None:
        frame = sql(spark, statement)
        return frame.collect(), frame.schema
    return _run_plan(one_trip, spark, statement)


def rows(spark: Any, statement: str) -> list[tuple[Any, ...]]:
    """A statement's rows as tuples (`fetched`, without asking for the schema where it costs a
    call of its own)."""
    one_trip = _one_trip(spark)
    if one_trip is None:
        found = sql(spark, statement).collect()
    else:
        found = _run_plan(one_trip, spark, statement)[0]
    return [tuple(row) for row in found]


def query_frame(spark: Any, query: str) -> Any:
    """A DataFrame of `query` (a SELECT). Under Spark Connect on PySpark 4 it is made without a
    round trip: the query goes as the plan of what is next asked of the frame (its schema, its
    plan's text), one request and one analysis, where `spark.sql` first sends it as a command
    the server analyses. Elsewhere `sql`."""
    one_trip = _one_trip(spark)
    if one_trip is None:
        return sql(spark, query)
    data_frame, plan = one_trip[0], one_trip[1]
    return data_frame(plan(query), spark)


def explain_extended(spark: Any, query: str) -> str:
    """The text `EXPLAIN EXTENDED query` returns. Under Spark Connect asked as an analysis of the
    query's plan (`AnalyzePlan`), which the server plans once: the EXPLAIN statement, sent as a
    plan to run, costs it about 1.45x the CPU (bench/connect_decision_cost.py)."""
    if is_connect(spark):
        explain = getattr(query_frame(spark, query), "_explain_string", None)
        if explain is not None:
            return str(explain(extended=True))
    return str(rows(spark, "explain extended " + query)[0][0])


def _run_plan(
    one_trip: tuple[Any, Any, Any, Any], spark: Any, statement: str
) -> tuple[list[Any], Any]:
    """The statement sent as the plan to run (`fetched`): its rows and schema."""
    data_frame, plan, conversion, from_arrow_schema = one_trip
    table, schema = data_frame(plan(statement), spark)._to_table()
    schema = schema or from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
    return conversion.convert(table, schema, binary_as_bytes=True), schema


def _one_trip(spark: Any) -> tuple[Any, Any, Any, Any] | None:
    """PySpark 4's Connect classes `fetched` runs a plan with, or None (in process, PySpark 3.5,
    a client whose internals moved: the plain path)."""
    if not is_connect(spark):
        return None
    try:
        from pyspark.sql.connect.dataframe import DataFrame
        from pyspark.sql.connect.plan import SQL
        from pyspark.sql.conversion import ArrowTableToRowsConversion
        from pyspark.sql.pandas.types import from_arrow_schema
    except ImportError:
        return None
    if not hasattr(DataFrame, "_to_table"):
        return None
    return DataFrame, SQL, ArrowTableToRowsConversion, from_arrow_schema


def _session_class(spark: Any) -> Any:
    """The JVM's SparkSession class, looked up once per session: py4j resolves `jvm.SparkSession`
    by trying each package PySpark imported until one has it, a class-loader search through every
    jar for each miss, and this runs before each statement."""
    found = getattr(spark, "_lakehouse_session_class", None)
    if found is None:
        found = spark._jvm.SparkSession
        spark._lakehouse_session_class = found
    return found


def cancel(spark: Any, group: str) -> None:
    """Stop the running jobs of the connection `group` names."""
    if is_connect(spark):
        spark.interruptTag(group)
    else:
        spark.sparkContext.cancelJobGroup(group)


def stop_session(spark: Any) -> None:
    """Stop this process's session. A Connect session is released with one attempt: at exit its
    server may already be gone, and pyspark 4's client would retry the release for ~10 minutes
    (its default policy) before the process could end."""
    if is_connect(spark) and hasattr(spark.client, "set_retry_policies"):
        spark.client.set_retry_policies([])
    spark.stop()


def compute_once(spark: Any, view_name: str, at_most_partitions: int | None = None) -> Any:
    """Point a temporary view at rows computed once, so every later statement reads those rows
    instead of running its query again. Returns the frame the rows are computed from: its
    planning tracker has the optimization and planning the checkpoint did.

    In process: a local checkpoint, which also cuts the lineage. It is lazy: the first statement
    that reads the view (a merge's key check) computes and keeps the rows in its own job, rather
    than a job of its own computing them and that statement reading them back (bench/RESULTS.md:
    merge steps). Spark Connect 4 checkpoints too. Spark Connect 3.5 has no checkpoint: the rows
    are persisted on the server and the view re-registered over the persisted plan, computed
    eagerly by a count. (On Connect 4.1 that persisted plan cannot be planned: a view made from a
    plan keeps its Iceberg tables as `TableReference`s, which a later merge fails on.)

    `at_most_partitions`: the rows kept in no more partitions than that (merged without a
    shuffle), so a reader does not run a task per partition of a plan that unions many scans.
    """
    import pyspark

    rows = spark.table(view_name)
    kept = rows if at_most_partitions is None else rows.coalesce(at_most_partitions)
    if is_connect(spark) and pyspark.__version__.startswith("3."):
        computed = kept.persist()
        computed.count()
    else:
        computed = kept.localCheckpoint(eager=False)
    computed.createOrReplaceTempView(view_name)
    return rows


def empty_like(spark: Any, frame: Any) -> Any:
    """A relation of no rows with `frame`'s columns (their comments too), made by the JVM: a
    frame of a Python list would start a Python worker when read."""
    if is_connect(spark):
        return spark.createDataFrame([], frame.schema)
    from pyspark.sql import DataFrame

    rows = spark.sparkContext._gateway.jvm.java.util.ArrayList()
    return DataFrame(spark._jsparkSession.createDataFrame(rows, frame._jdf.schema()), spark)


def dataframe_types() -> tuple[type, ...]:
    """The DataFrame classes a session may hand out (Connect's is not a subclass)."""
    from pyspark.sql import DataFrame

    try:
        from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    except ImportError:  # the Connect client's dependencies are not installed
        return (DataFrame,)
    return (DataFrame, ConnectDataFrame)


def master_of(spark: Any) -> str:
    """Where the session's Spark runs: its master URL, or `sc://` for a Connect client."""
    if is_connect(spark):
        return CONNECT_SCHEME
    return str(spark.sparkContext.master or "")
