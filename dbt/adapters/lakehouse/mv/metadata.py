"""A table's metadata as a materialized view's refresh reads it: the snapshot `main` points at,
the snapshots (parent, operation, commit time, `lakehouse.mv.*` summary entries) and the
`lakehouse.mv.*` table properties.

With the driver's JVM in this process, from the table's current metadata in one py4j call
(Iceberg's TableMetadataParser JSON, the file the catalog points at): no Spark job, a few
milliseconds. Each metadata table read as SQL is a Spark job (tens to hundreds of ms on a warm
engine), and a refresh reads several: they were most of a refresh's fixed cost
(bench/RESULTS.md). Under Spark Connect (no JVM here), or for a table the JVM cannot load as
an Iceberg table, from the metadata tables, each read when first needed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.lineage import NODE_KEY as WRITER
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.state import RECORD_PREFIXES
from dbt.adapters.lakehouse.time_travel.history import int_or_none

Query = Callable[[str], Any]
_ANY_PREFIX = " or ".join(f"startswith(k, '{p}')" for p in RECORD_PREFIXES)
TOTAL_BYTES = "total-files-size"


@dataclass(frozen=True)
class Snapshot:
    parent: int | None
    operation: str
    committed_ms: int
    entries: Mapping[str, str]  # the summary's record entries (lakehouse.mv.*, lakehouse.build.*)
    # The table's data and delete files at this snapshot, in bytes (the summary's
    # total-files-size; None when a writer left it out).
    total_bytes: int | None = None
    # The dbt node whose run committed it (the summary's dbt.node, iceberg/lineage.py; None:
    # a writer that records no lineage).
    writer: str | None = None
    # The id of the table schema current when it was committed (None: not read on this path).
    schema_id: int | None = None


class TableMetadata(Protocol):
    @property
    def main(self) -> int | None: ...

    @property
    def snapshots(self) -> Mapping[int, Snapshot]: ...

    @property
    def properties(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class ParsedMetadata:
    main: int | None
    snapshots: Mapping[int, Snapshot]
    properties: Mapping[str, str]
    # The table's current schema id, and each schema's columns (names, types, required: not
    # their docs) as a digest: an ALTER that commits no snapshot still changes these.
    current_schema_id: int | None = None
    schema_columns: Mapping[int, str] = field(default_factory=dict)


def parse_metadata_json(text: str) -> ParsedMetadata:
    """The parts of an Iceberg table metadata file (the JSON TableMetadataParser writes) a view's
    refresh reads."""
    found = json.loads(text)
    refs = found.get("refs") or {}
    main: int | None
    if "main" in refs:
        main = int(refs["main"]["snapshot-id"])
    else:  # written before refs existed: the current snapshot is main's (-1: none)
        current = found.get("current-snapshot-id")
        main = None if current is None or int(current) < 0 else int(current)
    snapshots = {}
    for snapshot in found.get("snapshots") or []:
        summary = snapshot.get("summary") or {}
        parent = snapshot.get("parent-snapshot-id")
        snapshots[int(snapshot["snapshot-id"])] = Snapshot(
            None if parent is None else int(parent),
            str(summary.get("operation", "")),
            int(snapshot["timestamp-ms"]),
            {k: str(v) for k, v in summary.items() if k.startswith(RECORD_PREFIXES)},
            int_or_none(summary.get(TOTAL_BYTES)),
            _text_or_none(summary.get(WRITER)),
            int_or_none(snapshot.get("schema-id")),
        )
    properties = {
        k: str(v)
        for k, v in (found.get("properties") or {}).items()
        if k.startswith(RECORD_PREFIXES)
    }
    schemas = {
        int(schema["schema-id"]): _columns_digest(schema.get("fields") or [])
        for schema in found.get("schemas") or []
        if "schema-id" in schema
    }
    return ParsedMetadata(
        main, snapshots, properties, int_or_none(found.get("current-schema-id")), schemas
    )


def _columns_digest(fields: Any) -> str:
    """A schema's columns without their docs (a column comment changes the schema id, not the
    rows)."""

    def undocumented(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: undocumented(v) for k, v in node.items() if k != "doc"}
        if isinstance(node, list):
            return [undocumented(v) for v in node]
        return node

    text = json.dumps(undocumented(fields), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SqlMetadata:
    """From the metadata tables and SHOW TBLPROPERTIES, each read when first needed (or for
    several tables in one statement: `SqlReader.prefetch`)."""

    def __init__(self, query: Query, table: TableName) -> None:
        self.query, self.table = query, table

    # Each read as (its columns, its FROM), which the batched read takes too (as strings there).
    def main_read(self) -> tuple[tuple[str, ...], str]:
        return ("snapshot_id",), f"{self.table.sql_name}.refs where name = 'main'"

    def snapshots_read(self) -> tuple[tuple[str, ...], str]:
        # The entries as JSON: a map column's form differs between query paths (dbt's agate,
        # Spark's rows).
        columns = (
            "snapshot_id", "parent_id", "operation", "unix_millis(committed_at)",
            f"to_json(map_filter(summary, (k, v) -> {_ANY_PREFIX}))",
            f"summary['{TOTAL_BYTES}']", f"summary['{WRITER}']",
        )  # fmt: skip
        return columns, f"{self.table.sql_name}.snapshots"

    def schema_log_read(self) -> tuple[tuple[str, ...], str]:
        columns = ("latest_snapshot_id", "latest_schema_id", "unix_millis(timestamp)")
        return columns, f"{self.table.sql_name}.metadata_log_entries"

    def _select(self, read: tuple[tuple[str, ...], str]) -> Any:
        columns, source = read
        return self.query(f"select {', '.join(columns)} from {source}")

    @cached_property
    def main(self) -> int | None:
        return self.main_of(self._select(self.main_read()))

    @staticmethod
    def main_of(rows: Sequence[Sequence[Any]]) -> int | None:
        return int(rows[0][0]) if rows else None

    @cached_property
    def snapshots(self) -> Mapping[int, Snapshot]:
        return self.snapshots_of(self._select(self.snapshots_read()))

    def snapshots_of(self, rows: Sequence[Sequence[Any]]) -> Mapping[int, Snapshot]:
        schemas = self._schema_at
        return {
            int(r[0]): Snapshot(
                int_or_none(r[1]),
                str(r[2]),
                int(r[3]),
                json.loads(r[4] or "{}"),
                int_or_none(r[5]),
                _text_or_none(r[6]),
                schemas.get(int(r[0])),
            )
            for r in rows
        }

    @cached_property
    def _schema_log(self) -> list[tuple[int | None, int | None]]:
        """(snapshot, schema) current in each metadata file the table keeps a log of, oldest
        first (Iceberg keeps `write.metadata.previous-versions-max` of them, 100 by default)."""
        return self.schema_log_of(self._select(self.schema_log_read()))

    @staticmethod
    def schema_log_of(rows: Sequence[Sequence[Any]]) -> list[tuple[int | None, int | None]]:
        ordered = sorted(rows, key=lambda r: int(r[2]))
        return [(int_or_none(r[0]), int_or_none(r[1])) for r in ordered]

    @cached_property
    def _schema_at(self) -> Mapping[int, int]:
        """Each snapshot's schema: the one current in the first metadata file it was current
        in (the snapshots table has no schema id)."""
        found: dict[int, int] = {}
        for snapshot, schema in self._schema_log:
            if snapshot is not None and schema is not None:
                found.setdefault(snapshot, schema)
        return found

    @property
    def current_schema_id(self) -> int | None:
        return self._schema_log[-1][1] if self._schema_log else None

    @property
    def schema_columns(self) -> Mapping[int, str]:
        """Each schema by its id alone (its columns are not read here): a schema changed since
        a build counts as its columns altered, a column comment too."""
        return {schema: str(schema) for _, schema in self._schema_log if schema is not None}

    @cached_property
    def properties(self) -> Mapping[str, str]:
        rows = self.query(f"show tblproperties {self.table.sql_name}")
        return {str(r[0]): str(r[1]) for r in rows if str(r[0]).startswith(RECORD_PREFIXES)}


Reader = Callable[[TableName], TableMetadata]
# The widest of the reads a batch unions (the snapshots'), each padded to it.
_BATCH_WIDTH = 7


class SqlReader:
    """`table -> its metadata`, each table read once per reader (one refresh plan, one status):
    from the JVM when this process has the driver's, else (or when the JVM cannot load the
    table as Iceberg's: the metadata tables then fail as they always did) as SQL."""

    def __init__(self, spark: Any, query: Query) -> None:
        self.query = query
        self._spark = spark
        self._jvm_here = spark is not None and not runtime.is_connect(spark)
        self._read: dict[str, TableMetadata] = {}

    def __call__(self, table: TableName) -> TableMetadata:
        key = str(table)
        if key not in self._read:
            found = _from_jvm(self._spark, table) if self._jvm_here else None
            self._read[key] = found if found is not None else SqlMetadata(self.query, table)
        return self._read[key]

    def prefetch(
        self,
        tables: Sequence[TableName],
        snapshots_too: Sequence[TableName],
        query: Query | None = None,
    ) -> None:
        """The `main` head and schema log of each of `tables`, and the snapshots of each of
        `snapshots_too`, read as SQL in one statement: each metadata table read is a statement
        and a Spark job (about 0.1 s under Spark Connect), and a decision reads several. Where
        that statement fails (a table not there), each is read on its own, with its error.
        `query`: how that statement runs, when not this reader's way (another thread's)."""
        wanted = [(t, self(t)) for t in dict.fromkeys([*tables, *snapshots_too])]
        found = [(t, m) for t, m in wanted if isinstance(m, SqlMetadata) and "main" not in vars(m)]
        parts = []
        for i, (table, read) in enumerate(found):
            parts.append(_padded(i, "main", read.main_read()))
            parts.append(_padded(i, "log", read.schema_log_read()))
            if table in snapshots_too:
                parts.append(_padded(i, "snapshots", read.snapshots_read()))
        if not parts:
            return
        try:
            rows = (query or self.query)(" union all ".join(parts))
        except Exception:  # noqa: BLE001 - each read again on its own says what failed
            return
        by_read: dict[tuple[int, str], list[Sequence[Any]]] = {}
        for row in rows:
            by_read.setdefault((int(row[0]), str(row[1])), []).append(row[2:])
        for i, (table, read) in enumerate(found):
            known = vars(read)
            known["_schema_log"] = read.schema_log_of(by_read.get((i, "log"), []))
            known["main"] = read.main_of(by_read.get((i, "main"), []))
            if table in snapshots_too:
                known["snapshots"] = read.snapshots_of(by_read.get((i, "snapshots"), []))


def _padded(index: int, kind: str, read: tuple[tuple[str, ...], str]) -> str:
    """One read of a batch: its columns as strings after (index, kind), padded with nulls."""
    columns, source = read
    cells = [f"cast({c} as string)" for c in columns]
    cells += ["cast(null as string)"] * (_BATCH_WIDTH - len(cells))
    return f"select {index}, '{kind}', {', '.join(cells)} from {source}"


def reader(spark: Any, query: Query) -> SqlReader:
    """A reader of tables' metadata for one decision (`SqlReader`)."""
    return SqlReader(spark, query)


def _from_jvm(spark: Any, table: TableName) -> ParsedMetadata | None:
    from dbt.adapters.lakehouse.iceberg import java

    try:
        iceberg = java.bridge(spark, "materialized views", "")
        loaded = iceberg.load(spark, table.sql_name)
        current = loaded.operations().current()
        return parse_metadata_json(iceberg.metadata_json(current))
    except Exception:
        # Missing, a view, not Iceberg: the SQL reads fail with the catalog's own error, which
        # the callers already map (RelationMissingError: an untracked upstream).
        return None


def _text_or_none(value: Any) -> str | None:
    return None if value is None or str(value) == "" else str(value)
