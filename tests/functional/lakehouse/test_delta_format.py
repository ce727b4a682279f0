"""One write, two formats: `table_formats: [iceberg, delta]` tables read by Delta readers.

After every Iceberg commit dbt makes on a dual-format table, the table root holds a Delta log
of the same files. Each check reads every such table three ways: Spark's Iceberg read (the
reference), delta-rs (`DeltaTable.to_pyarrow_table`) and DuckDB's `delta_scan`, row for row,
plus DuckDB filters on a decimal(38,10) and a timestamp column (DuckDB skips files on the
log's statistics, so a bound narrower than the data loses rows), and the log's app
transaction against the table's current snapshot on `main`.

Two projects. The first: a seed, a snapshot, a table and one incremental model per strategy
(append, merge with deletes, replace, insert_overwrite, delete+insert, microbatch), partitioned
by an identity string (Delta partitions) or by days(ts) (no Delta partitions), run three times
(build, build with changed rows, --full-refresh); then mirror failures injected into
`deltasync.commit` (one failure retried; a run whose mirror always fails stays green and
warns; the next run, or `lakehouse_sync_delta`, catches the log up); then an audited run. The
second: what Delta readers could not follow is refused before anything is written. Off the
embedded lakehouse only what the storage changes runs: five of the tables and the maintenance.
"""

from __future__ import annotations

import datetime as dt
import glob
import importlib.util
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from functional.lakehouse.audited import audited_profiles
from functional.lakehouse.dbt_output import output_text
from functional.lakehouse.tables import table
from functional.rebuilds import BuildsEveryRun

APP_ID = "dbt-lakehouse/iceberg"
DUAL = {"+table_formats": ["iceberg", "delta"]}
# Options lakehouse_maintain uses on the sequence's tables: compaction of a few small files,
# and an expiry that deletes every file the current snapshot no longer lists.
MAINTENANCE = {
    "+maintenance": {
        "compaction": {"min_input_files": 2},
        "snapshot_expiry": {"retain_days": 0, "retain_last": 1},
    }
}
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


@pytest.fixture(scope="class")
def readers(request: pytest.FixtureRequest) -> DeltaReaders:
    profile = request.config.getoption("--profile")
    s3 = request.getfixturevalue("s3_server") if profile != "local" else None
    return DeltaReaders(s3)


def messages(out: str) -> str:
    return output_text(out)


# ---- the three-run sequence -------------------------------------------------------------------

HEADER = "id,amount,ts,grp,op\n"
# Decimals with all ten fraction digits (a float would lose them), a NULL amount, and
# timestamps with microseconds at the edges of their day (Delta's stats hold milliseconds).
SEED_RUN1 = HEADER + (
    "1,12345678901234567890.1234567891,2024-01-01 00:00:00.000001,a,i\n"
    "2,-0.0000000001,2024-01-01 08:30:00.123456,b,i\n"
    "3,98765432109876543210.0000000009,2024-01-01 23:59:59.999999,c,i\n"
    "4,,2024-01-02 00:00:00.000000,a,i\n"
    "5,1.5000000000,2024-01-02 12:00:00.000500,b,i\n"
    "6,27999999999999999999.9999999999,2024-01-02 23:59:59.999999,c,i\n"
)
# Updates (1, 4), a CDC delete (2), a row gone (3), new rows (7, 8).
SEED_RUN2 = HEADER + (
    "1,12345678901234567890.1234567892,2024-01-01 00:00:00.000001,a,u\n"
    "2,-0.0000000001,2024-01-01 08:30:00.123456,b,d\n"
    "4,7.0000000007,2024-01-02 00:00:00.000000,a,u\n"
    "5,1.5000000000,2024-01-02 12:00:00.000500,b,i\n"
    "6,27999999999999999999.9999999999,2024-01-02 23:59:59.999999,c,i\n"
    "7,0.0000000001,2024-01-01 12:34:56.789012,c,i\n"
    "8,42.4200000000,2024-01-02 06:00:00.000001,a,i\n"
)

COLUMNS = "id, amount, ts, grp"
TBL_SQL = (
    "{{ config(materialized='table', partition_by=['days(ts)']) }}\n"
    f"select {COLUMNS} from {{{{ ref('raw') }}}}"
)
APPEND_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='append',"
    " partition_by=['grp']) }}\n"
    f"select {COLUMNS}, {{{{ var('run', 1) }}}} as run from {{{{ ref('raw') }}}}"
)
MERGE_SQL = (
    "{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',"
    " delete_condition=\"op = 'd'\", partition_by=['grp']) }}\n"
    f"select {COLUMNS}, op from {{{{ ref('raw') }}}}"
)
REPLACE_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='replace',"
    " partition_by=['days(ts)']) }}\n"
    f"select {COLUMNS} from {{{{ ref('raw') }}}}"
)
# After run 1, only grp 'a' is overwritten: b and c keep their first rows. An identity-only
# spec, which Spark describes under "# Partition Information" (not "# Partitioning").
OVERWRITE_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='insert_overwrite',"
    " partition_by=['grp']) }}\n"
    f"select {COLUMNS} from {{{{ ref('raw') }}}}\n"
    "{% if var('run', 1) != 1 %} where grp = 'a' {% endif %}"
)
DELETE_INSERT_SQL = (
    "{{ config(materialized='incremental', unique_key='id', incremental_strategy='delete+insert',"
    " partition_by=['days(ts)']) }}\n"
    f"select {COLUMNS}, op from {{{{ ref('raw') }}}} where op <> 'd'"
)
MICROBATCH_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',"
    " batch_size='day', begin=modules.datetime.datetime(2024, 1, 1), partition_by=['grp']) }}\n"
    f"select {COLUMNS} from {{{{ ref('raw') }}}}"
)
SNAPSHOT_YML = """
snapshots:
  - name: snap
    relation: ref('raw')
    config: {unique_key: id, strategy: check, check_cols: all}
"""
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]

# Each dual-format table and the Delta partition columns it must declare.
SEQUENCE = {
    "raw": [],
    "snap": [],
    "tbl": [],
    "app": ["grp"],
    "mrg": ["grp"],
    "rep": [],
    "iov": ["grp"],
    "dins": [],
    "mb": ["grp"],
}
# Off the embedded lakehouse, what differs is the log's writes to the object store, not the
# strategies (CI time): a seed, a table, an append, a merge with deletes and an overwrite.
STORAGE_SEQUENCE = ("raw", "tbl", "app", "mrg", "iov")


# Every run's writes are mirrored and their failures injected: built every run.
class TestDualFormatSequence(BuildsEveryRun):
    @pytest.fixture(scope="class")
    def sequence(self, request: pytest.FixtureRequest) -> dict[str, list[str]]:
        if request.config.getoption("--profile") == "local":
            return SEQUENCE
        return {name: SEQUENCE[name] for name in STORAGE_SEQUENCE}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"raw.csv": SEED_RUN1}

    @pytest.fixture(scope="class")
    def models(self, sequence: dict[str, list[str]]) -> dict[str, str]:
        every = {
            "tbl": TBL_SQL,
            "app": APPEND_SQL,
            "mrg": MERGE_SQL,
            "rep": REPLACE_SQL,
            "iov": OVERWRITE_SQL,
            "dins": DELETE_INSERT_SQL,
            "mb": MICROBATCH_SQL,
        }
        return {f"{name}.sql": sql for name, sql in every.items() if name in sequence}

    @pytest.fixture(scope="class")
    def snapshots(self, sequence: dict[str, list[str]]) -> dict[str, str]:
        return {"snap.yml": SNAPSHOT_YML} if "snap" in sequence else {}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {
            "models": {**DUAL, **MAINTENANCE},
            "snapshots": DUAL,
            "seeds": {
                **DUAL,
                "test": {
                    "raw": {
                        "+column_types": {"amount": "decimal(38,10)", "ts": "timestamp"},
                        "+event_time": "ts",
                    }
                },
            },
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        return audited_profiles(dbt_profile_target, unique_schema)

    def test_three_runs(
        self, project: Any, readers: DeltaReaders, sequence: dict[str, list[str]]
    ) -> None:
        def check_all() -> dict[str, tuple[int, list]]:
            return {
                name: check_dual(project, readers, name, partitions)
                for name, partitions in sequence.items()
            }

        run_dbt(["build", *WINDOW])
        first = check_all()

        (Path(project.project_root) / "seeds" / "raw.csv").write_text(SEED_RUN2)
        run_dbt(["build", "--vars", "{run: 2}", *WINDOW])
        second = check_all()
        # Every table moved to a new snapshot, and the changed rows reached it.
        for name in sequence:
            assert second[name][0] != first[name][0], f"{name}: no new snapshot in run 2"
            assert second[name][1] != first[name][1], f"{name}: rows unchanged by run 2"
        merged_ids = sorted(r[0] for r in second["mrg"][1])
        assert merged_ids == [1, 3, 4, 5, 6, 7, 8]  # 2 deleted, 3 kept (merge never drops)

        run_dbt(["build", "--vars", "{run: 3}", "--full-refresh", *WINDOW])
        third = check_all()
        for name in set(sequence) - {"snap"}:  # snapshots ignore --full-refresh
            assert third[name][0] != second[name][0], f"{name}: no new snapshot in run 3"
        assert sorted(r[0] for r in third["mrg"][1]) == [1, 4, 5, 6, 7, 8]

    # ---- mirror failures: Iceberg stays primary ----------------------------------------------

    # The retries and warnings are the mirror's own logic, the same on any storage (CI time).
    @pytest.mark.only_profile("local")
    def test_failed_mirrors_are_retried_then_caught_up(
        self, project: Any, readers: DeltaReaders, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real_commit = deltasync.commit
        calls: list[int] = []

        def fail_first(*args: Any, **kwargs: Any) -> int:
            calls.append(1)
            if len(calls) == 1:
                raise OSError("injected: the object store went away")
            return real_commit(*args, **kwargs)

        # One failure: the retry lands it, the run is green.
        before, _ = check_dual(project, readers, "app")
        monkeypatch.setattr(deltasync, "commit", fail_first)
        run_dbt(["run", "--select", "app", "--vars", "{run: 4}"])
        assert len(calls) == 2, calls
        retried, _ = check_dual(project, readers, "app")
        assert retried != before

        # Every commit fails for a run: still green, a warning naming table and snapshot, and
        # the log stays at the old snapshot (the rows it lists are still readable).
        attempts: list[str] = []

        def always_fail(uri: str, *args: Any, **kwargs: Any) -> int:
            attempts.append(uri)
            raise OSError("injected: the object store went away")

        lagging_mrg, _ = check_dual(project, readers, "mrg")
        monkeypatch.setattr(deltasync, "commit", always_fail)
        results, out = run_dbt_and_capture(["run", "--select", "app", "mrg", "--vars", "{run: 5}"])
        assert all(r.status == "success" for r in results), [r.message for r in results]
        # Exactly one retry per table: two attempts each, not one, not more.
        uris = {name: describe(project, name)[1] for name in ("app", "mrg")}
        assert sorted(attempts) == sorted([uris["app"], uris["mrg"]] * 2), attempts
        text = messages(out)
        for name, old in (("app", retried), ("mrg", lagging_mrg)):
            current = main_snapshot(project, name)
            assert current != old, f"{name}: run 5 made no Iceberg commit"
            full_name = f"{project.database}.{project.test_schema}.{name}"
            assert (
                f"Delta log of {full_name} not updated for Iceberg snapshot {current} "
                "after 2 attempts: injected: the object store went away" in text
            ), text
            uri = describe(project, name)[1]
            assert readers.handle(uri).transaction_version(APP_ID) == old, name
        monkeypatch.setattr(deltasync, "commit", real_commit)

        # lakehouse_sync_delta catches up the selected table only; the next run the other.
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_sync_delta", "--args", "{select: [mrg]}"]
        )
        assert "mirrors Iceberg snapshot" in messages(out)
        synced, _ = check_dual(project, readers, "mrg")
        # Again: the log is already at that snapshot, so nothing is committed.
        version = readers.handle(uris["mrg"]).version()
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_sync_delta", "--args", "{select: [mrg]}"]
        )
        full_mrg = f"{project.database}.{project.test_schema}.mrg"
        assert f"{full_mrg}: Delta log already at Iceberg snapshot {synced}" in messages(out), out
        assert readers.handle(uris["mrg"]).version() == version
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_sync_delta", "--args", "{select: [mrg, nope]}"],
            expect_pass=False,
        )
        assert (
            "lakehouse_sync_delta: select entries nope match no dual-format table "
            "(table_formats [iceberg, delta]) of this project" in messages(out)
        ), out
        uri = describe(project, "app")[1]
        assert readers.handle(uri).transaction_version(APP_ID) == retried
        run_dbt(["run", "--select", "app", "--vars", "{run: 6}"])
        caught_up, rows = check_dual(project, readers, "app")
        assert {r[-1] for r in rows} >= {4, 5, 6}  # run 5's rows are in the log too

    # ---- an audited run --------------------------------------------------------------------

    @pytest.mark.only_profile("local")
    def test_audited_run_mirrors_the_published_snapshot(
        self, project: Any, readers: DeltaReaders
    ) -> None:
        before = main_snapshot(project, "app")
        _, out = run_dbt_and_capture(
            ["run", "--target", "audited", "--select", "app", "--vars", "{run: 7}"]
        )
        published, rows = check_dual(project, readers, "app")
        assert published != before
        assert 7 in {r[-1] for r in rows}
        # One mirror, after the publish (the write itself was on the run's branch).
        text = messages(out)
        mirrors = [line for line in text.splitlines() if "mirrors Iceberg snapshot" in line]
        assert len(mirrors) == 1 and f"mirrors Iceberg snapshot {published}:" in mirrors[0], text
        assert text.index("Audited run published") > text.index(mirrors[0])

    # ---- maintenance: the log follows compaction, and is checkpointed -------------------------

    def test_maintenance_keeps_the_log_readable(self, project: Any, readers: DeltaReaders) -> None:
        """Compaction commits new files and expiry then deletes the replaced ones: the log
        must have followed the compaction before the expiry, or delta-rs and DuckDB would
        read deleted files."""
        # One more append, so each partition holds files to compact whatever ran before.
        run_dbt(["run", "--select", "app", "--vars", "{run: 8}"])
        uri = describe(project, "app")[1]
        before, rows = check_dual(project, readers, "app")
        files_before = len(readers.handle(uri).file_uris())
        assert not readers.has_checkpoint(uri)
        _, out = run_dbt_and_capture(
            [
                "run-operation",
                "lakehouse_maintain",
                "--args",
                "{select: [app], operations: [full_maintenance]}",
            ]
        )
        text = messages(out)
        after, compacted = check_dual(project, readers, "app")
        assert compacted == rows and after != before
        handle = readers.handle(uri)
        assert len(handle.file_uris()) < files_before, text
        assert "app snapshot_expiry: expired" in text, text
        assert f"app delta_checkpoint: Delta checkpoint at version {handle.version()}" in text
        assert readers.has_checkpoint(uri)


# ---- refusals: what Delta readers could not follow, refused before anything is written ------

# A new table whose config asks for merge-on-read.
MOR_NEW_SQL = """
{{ config(materialized='table', table_properties={'write.delete.mode': 'merge-on-read'}) }}
select 1 as id
"""
# An existing table: the config turns merge-on-read (var mor), or an ALTER outside dbt does.
MOR_OLD_SQL = """
{{ config(materialized='incremental', unique_key='id',
          table_properties=({'write.merge.mode': 'merge-on-read'} if var('mor', false) else {})) }}
select {{ var('step', 1) }} as id, 'v{{ var('step', 1) }}' as v
"""
# Step 2 widens id: int -> bigint.
RETYPE_SQL = """
{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}
select cast({{ var('step', 1) }} as {{ 'bigint' if var('step', 1) == 2 else 'int' }}) as id
"""
# Step 2 drops c (allowed), step 3 adds it again (refused: step 1's file still holds c).
READD_SQL = """
{{ config(materialized='incremental', on_schema_change='sync_all_columns') }}
select {{ var('step', 1) }} as id
{%- if var('step', 1) != 2 %}, 'c{{ var('step', 1) }}' as c{% endif %}
"""
# Column a is renamed to b outside dbt before step 2.
RENAMED_SQL = """
{{ config(materialized='incremental') }}
select {{ var('step', 1) }} as id, 'a{{ var('step', 1) }}' as a
"""
# Column c is dropped and added again outside dbt before step 2 (same name and type).
READD_OUTSIDE_SQL = """
{{ config(materialized='incremental') }}
select {{ var('step', 1) }} as id, 'c{{ var('step', 1) }}' as c
"""


# What is refused, and that nothing is written, is the adapter's own check before any write:
# the same on every storage (CI time; the sequence above runs on s3_rest too).
@pytest.mark.only_profile("local")
class TestDualFormatRefusals:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "mor_new.sql": MOR_NEW_SQL,
            "mor_old.sql": MOR_OLD_SQL,
            "retype.sql": RETYPE_SQL,
            "readd.sql": READD_SQL,
            "renamed.sql": RENAMED_SQL,
            "readd_outside.sql": READD_OUTSIDE_SQL,
        }

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": DUAL}

    def state(self, project: Any, readers: DeltaReaders, name: str) -> tuple:
        """What a refused run must leave as it was: main's snapshot and rows, the Delta log's
        version and rows (after a rename outside dbt, the log still has the old name)."""
        snapshot = main_snapshot(project, name)
        columns, uri = describe(project, name)
        handle = readers.handle(uri)
        delta_columns = [f.name for f in handle.schema().fields]
        return (
            snapshot,
            spark_rows(project, name, columns),
            int(handle.version()),
            readers.delta_rs_rows(uri, delta_columns),
        )

    def refused(self, results: Any, name: str, *reasons: str) -> None:
        result = next(r for r in results if r.node.name == name)
        assert result.status == "error", f"{name} was not refused: {result.status}"
        message = result.message or ""
        for reason in (f"Model '{name}'", *reasons, "Nothing was written"):
            assert reason in message, f"{reason!r} not in {name}'s message: {message}"

    def test_refused_before_writing(self, project: Any, readers: DeltaReaders) -> None:
        results = run_dbt(["run"], expect_pass=False)
        assert {r.node.name for r in results if r.status == "success"} == {
            "mor_old",
            "retype",
            "readd",
            "renamed",
            "readd_outside",
        }
        self.refused(results, "mor_new", "merge-on-read", "write.delete.mode")
        relations = project.run_sql(
            f"show tables in `{project.database}`.`{project.test_schema}`", fetch="all"
        )
        assert "mor_new" not in {r[1] for r in relations}, relations

        # Step 2: merge-on-read in an existing table's config, a type change, a column renamed
        # outside dbt, a column dropped and added again outside dbt: refused, nothing written.
        # A plain column drop is mirrored.
        refused = ("mor_old", "retype", "renamed", "readd_outside")
        project.run_sql(f"alter table {table(project, 'renamed')} rename column a to b")
        readd_outside = table(project, "readd_outside")
        outside_uri = describe(project, "readd_outside")[1]
        fields = readers.handle(outside_uri).schema().fields
        assert {f.name: f.metadata.get("iceberg.field-id") for f in fields} == {"id": 1, "c": 2}
        project.run_sql(f"alter table {readd_outside} drop column c")
        project.run_sql(f"alter table {readd_outside} add column c string")
        # No new snapshot, yet the log is wrong already: Iceberg reads NULL from the old file
        # (new field id), delta-rs the dropped values (by name). The sync says so, and stops.
        assert spark_rows(project, "readd_outside", describe(project, "readd_outside")[0]) == [
            (1, None)
        ]
        assert readers.delta_rs_rows(outside_uri, ["id", "c"]) == [(1, "c1")]
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_sync_delta", "--args", "{select: [readd_outside]}"],
            expect_pass=False,
        )
        assert "column 'c' was dropped and added again" in messages(out), out
        before = {name: self.state(project, readers, name) for name in refused}
        readd_uri = describe(project, "readd")[1]
        assert [f.name for f in readers.handle(readd_uri).schema().fields] == ["id", "c"]
        results = run_dbt(
            ["run", "--exclude", "mor_new", "--vars", "{step: 2, mor: true}"], expect_pass=False
        )
        self.refused(results, "mor_old", "merge-on-read", "write.merge.mode")
        self.refused(results, "retype", "changing the type of id")
        self.refused(results, "renamed", "column 'a' was renamed to 'b'")
        self.refused(results, "readd_outside", "column 'c' was dropped and added again")
        for name in refused:
            assert self.state(project, readers, name) == before[name], name
        _, rows = check_dual(project, readers, "readd")
        assert rows == [(1,), (2,)]

        # Step 3: merge-on-read set outside dbt; the dropped column c added again.
        mor_old = table(project, "mor_old")
        project.run_sql(
            f"alter table {mor_old} set tblproperties ('write.delete.mode' = 'merge-on-read')"
        )
        refused = ("mor_old", "readd")
        before = {name: self.state(project, readers, name) for name in refused}
        results = run_dbt(["run", "--select", *refused, "--vars", "{step: 3}"], expect_pass=False)
        self.refused(results, "mor_old", "merge-on-read", "write.delete.mode", "existing table")
        self.refused(results, "readd", "adding column(s) c again")
        for name in refused:
            assert self.state(project, readers, name) == before[name], name
