"""The Java classes serve compiles in the engine's JVM (with Janino, Spark's own compiler: the
runtime install has a JRE, no javac), as source: the served sessions' builder and HiveServer2's
starter, and the class loader both run under.

Why a class loader of our own: when a Thrift client's session ends, Hive closes every
closeable class loader from that session's (Spark sets it to the session's jar loader) up to
the system loader. Under the sessions dbt commands use, that path runs through the driver's
own jar loader (the profile's Iceberg and JDBC jars): it was closed, and no class of those
jars not yet loaded could be loaded again, by any session of the engine (a later MERGE failed
with NoClassDefFoundError). The served sessions get a shared state of their own, made under
`Jars`, a loader that finds classes through the driver's jar loader without being its child
and is not closeable, so Hive's walk meets nothing it can close but its own loaders.
"""

from __future__ import annotations

SERVED = """
public class ServeNAME {
    /** A new session on `context` with its own shared state, made under a Jars loader; its
     * new sessions (every client's) copy `options`. */
    public org.apache.spark.sql.classic.SparkSession build(
            org.apache.spark.SparkContext context, java.util.Map options, ClassLoader jars) {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(new JarsNAME(ClassLoader.getSystemClassLoader(), jars));
        try {
            org.apache.spark.sql.classic.SparkSession.Builder builder =
                org.apache.spark.sql.classic.SparkSession.builder().sparkContext(context)
                    .withExtensions(new ExtendNAME(jars));
            java.util.Iterator entries = options.entrySet().iterator();
            while (entries.hasNext()) {
                java.util.Map.Entry entry = (java.util.Map.Entry) entries.next();
                builder = builder.config((String) entry.getKey(), (String) entry.getValue());
            }
            org.apache.spark.sql.classic.SparkSession session = builder.create();
            session.sharedState();  // made now, under this thread's loader
            return session;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** HiveServer2 on `context`; its threads inherit this thread's loader. */
    public Object startThrift(org.apache.spark.sql.SQLContext context, ClassLoader jars) {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(new JarsNAME(ClassLoader.getSystemClassLoader(), jars));
        try {
            return org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
                context);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }
}

/** Every session of the served lineage, as Spark builds its state (its parser is built then,
 * on the thread that will first use it), sets that thread's context loader to a Jars loader:
 * HiveServer2 opens a client's session on a thread whose loader is Hive's session loader,
 * which sees no jar of the profile, and runs the client's `USE <database>` there (JDBC always
 * sends one), which loads the catalog's class through the context loader. */
class ExtendNAME extends scala.runtime.AbstractFunction1 {
    private final ClassLoader jars;

    ExtendNAME(ClassLoader jars) {
        this.jars = jars;
    }

    public Object apply(Object extensions) {
        ((org.apache.spark.sql.SparkSessionExtensions) extensions).injectParser(
            new ParserNAME(jars));
        return scala.runtime.BoxedUnit.UNIT;
    }
}

class ParserNAME extends scala.runtime.AbstractFunction2 {
    private final ClassLoader jars;

    ParserNAME(ClassLoader jars) {
        this.jars = jars;
    }

    public Object apply(Object session, Object parser) {
        Thread.currentThread().setContextClassLoader(
            new JarsNAME(ClassLoader.getSystemClassLoader(), jars));
        return parser;
    }
}

class JarsNAME extends ClassLoader {
    private final ClassLoader jars;

    JarsNAME(ClassLoader parent, ClassLoader jars) {
        super(parent);
        this.jars = jars;
    }

    protected Class findClass(String name) throws ClassNotFoundException {
        return jars.loadClass(name);
    }

    protected java.net.URL findResource(String name) {
        return jars.getResource(name);
    }

    protected java.util.Enumeration findResources(String name) throws java.io.IOException {
        return jars.getResources(name);
    }
}
"""


def served_source(suffix: str) -> str:
    return SERVED.replace("NAME", suffix)
