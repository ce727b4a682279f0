"""Reading a dual-format table (`table_formats: [iceberg, delta]`) three ways, for the Delta
tests (test_delta_format*.py): Spark's Iceberg read (the reference), delta-rs
(`DeltaTable.to_pyarrow_table`) and DuckDB's `delta_scan`, row for row, plus DuckDB filters on a
decimal(38,10) and a timestamp column (DuckDB skips files on the log's statistics, so a bound
narrower than the data loses rows), and the log's app transaction against the table's current
snapshot on `main`.
"""

from __future__ import annotations

import datetime as dt
import glob
import importlib.util
import os
from decimal import Decimal
from typing import Any

import pytest

from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import table

APP_ID = "dbt-lakehouse/iceberg"
DUAL = {"+table_formats": ["iceberg", "delta"]}
UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)

# ---- reading a table three ways ----------------------------------------------------------------


def _extension(package: str, name: str) -> str:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin, f"{package} is not installed"
    folder = os.path.join(os.path.dirname(spec.origin), "extensions")
    pattern = os.path.join(folder, "*", f"{name}.duckdb_extension")
    found = sorted(glob.glob(pattern))
    assert found, f"no {name} extension under {pattern}"
    return found[-1]


def _normal(value: Any) -> Any:
    """One spelling per value: timestamps as UTC datetimes (naive ones are UTC wall clocks),
    decimals without trailing zeros."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, Decimal):
        # Not Decimal.normalize(): it rounds to the context's 28 digits.
        text = format(value, "f")
        return Decimal(text.rstrip("0").rstrip(".") if "." in text else text)
    return value


def _sorted(found: list[tuple]) -> list[tuple]:
    return sorted((tuple(_normal(v) for v in row) for row in found), key=repr)


def _micros(value: dt.datetime) -> int:
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _quoted(name: str) -> str:
    return f"`{name}`"


class DeltaReaders:
    """delta-rs and DuckDB on the profile's storage (local files, or the S3 server)."""

    def __init__(self, s3: Any | None) -> None:
        import duckdb

        self.options: dict[str, str] = {}
        self.s3 = s3
        self.duck = duckdb.connect()
        self.duck.execute("SET TimeZone='UTC'")
        self.duck.execute(f"LOAD '{_extension('duckdb_extension_delta', 'delta')}'")
        if s3 is not None:
            self.options = {
                "AWS_ENDPOINT_URL": s3.endpoint,
                "AWS_ACCESS_KEY_ID": s3.access_key,
                "AWS_SECRET_ACCESS_KEY": s3.secret_key,
                "AWS_REGION": s3.region,
                "AWS_ALLOW_HTTP": "true",
            }
            self.duck.execute(f"LOAD '{_extension('duckdb_extension_httpfs', 'httpfs')}'")
            self.duck.execute(
                f"CREATE SECRET (TYPE s3, KEY_ID '{s3.access_key}', SECRET '{s3.secret_key}', "
                f"REGION '{s3.region}', ENDPOINT '127.0.0.1:{s3.port}', URL_STYLE 'path', "
                "USE_SSL false)"
            )

    def has_checkpoint(self, uri: str) -> bool:
        """Whether the log names a checkpoint (`_delta_log/_last_checkpoint`)."""
        key = "_delta_log/_last_checkpoint"
        if self.s3 is None:
            return os.path.exists(os.path.join(uri, key))
        bucket, _, prefix = uri[len("s3://") :].partition("/")
        found = self.s3.client().list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/{key}")
        return found.get("KeyCount", 0) == 1

    def handle(self, uri: str) -> Any:
        from deltalake import DeltaTable

        return DeltaTable(uri, storage_options=self.options)

    def delta_rs_rows(self, uri: str, columns: list[str], where: Any = None) -> list[tuple]:
        if where is None:
            arrow = self.handle(uri).to_pyarrow_table(columns=columns)
        else:
            arrow = self.handle(uri).to_pyarrow_dataset().to_table(columns=columns, filter=where)
        found = arrow.to_pylist()
        return _sorted([tuple(r[c] for c in columns) for r in found])

    def duckdb_rows(self, uri: str, columns: list[str], where: str = "") -> list[tuple]:
        select = ", ".join(f'"{c}"' for c in columns)
        sql = f"select {select} from delta_scan('{uri}')" + (f" where {where}" if where else "")
        return _sorted(self.duck.execute(sql).fetchall())


def _delta_uri(location: str) -> str:
    if location.startswith("s3a://"):
        return "s3://" + location[len("s3a://") :]
    if location.startswith("file://"):
        return location[len("file://") :]
    if location.startswith("file:"):
        return location[len("file:") :]
    return location.rstrip("/")


def describe(project: Any, name: str) -> tuple[list[tuple[str, str]], str]:
    """The table's (column, type) list and its root, as Delta readers address it."""
    found = project.run_sql(f"describe table extended {table(project, name)}", fetch="all")
    columns: list[tuple[str, str]] = []
    location = None
    in_columns = True
    for col_name, data_type, *_ in found:
        if not col_name or col_name.startswith("#"):
            in_columns = False
        elif in_columns:
            columns.append((col_name, data_type))
        if col_name == "Location":
            location = data_type
    assert location, f"no Location for {name}: {found}"
    return columns, _delta_uri(location)


def main_snapshot(project: Any, name: str) -> int | None:
    """The table's snapshot on `main` (None before its first commit)."""
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(
        f"select snapshot_id from {table(project, name)}.refs where name = 'main'", fetch="one"
    )
    return None if found is None else int(found[0])


def spark_rows(project: Any, name: str, columns: list[tuple[str, str]], where: str = "") -> list:
    """Spark's Iceberg read; timestamps through unix_micros (no session or Python zone)."""
    selects = [
        f"unix_micros(cast({_quoted(c)} as timestamp))"
        if t in ("timestamp", "timestamp_ntz")
        else _quoted(c)
        for c, t in columns
    ]
    sql = f"select {', '.join(selects)} from {table(project, name)}"
    found = project.run_sql(sql + (f" where {where}" if where else ""), fetch="all")
    timestamps = [t in ("timestamp", "timestamp_ntz") for _, t in columns]
    return _sorted(
        [
            tuple(
                EPOCH + dt.timedelta(microseconds=v) if ts and v is not None else v
                for v, ts in zip(row, timestamps, strict=True)
            )
            for row in found
        ]
    )


def check_dual(
    project: Any, readers: DeltaReaders, name: str, partition_columns: list[str] | None = None
) -> tuple[int, list[tuple]]:
    """Delta readers see exactly Spark's rows, filters included, and the log's app transaction
    is the table's snapshot on `main`. Returns (that snapshot, the rows)."""
    snapshot = main_snapshot(project, name)
    columns, uri = describe(project, name)
    names = [c for c, _ in columns]
    expected = spark_rows(project, name, columns)
    assert expected, f"{name} has no rows: the checks below would prove nothing"

    handle = readers.handle(uri)
    assert handle.transaction_version(APP_ID) == snapshot, (
        f"{name}: the Delta log mirrors {handle.transaction_version(APP_ID)}, main is {snapshot}"
    )
    assert [f.name for f in handle.schema().fields] == names, f"{name}: Delta schema"
    if partition_columns is not None:
        assert list(handle.metadata().partition_columns) == partition_columns, name
    assert readers.delta_rs_rows(uri, names) == expected, f"{name}: delta-rs rows"
    assert readers.duckdb_rows(uri, names) == expected, f"{name}: DuckDB rows"

    assert snapshot is not None
    if "amount" not in names:
        return snapshot, expected
    # Filters both readers answer with file skipping on the log's stats: a decimal equality,
    # and the greatest and least timestamp (microseconds; Delta's stats hold milliseconds).
    # DuckDB 1.5's delta_scan skips files on decimal bounds but not on timestamp ones;
    # delta-rs's dataset skips on timestamp bounds, and finds no row for any decimal filter,
    # even on a table delta-rs wrote itself (its decimal bounds read as null), so it is asked
    # about the timestamps only.
    import pyarrow as pa
    import pyarrow.dataset as ds

    amounts = sorted({r[names.index("amount")] for r in expected} - {None})
    stamps = sorted({r[names.index("ts")] for r in expected} - {None})
    amount, latest, earliest = amounts[len(amounts) // 2], stamps[-1], stamps[0]
    literal = f"{amount:f}"
    utc_micros = pa.timestamp("us", tz="UTC")
    checks = [
        (
            f"amount = cast('{literal}' as decimal(38,10))",
            f"amount = CAST('{literal}' AS DECIMAL(38,10))",
            None,
        ),
        (
            f"ts >= timestamp_micros({_micros(latest)})",
            f"ts >= TIMESTAMPTZ '{latest.isoformat()}'",
            ds.field("ts") >= pa.scalar(latest, utc_micros),
        ),
        (
            f"ts <= timestamp_micros({_micros(earliest)})",
            f"ts <= TIMESTAMPTZ '{earliest.isoformat()}'",
            ds.field("ts") <= pa.scalar(earliest, utc_micros),
        ),
    ]
    for spark_where, duck_where, arrow_filter in checks:
        wanted = spark_rows(project, name, columns, spark_where)
        assert wanted, f"{name}: nothing matches {spark_where}"
        found = readers.duckdb_rows(uri, names, duck_where)
        assert found == wanted, f"{name}: DuckDB where {duck_where}"
        if arrow_filter is not None:
            found = readers.delta_rs_rows(uri, names, arrow_filter)
            assert found == wanted, f"{name}: delta-rs where {spark_where}"
    return snapshot, expected


def profile_readers(request: pytest.FixtureRequest) -> DeltaReaders:
    """The Delta readers on the profile's storage (the test modules' class-scoped `readers`)."""
    profile = request.config.getoption("--profile")
    s3 = request.getfixturevalue("s3_server") if profile != "local" else None
    return DeltaReaders(s3)


def messages(out: str) -> str:
    return output_text(out)
