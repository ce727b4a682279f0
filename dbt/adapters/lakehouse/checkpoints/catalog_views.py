"""A view whose query reads this run's stand-ins, created through its Iceberg catalog.

`CREATE VIEW` makes Spark analyse the view's query down to its tables: every view below it is
loaded, parsed and inlined again, which on a stack of views that each read the level below twice
is 2^depth copies (bench/RESULTS.md: stacked views, a ninth level's statement planned for 6 s
with nothing to run). The stored view needs only its text, the catalog and namespace it
resolves in, its schema and its columns' names and comments. The schema is the query's, which
the run's stand-ins (checkpoints, and views over them) give after an analysis as small as the
query itself: each stand-in carries the columns its view stored (`as_stored`).

So the statement is parsed by Spark's own parser (the view's text exactly as `CREATE VIEW`
stores it, its column list, comment and properties), its query analysed over the stand-ins, and
the view written with the catalog's `replaceView`, with what Iceberg's `CREATE VIEW` adds: the
comment and the engine versions as properties, the column comments as the schema's. Anything
this does not cover runs as the statement itself: another catalog, `CREATE VIEW` without
`OR REPLACE`, a name that is not catalog.namespace.view, a query that names the view itself or
reads no stand-in, duplicate or miscounted columns, a query naming a temporary view or function
(Iceberg's parser refuses it; the statement says so).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.checkpoints.plan import RELATION_NAME, normalized
from dbt.adapters.lakehouse.checkpoints.registry import (
    compute_read,
    names_stand_ins,
    with_checkpoints,
)
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.runtime import make_active, scala_items
from dbt.adapters.lakehouse.engine.statement_conf import statement_confs
from dbt.adapters.lakehouse.iceberg.table_name import TableName

logger = AdapterLogger("Lakehouse")

ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
# Iceberg's CREATE VIEW records the engine that wrote it (ViewCatalog.PROP_*).
_ENGINE_VERSION_KEYS = ("create_engine_version", "engine_version")


def create_over_stand_ins(spark: Any, statement: str) -> tuple[Any, Any] | None:
    """Run `statement` when it creates a view whose query reads this run's stand-ins: (that
    query's frame, analysed over them, whose planning tracker is the statement's; the
    statement's result, no rows); None: not such a statement, or the catalog refused, so run it
    as it is (and let Spark say why). Any other statement costs a pattern match: nothing is
    asked of Spark before the statement names a view that has a stand-in."""
    if not CREATE_VIEW.match(statement) or not names_stand_ins(statement):
        return None
    if runtime.is_connect(spark) or any(statement_confs(statement)):
        return None
    try:
        return _create(spark, statement)
    except Exception as exc:  # the statement itself runs, and fails with Spark's own words
        logger.debug(f"view not created through its catalog, the statement runs: {exc}")
        return None


def _create(spark: Any, statement: str) -> tuple[Any, Any] | None:
    parsed = _parsed_view(spark, statement)
    if parsed is None:
        return None
    target = TableName(*parsed.parts)
    text = parsed.text
    query = with_checkpoints(text, shapes=True)  # analysed, never run
    if query is text or names_itself(text, target):
        return None
    compute_read(query, spark)  # the shapes it reads, made where not yet
    catalog = _iceberg_catalog(spark, target.catalog)
    if catalog is None:
        return None
    frame = spark.sql(query)
    names = list(frame.columns)
    aliases = parsed.aliases
    if duplicated_columns(spark, names) or (aliases and len(aliases) != len(names)):
        return None
    viewed = frame
    if aliases:  # Iceberg's CREATE VIEW aliases each column, a comment as its metadata
        viewed = frame.select(
            *[
                _aliased(frame[name], alias, note)
                for name, alias, note in zip(names, aliases, parsed.comments, strict=True)
            ]
        )
    stored = dict(parsed.properties)
    if parsed.comment is not None:
        stored["comment"] = parsed.comment
    version = f"Spark {spark.version}"
    stored.update({key: version for key in _ENGINE_VERSION_KEYS})
    manager = spark._jsparkSession.sessionState().catalogManager()
    current = str(manager.currentCatalog().name())
    gateway = spark.sparkContext._gateway
    catalog.replaceView(
        _identifier(gateway, target),
        text,
        None if current == target.catalog else current,
        runtime.java_strings(gateway, [str(p) for p in manager.currentNamespace()]),
        viewed._jdf.schema(),
        runtime.java_strings(gateway, names),
        runtime.java_strings(gateway, aliases),
        runtime.java_strings(gateway, parsed.comments),
        _java_map(gateway.jvm, stored),
    )
    logger.debug(f"view {target}: created through its catalog, over this run's stand-ins")
    from pyspark.sql import DataFrame

    # No rows, as the statement's: the JVM's own empty frame (a local list of Python's would need
    # a Python worker to be read back, a process started for nothing).
    return frame, DataFrame(spark._jsparkSession.emptyDataFrame(), spark)


def as_stored(spark: Any, frame: Any, view: TableName) -> Any:
    """`frame` (a view's query) with the columns the view stored: their names, comments and
    types as a reader of the view sees them (Iceberg inlines a view as its query under these
    columns), so a stand-in and the view read alike, down to a column's comment."""
    try:
        return _as_stored(spark, frame, view)
    except Exception as exc:  # the view's query as it is: what differs is at most a comment
        logger.debug(f"stand-in for {view} keeps its query's columns: {exc}")
        return frame


def _as_stored(spark: Any, frame: Any, view: TableName) -> Any:
    catalog = _iceberg_catalog(spark, view.catalog)
    if catalog is None:
        return frame
    schema = catalog.loadView(_identifier(spark.sparkContext._gateway, view)).schema()
    from pyspark.sql.types import StructType

    fields = StructType.fromJson(json.loads(schema.json())).fields
    query_fields = frame.schema.fields
    if len(fields) != len(query_fields):
        return frame
    columns = []
    for query_field, field in zip(query_fields, fields, strict=True):
        column = frame[query_field.name]
        if query_field.dataType != field.dataType:
            column = column.cast(field.dataType)
        columns.append(column.alias(field.name, metadata=field.metadata))
    return frame.select(*columns)


@dataclass(frozen=True)
class _ViewStatement:
    """What a `CREATE OR REPLACE VIEW` statement says, as Spark's parser read it."""

    parts: list[str]
    text: str  # the query's text, as the view stores it
    aliases: list[str]
    comments: list[str | None]
    comment: str | None
    properties: dict[str, str]


def _parsed_view(spark: Any, statement: str) -> _ViewStatement | None:
    """A `CREATE OR REPLACE VIEW catalog.namespace.view` statement as Spark's parser reads it
    with Iceberg's extensions: `CreateIcebergView` when the view's catalog is an Iceberg view
    catalog, which Iceberg's parser resolves and checks (a temporary view or function named in
    the query is refused there, as for the statement); None: another statement."""
    jspark = spark._jsparkSession
    # The parser checks temporary objects against the thread's active session: this one, as
    # when the statement runs.
    make_active(spark)
    plan = jspark.sessionState().sqlParser().parsePlan(statement)
    if plan.getClass().getSimpleName() != "CreateIcebergView" or not plan.replace():
        return None
    if plan.allowExisting():
        return None
    resolved = plan.child()
    ident = resolved.identifier()
    parts = [str(resolved.catalog().name()), *[str(n) for n in ident.namespace()]]
    if len(parts) != 2:
        return None
    return _ViewStatement(
        [*parts, str(ident.name())],
        str(plan.queryText()),
        [str(a) for a in scala_items(plan.columnAliases())],
        [_option(c) for c in scala_items(plan.columnComments())],
        _option(plan.comment()),
        {str(p._1()): str(p._2()) for p in scala_items(plan.properties().toList())},
    )


# What may be such a statement, before Spark's parser says (leading comments allowed).
CREATE_VIEW = re.compile(
    r"^(?:\s*/\*.*?\*/|\s*--[^\n]*(?:\n|$))*\s*create\s+or\s+replace\s+view\b", re.I | re.S
)


def names_itself(text: str, target: TableName) -> bool:
    own = normalized(target.sql_name)
    return any(normalized(m.group(0)) == own for m in RELATION_NAME.finditer(text))


def duplicated_columns(spark: Any, names: Sequence[str]) -> bool:
    sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    keys = [n if sensitive else n.lower() for n in names]
    return len(set(keys)) != len(keys)


def _aliased(column: Any, alias: str, comment: str | None) -> Any:
    # Iceberg's CREATE VIEW: a commented column's metadata is its comment alone; another
    # keeps its query column's.
    if comment is None:
        return column.alias(alias)
    return column.alias(alias, metadata={"comment": comment})


def stored_property(spark: Any, view: TableName, key: str) -> tuple[bool, str | None]:
    """(True, the property `key` a view stores, or None) read from its Iceberg catalog in a few
    driver calls, where SHOW TBLPROPERTIES is a statement of its own (parsed, analysed, its rows
    collected: four to eight times as long); (False, None): not answered here (a Connect
    client, another catalog, a view gone): the caller asks with the statement."""
    if runtime.is_connect(spark):
        return False, None
    try:
        catalog = _iceberg_catalog(spark, view.catalog)
        if catalog is None:
            return False, None
        identifier = _identifier(spark.sparkContext._gateway, view)
        value = catalog.loadView(identifier).properties().get(key)
    except Exception as exc:  # no such view (any more), or a catalog that refuses: the statement
        logger.debug(f"view {view}'s properties are read with a statement: {exc}")
        return False, None
    return True, None if value is None else str(value)


def _iceberg_catalog(spark: Any, name: str) -> Any | None:
    """The session's catalog `name` when it is Iceberg's SparkCatalog (a view catalog)."""
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(name)
    return catalog if catalog.getClass().getName() == ICEBERG_CATALOG else None


def _option(value: Any) -> str | None:
    return None if value.isEmpty() else str(value.get())


def _identifier(gateway: Any, name: TableName) -> Any:
    identifier = runtime.java_class(gateway, "org.apache.spark.sql.connector.catalog.Identifier")
    return identifier.of(runtime.java_strings(gateway, [name.namespace]), name.name)


def _java_map(jvm: Any, values: dict[str, str]) -> Any:
    out = jvm.java.util.HashMap()
    for key, value in values.items():
        out.put(key, value)
    return out
