"""Statements a command starts and does not wait for: run by a thread of the driver's JVM, on a
clone of the command's session, so on a warm engine (engine/warm/) they finish after the
command has exited.

What it is for: writing down what only saves a later run time (reuse/test_store.py: the data
tests' results), whose commit is otherwise the last thing a build waits for (0.1-0.3 s on a
2-core machine, a tenth of the sample's build with a warm dbt). Nothing a run's result depends
on goes through here.

- The clone has the command's SQL settings and catalogs of its own: the command closing its
  catalogs as it leaves the engine does not close them under the statements, and the thread
  closes the clone's once done (the engine outlives it; JDBC pools, REST clients).
- The thread drops the job group and tags it inherits from the py4j thread that started it: a
  warm engine cancels a leaving command's tagged jobs.
- Every such thread has the same name (NAME), in whichever command's class it runs: `settle`
  waits for all of them, so the next command's read sees what the last one wrote. A JVM of
  this process waits for the threads this process started before it stops
  (engine/lifecycle.py).
- A failure is kept by the handle (the same process asks it: `Later.failure`) and printed to
  the JVM's standard error (a warm engine's `engine.log`).

Compiled once per SparkContext with Janino (Spark's own compiler; the runtime has no javac).
Under Spark Connect there is no JVM here: `run_later` says None and the caller runs the
statements itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from dbt.adapters.lakehouse.engine import runtime

NAME = "lakehouse-later-statements"
_CLASS = "lakehouse.engine.Later"
# Janino compiles Java 1.x-era source: no generics, no lambdas, no varargs calls. The session's
# class differs by Spark line (classic.SparkSession on 4.x): reached by reflection where so.
_SOURCE = r"""
package lakehouse.engine;

public class Later implements Runnable {
    private Object session;
    private String[] statements;
    private String table;
    private String[] catalogs;
    private Thread thread;
    private volatile String state = null;
    private volatile String failure = null;

    /** The instance py4j is given: it starts the others (`start`) and settles them. */
    public Later() {}

    /** `statements` started on a clone of `commandSession`; the handle returned. */
    public Later start(Object commandSession, String[] statements, String table,
            String[] catalogs) throws Exception {
        Later later = new Later();
        later.session = commandSession.getClass().getMethod("cloneSession", new Class[0])
            .invoke(commandSession, new Object[0]);
        later.statements = statements;
        later.table = table;
        later.catalogs = catalogs;
        later.thread = new Thread(later, "%(name)s");
        later.thread.setDaemon(true);
        later.thread.start();
        return later;
    }

    public void run() {
        org.apache.spark.sql.SparkSession spark = (org.apache.spark.sql.SparkSession) session;
        try {
            spark.sparkContext().clearJobGroup();
            spark.sparkContext().clearJobTags();
            activate(session);
            for (int i = 0; i < statements.length; i++) {
                spark.sql(statements[i]);
            }
            if (table != null) {
                org.apache.iceberg.Snapshot snapshot =
                    org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark, table)
                        .currentSnapshot();
                if (snapshot != null) {
                    Object files = snapshot.summary().get("total-data-files");
                    state = snapshot.snapshotId() + " " + (files == null ? "0" : files);
                }
            }
        } catch (Throwable error) {
            String text = String.valueOf(error.getMessage());
            int end = text.indexOf('\n');
            failure = error.getClass().getSimpleName() + ": "
                + (end < 0 ? text : text.substring(0, end));
            System.err.println("lakehouse: statements run after a command failed: " + failure);
        } finally {
            closeCatalogs();
        }
    }

    /** "snapshot-id data-files" of the table once the statements ran, else null. */
    public String state() { return state; }

    public String failure() { return failure; }

    public boolean waitFor(long millis) throws InterruptedException {
        if (millis > 0) {  // join(0) would wait for ever
            thread.join(millis);
        }
        return !thread.isAlive();
    }

    /** Waits (up to `millis` in all) for every thread of this kind in the JVM, whichever
     * command started it; returns how many were still running when asked. */
    public int settle(long millis) throws InterruptedException {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() * 2 + 16];
        int count = root.enumerate(threads, true);
        long deadline = System.currentTimeMillis() + millis;
        int running = 0;
        for (int i = 0; i < count; i++) {
            if ("%(name)s".equals(threads[i].getName()) && threads[i].isAlive()) {
                running++;
                long left = deadline - System.currentTimeMillis();
                if (left > 0) {
                    threads[i].join(left);
                }
            }
        }
        return running;
    }

    // Iceberg's catalogs read the thread's active session outside a statement.
    private static void activate(Object session) throws Exception {
        java.lang.reflect.Method[] methods = session.getClass().getMethods();
        for (int i = 0; i < methods.length; i++) {
            Class[] parameters = methods[i].getParameterTypes();
            if (methods[i].getName().equals("setActiveSession") && parameters.length == 1
                    && parameters[0].isInstance(session)) {
                methods[i].invoke(null, new Object[] {session});
                return;
            }
        }
    }

    private void closeCatalogs() {
        try {
            Object state = session.getClass().getMethod("sessionState", new Class[0])
                .invoke(session, new Object[0]);
            Object manager = state.getClass().getMethod("catalogManager", new Class[0])
                .invoke(state, new Object[0]);
            for (int i = 0; i < catalogs.length; i++) {
                Object catalog = manager.getClass().getMethod("catalog", new Class[] {String.class})
                    .invoke(manager, new Object[] {catalogs[i]});
                Object iceberg = catalog.getClass().getMethod("icebergCatalog", new Class[0])
                    .invoke(catalog, new Object[0]);
                if (iceberg.getClass().getName().endsWith("CachingCatalog")) {
                    java.lang.reflect.Field inner = iceberg.getClass().getDeclaredField("catalog");
                    inner.setAccessible(true);
                    iceberg = inner.get(iceberg);
                }
                if (iceberg instanceof java.io.Closeable) {
                    ((java.io.Closeable) iceberg).close();
                }
            }
        } catch (Throwable ignored) {
            // not an Iceberg catalog, or never loaded: nothing of ours to close
        }
    }
}
"""

# An instance of the class, compiled once per SparkContext.
_STARTERS: runtime.PerContext[Any] = runtime.PerContext()
# Whether this process started any: a JVM of its own waits for them before it stops.
_STARTED = threading.Event()


class Later:
    """The statements' handle (Java), asked by the process that started them."""

    def __init__(self, java: Any) -> None:
        self._java = java

    def wait(self, seconds: float) -> bool:
        """Whether they are done, waiting up to `seconds`."""
        return bool(self._java.waitFor(int(seconds * 1000)))

    def state(self) -> tuple[int, int] | None:
        """(snapshot id, data files) of the table named at the start, once they ran."""
        text = self._java.state()
        if not text:
            return None
        snapshot, files = str(text).split()
        return int(snapshot), int(files)

    def failure(self) -> str | None:
        text = self._java.failure()
        return str(text) if text else None


def _starter(spark: Any) -> Any:
    def compiled() -> Any:
        jvm = runtime.driver_jvm(spark, "statements after a command", "")
        return runtime.compile_java(jvm, _SOURCE % {"name": NAME}, _CLASS)

    return _STARTERS.get(spark.sparkContext, compiled)


def run_later(
    spark: Any, statements: Sequence[str], table: str | None, catalogs: Sequence[str]
) -> Later | None:
    """Start `statements` (in order, on a clone of `spark`) without waiting; `table`'s state is
    read once they ran; `catalogs`: those they use, closed after. None under Spark Connect."""
    if runtime.is_connect(spark):
        return None
    starter = _starter(spark)
    gateway = spark.sparkContext._gateway
    texts, names = (
        runtime.java_strings(gateway, statements),
        runtime.java_strings(gateway, catalogs),
    )
    _STARTED.set()
    return Later(starter.start(spark._jsparkSession, texts, table, names))


def settle(spark: Any, seconds: float, only_if_started_here: bool = False) -> int:
    """Wait up to `seconds` for every such thread of the JVM; how many were running. With
    `only_if_started_here`, nothing is asked unless this process started one."""
    if runtime.is_connect(spark) or (only_if_started_here and not _STARTED.is_set()):
        return 0
    return int(_starter(spark).settle(int(seconds * 1000)))
