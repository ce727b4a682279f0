"""One write, two formats: `table_formats: [iceberg, delta]` tables read by Delta readers.

After every Iceberg commit dbt makes on a dual-format table, the table root holds a Delta log
of the same files. Each check reads every such table three ways (delta_readers.py): Spark's
Iceberg read (the reference), delta-rs and DuckDB's `delta_scan`, row for row, filters
included, and the log's app transaction against the table's current snapshot on `main`.

A seed, a snapshot, a table and one incremental model per strategy
(append, merge with deletes, replace, insert_overwrite, delete+insert, microbatch), partitioned
by an identity string (Delta partitions) or by days(ts) (no Delta partitions), run three times
(build, build with changed rows, --full-refresh); then mirror failures injected into
`deltasync.commit` (one failure retried; a run whose mirror always fails stays green and
warns; the next run, or `lakehouse_sync_delta`, catches the log up); then an audited run. What
Delta readers could not follow, refused before anything is written:
test_delta_format_refusals.py. Off the embedded lakehouse only what the storage changes runs:
five of the tables and the maintenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from functional.lakehouse.shared.audited import audited_profiles
from functional.lakehouse.shared.delta_readers import (
    APP_ID,
    DUAL,
    DeltaReaders,
    check_dual,
    describe,
    main_snapshot,
    messages,
    profile_readers,
)
from functional.rebuilds import BuildsEveryRun

# Options lakehouse_maintain uses on the sequence's tables: compaction of a few small files,
# and an expiry that deletes every file the current snapshot no longer lists.
MAINTENANCE = {
    "+maintenance": {
        "compaction": {"min_input_files": 2},
        "snapshot_expiry": {"retain_days": 0, "retain_last": 1},
    }
}


@pytest.fixture(scope="class")
def readers(request: pytest.FixtureRequest) -> DeltaReaders:
    return profile_readers(request)


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
