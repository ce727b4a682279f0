"""Seeds reach Spark as one temporary view of text columns, never as row-by-row INSERTs.

dbt's own path reads the whole CSV into an agate table in Python, casting every value while it
infers the types: tens of seconds and gigabytes per million rows. Here the types come from
Arrow's kernels over the file (`seedtypes.column_shapes`, the same answer as agate's inference),
Python's csv module (the reader agate uses) confirms the rows, and Spark reads the file itself.
A file the three would not read alike (ragged rows, blank lines, malformed quoting, values only
agate can rewrite) goes through dbt's agate table, as before: same types, same values, slower.
Either way the seed macro casts each text column to its type in a single CREATE OR REPLACE
TABLE ... AS SELECT, so the load is one Iceberg commit.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import agate
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.clients.agate_helper import BOM

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.iceberg.table_name import quote
from dbt.adapters.lakehouse.models import seed_types as seedtypes
from dbt.adapters.lakehouse.models.seed_types import Shape

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, SparkSession

logger = AdapterLogger("Lakehouse")

# Below this size agate reads a file in well under a second, less than setting up Spark's read
# of it costs (measured with the sample project's seeds): small seeds take agate's path.
SPARK_READ_MIN_BYTES = 1 << 20
# dbt seed --show prints a random 10 of these.
SAMPLE_ROWS = 100
# Columns whose type depends on values outside every shape: agate checks at most this many
# distinct ones before the seed goes the agate way.
MAX_OTHER_VALUES = 1000
# The agate path's rows go to Spark as JSON text in pieces of about this many characters: one
# query parameter and one partition each, so a large file is neither one huge value nor one task.
ROWS_JSON_CHUNK_CHARS = 4 << 20

ConvertType = Callable[[agate.Table, int], str]


@dataclass
class SeedLoad:
    column_names: list[str]
    sql_types: list[str]
    row_count: int
    # The table `dbt seed --show` samples from: every row on the agate path, the first
    # SAMPLE_ROWS when Spark read the file.
    sample: agate.Table


def seed_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def load_agate_rows(
    spark: SparkSession, view_name: str, agate_table: agate.Table, convert_type: ConvertType
) -> SeedLoad:
    """The agate path: rows already typed in Python become the view's text columns.

    The rows reach the JVM as JSON text that Spark parses itself. `createDataFrame` on Python
    rows would start Python worker processes to read them back: about 1 s of a cold engine's
    first seed, for a file of a few rows.
    """
    names = list(agate_table.column_names)
    rows = [[seed_text(value) for value in row] for row in agate_table.rows]
    chunks = rows_as_json(rows)
    pieces = " union all ".join(
        f"select explode(from_json(:rows{index}, 'array<array<string>>')) as seed_row"
        for index in range(len(chunks))
    )
    columns = ", ".join(f"seed_row[{index}] as {quote(name)}" for index, name in enumerate(names))
    runtime.sql(
        spark,
        f"select {columns} from ({pieces})",
        {f"rows{index}": chunk for index, chunk in enumerate(chunks)},
    ).createOrReplaceTempView(view_name)
    return SeedLoad(
        column_names=names,
        sql_types=[convert_type(agate_table, index) for index in range(len(names))],
        row_count=len(rows),
        sample=agate_table,
    )


def rows_as_json(
    rows: list[list[str | None]], chunk_chars: int = ROWS_JSON_CHUNK_CHARS
) -> list[str]:
    """`rows` as JSON arrays of at most about `chunk_chars` characters each (always one, `[]`
    for no rows): each piece becomes one string parameter and one partition of the view."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for row in rows:
        text = json.dumps(row)
        if current and size + len(text) > chunk_chars:
            chunks.append("[" + ",".join(current) + "]")
            current, size = [], 0
        current.append(text)
        size += len(text) + 1
    chunks.append("[" + ",".join(current) + "]")
    return chunks


@dataclass
class ColumnFacts:
    type: agate.data_types.DataType
    has_fraction: bool  # a number with digits after the point: a double, not a bigint
    has_nulls: bool  # values agate reads as NULL ('', 'null', ...)


@dataclass
class SeedFile:
    """What the file holds, as dbt's agate path would read it."""

    header: list[str]
    columns: list[ColumnFacts]
    row_count: int
    fields_span_lines: bool
    sample: agate.Table


def load_seed_file(
    spark: Any, model: dict[str, Any], view_name: str, convert_type: Any
) -> SeedLoad | None:
    """A seed's rows as a temporary view straight from its CSV file (the node's `root_path` and
    `original_file_path`), or None when the file is not there to read."""
    path = Path(model["root_path"]) / model["original_file_path"]
    if not path.is_file():
        return None
    config = model.get("config", {})
    return load_with_spark(
        spark,
        view_name,
        path,
        delimiter=config.get("delimiter") or ",",
        text_columns=set(config.get("column_types") or {}),
        convert_type=convert_type,
    )


def load_with_spark(
    spark: SparkSession,
    view_name: str,
    path: Path,
    delimiter: str,
    text_columns: set[str],
    convert_type: ConvertType,
) -> SeedLoad | None:
    """Register the seed's view straight from the file, or None (with the reason logged at
    debug level) when only dbt's agate table reads it as dbt defines."""
    seed: SeedFile | str
    if path.stat().st_size < SPARK_READ_MIN_BYTES:
        seed = "it is small"
    elif not runtime.master_of(spark).startswith("local"):
        # Executors elsewhere cannot open a file on this machine; the rows travel from here.
        seed = "Spark runs elsewhere"
    else:
        seed = read_seed_file(path, delimiter, text_columns)
    if isinstance(seed, str):
        logger.debug(f"Seed {path}: read through agate, {seed}")
        return None
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    raw = spark.read.csv(
        path.resolve().as_uri(),  # a local file even where the default file system is S3
        schema=StructType([StructField(name, StringType(), True) for name in seed.header]),
        header=True,
        sep=delimiter,
        quote='"',
        escape='"',
        # One task reads a multi-line file; the others split across the cores.
        multiLine=seed.fields_span_lines,
        # Python's csv module passed the file as well-formed; should Spark still meet a quote
        # it reads differently, it fails the load instead of guessing.
        unescapedQuoteHandling="RAISE_ERROR",
        mode="FAILFAST",
        encoding="UTF-8",
    )
    raw.select(
        *[
            # Spark reads a missing value as NULL already; the rest only where agate saw some.
            F.when(_null_expr(_column(name)), None).otherwise(_column(name)).alias(name)
            if facts.has_nulls
            else _column(name)
            for name, facts in zip(seed.header, seed.columns, strict=True)
        ]
    ).createOrReplaceTempView(view_name)
    return SeedLoad(
        column_names=seed.header,
        sql_types=[_sql_type(c.type, c.has_fraction, convert_type) for c in seed.columns],
        row_count=seed.row_count,
        sample=seed.sample,
    )


def read_seed_file(path: Path, delimiter: str, text_columns: set[str]) -> SeedFile | str:
    """The seed's header, types and row count without Spark, or why only agate can tell."""
    import pyarrow as pa
    import pyarrow.csv as arrow_csv

    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"it cannot be read as UTF-8 here ({type(error).__name__})"
    if text.startswith(BOM):
        text, data = text[1:], data[len(BOM.encode("utf-8")) :]
    # Lone carriage returns end lines for Python but not for every other reader.
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return "it has bare carriage returns"
    if len(delimiter) != 1:
        return "its delimiter is not one character"
    header = next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    if not header or any(not name for name in header):
        return "its header has an empty name"
    if len({name.lower() for name in header}) != len(header):
        return "its header repeats a name"

    # Python's csv module (agate's reader) in strict mode rejects exactly the quoting other
    # readers read differently; it checks every row while Arrow parses.
    python_read: list[_PythonRead | str] = []
    checker = threading.Thread(
        target=lambda: python_read.append(_python_read(text, delimiter, len(header))),
        daemon=True,
    )
    checker.start()
    try:
        table = arrow_csv.read_csv(
            io.BytesIO(data),
            parse_options=arrow_csv.ParseOptions(
                delimiter=delimiter,
                quote_char='"',
                double_quote=True,
                escape_char=False,
                newlines_in_values=True,
            ),
            convert_options=arrow_csv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, ValueError) as error:
        checker.join()
        # Python's reason names the row in agate's terms; Arrow's is the fallback.
        if isinstance(python_read[0], str):
            return python_read[0]
        return f"Arrow cannot parse it ({str(error).splitlines()[0]})"
    checker.join()
    if table.column_names != header:
        return "Arrow reads another header"
    rows = python_read[0]
    if isinstance(rows, str):
        return rows
    if rows.count != table.num_rows:
        return "Arrow and Python count its rows apart"
    if rows.fields_span_lines and "\r" in text:
        return "its quoted fields hold line breaks beside carriage returns"

    columns: list[ColumnFacts] = []
    for name in header:
        facts = _column_facts(table[name].combine_chunks(), forced_text=name in text_columns)
        if isinstance(facts, str):
            return f"column {name} {facts}"
        columns.append(facts)
    first_rows = table.slice(0, SAMPLE_ROWS).to_pylist()
    return SeedFile(
        header=header,
        columns=columns,
        row_count=table.num_rows,
        fields_span_lines=rows.fields_span_lines,
        sample=agate.Table(
            [list(row.values()) for row in first_rows], header, [c.type for c in columns]
        ),
    )


@dataclass
class _PythonRead:
    count: int
    fields_span_lines: bool


def _python_read(text: str, delimiter: str, width: int) -> _PythonRead | str:
    count = 0
    try:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
        next(reader, None)
        for row in reader:
            # A blank line is an empty row that agate keeps and Arrow and Spark skip.
            if len(row) != width:
                return f"row {count + 1} has {len(row)} fields where the header has {width}"
            count += 1
    except csv.Error as error:
        return f"its quoting is not well-formed ({error})"
    # More lines than records: some quoted field holds a line break.
    return _PythonRead(count, fields_span_lines=reader.line_num != count + 1)


def _column_facts(column: pa.Array, forced_text: bool) -> ColumnFacts | str:
    """agate's view of the column, or why agate itself must read it."""
    import pyarrow.compute as pc

    if forced_text:
        has_nulls = pc.any(seedtypes.null_mask(column)).as_py()
        return ColumnFacts(seedtypes.TEXT_T, has_fraction=False, has_nulls=has_nulls)
    shapes, other = seedtypes.column_shapes(column, MAX_OTHER_VALUES)
    if Shape.OTHER in shapes and Shape.TEXT not in shapes and other is None:
        return f"has more than {MAX_OTHER_VALUES} values outside the shapes Spark reads"
    column_type = seedtypes.column_type(shapes, other or [])
    if Shape.OTHER in shapes and column_type is not seedtypes.TEXT_T:
        # agate would rewrite these values (e.g. '1,000' -> 1000); only its path does.
        return "holds values agate rewrites before casting"
    return ColumnFacts(
        column_type, has_fraction=Shape.DECIMAL in shapes, has_nulls=Shape.NULL in shapes
    )


def _column(name: str) -> Column:
    from pyspark.sql import functions as F

    # Backquoted, so a dot in a CSV header names a column, not a struct field.
    return F.col("`" + name.replace("`", "``") + "`")


def _null_expr(value: Column) -> Column:
    """Whether agate reads the value as NULL: '' or 'null' in any case, after str.strip()."""
    from pyspark.sql import functions as F

    # Such a value is empty or starts with whitespace or n: the pattern runs for few.
    first = F.ascii(value)
    return (
        value.isNull()
        | (value == "")
        | (
            first.isin(ord("n"), ord("N"), *map(ord, seedtypes.py_whitespace()))
            & value.rlike(seedtypes.anchored(seedtypes.null_pattern()))
        )
    )


def _sql_type(
    column_type: agate.data_types.DataType, has_fraction: bool, convert_type: ConvertType
) -> str:
    """The adapter's SQL type for an agate type, from a one-row stand-in for the column: dbt
    reads only a Number column's values (any fraction makes it a double)."""
    value = None
    if column_type is seedtypes.NUMBER_T:
        value = "0.5" if has_fraction else "0"
    return convert_type(agate.Table([[value]], ["value"], [column_type]), 0)
