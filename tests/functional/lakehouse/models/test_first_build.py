"""An incremental model's rows never depend on whether its table existed: a first run, a rerun
of the same batch and a `--full-refresh` leave the same rows for every strategy with keys, and
a batch the incremental path refuses is refused on a first run and a full refresh too, before
anything is written."""

from __future__ import annotations

import datetime as dt

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.tables import current_snapshot, expect, rows

# (id, seq, op, v): key 1 twice, key 2 inserted then deleted, key 3 once.
CDC_BATCH = (
    "(1, 1, 'i', 'a'), (1, 2, 'u', 'b'), (2, 1, 'i', 'x'), (2, 2, 'd', 'x'), (3, 1, 'i', 'c')"
)

CDC_LATEST_SQL = f"""
{{{{ config(materialized='incremental', unique_key='id', latest_by='seq',
          delete_condition="op = 'd'") }}}}
select * from values {CDC_BATCH} as t(id, seq, op, v)
"""

# Deletes without latest_by: one row per key, key 2 deleted, key 4 a delete of nothing.
CDC_DELETE_SQL = """
{{ config(materialized='incremental', unique_key='id', delete_condition="op = 'd'") }}
select * from values (1, 'i', 'a'), (2, 'd', 'x'), (3, 'u', 'c'), (4, 'd', cast(null as string))
  as t(id, op, v)
"""

# latest_by alone: key 2 ties on seq, the greatest remaining column wins ('y').
LATEST_ONLY_SQL = """
{{ config(materialized='incremental', unique_key=['id'], latest_by='seq') }}
select * from values (1, 1, 'a'), (1, 2, 'b'), (2, 5, 'x'), (2, 5, 'y'), (3, null, 'n')
  as t(id, seq, v)
"""

PLAIN_MERGE_SQL = """
{{ config(materialized='incremental', unique_key=['id', 'region']) }}
select * from values (1, 'eu', 'a'), (1, 'us', 'b'), (2, cast(null as string), 'c')
  as t(id, region, v)
"""

# delete+insert keeps every new row, repeated keys included, whether or not the table existed.
DELETE_INSERT_SQL = """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='id') }}
select * from values (1, 'a'), (1, 'b'), (2, 'c') as t(id, v)
"""

EXPECTED = {
    "cdc_latest": [(1, 2, "u", "b"), (3, 1, "i", "c")],
    "cdc_delete": [(1, "i", "a"), (3, "u", "c")],
    "latest_only": [(1, 2, "b"), (2, 5, "y"), (3, None, "n")],
    "plain_merge": [(1, "eu", "a"), (1, "us", "b"), (2, None, "c")],
    "delete_insert": [(1, "a"), (1, "b"), (2, "c")],
}


class TestFirstRunRerunFullRefreshAgree:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "cdc_latest.sql": CDC_LATEST_SQL,
            "cdc_delete.sql": CDC_DELETE_SQL,
            "latest_only.sql": LATEST_ONLY_SQL,
            "plain_merge.sql": PLAIN_MERGE_SQL,
            "delete_insert.sql": DELETE_INSERT_SQL,
        }

    def test_same_rows_each_time(self, project):
        for args in (["run"], ["run"], ["run", "--full-refresh"]):
            results = run_dbt(args)
            assert len(results) == len(EXPECTED)
            for name, expected in EXPECTED.items():
                expect(rows(project, name), expected)


# ---- refused before anything is written: first run and full refresh ---------------------------

REPEATED_KEYS_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select * from values
{% if var('repeat', false) %} (1, 'a'), (7, 'x'), (7, 'y') {% else %} (1, 'a'), (7, 'x') {% endif %}
  as t(id, v)
"""

KEY_TYPO_SQL = """
{{ config(materialized='incremental', unique_key=var('key', 'id'),
          latest_by=var('latest_by', 'seq')) }}
select * from values (1, 1, 'a'), (2, 1, 'b') as t(id, seq, v)
"""

EVENTS_SQL = """
{{ config(materialized='table', event_time='ts') }}
select * from values
  (1, timestamp'2024-01-01 10:00:00'), (2, timestamp'2024-01-02 10:00:00') as t(id, ts)
"""

# The model shifts event_time by a day, so its rows fall outside the batch dbt gives it.
SHIFTED_SQL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin=modules.datetime.datetime(2024, 1, 1)) }}
select id, ts + interval {{ var('shift', 0) }} days as ts from {{ ref('events') }}
"""


def relation_exists(project, name: str) -> bool:
    found = project.run_sql(
        f"show tables in `{project.database}`.`{project.test_schema}` like '{name}'", fetch="all"
    )
    return len(found) > 0


def failure(results, name: str) -> str:
    result = next(r for r in results if r.node.name == name)
    assert result.status == "error", f"{name} should have failed: {result.status}"
    return result.message


# On `local` alone: each refusal is the adapter's own check, made before any statement writes,
# whatever catalog and storage are behind the table (docs/tests.md).
@pytest.mark.only_profile("local")
class TestRefusedBeforeWriting:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "repeated.sql": REPEATED_KEYS_SQL,
            "key_typo.sql": KEY_TYPO_SQL,
            "events.sql": EVENTS_SQL,
            "shifted.sql": SHIFTED_SQL,
        }

    def test_first_run(self, project):
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]
        results, output = run_dbt_and_capture(
            ["run", "--vars", "{repeat: true, key: idd, shift: 1}", *window], expect_pass=False
        )
        message = failure(results, "repeated")
        assert "Model 'repeated' (incremental_strategy 'merge')" in message, message
        assert "the new rows hold 2 rows for unique_key (id) = (7)" in message
        assert "Nothing was written." in message
        assert "Job aborted" not in message  # the check's own message, not Spark's wrapper
        message = failure(results, "key_typo")
        assert "unique_key 'idd' is not one of its columns" in message, message
        assert "The model's columns are: id, seq, v" in message
        failure(results, "shifted")  # a microbatch model's batches report in the output
        assert "microbatch model shifted: a new row has ts = 2024-01-02 10:00:00" in output
        assert "outside its batch [2024-01-01 00:00:00+00:00, 2024-01-02 00:00:00+00:00)" in output
        for name in ("repeated", "key_typo", "shifted"):
            assert not relation_exists(project, name), name

        # The same models with good input build, so the checks above can tell good from bad.
        run_dbt(["run", *window])
        expect(rows(project, "repeated"), [(1, "a"), (7, "x")])
        expect(rows(project, "key_typo"), [(1, 1, "a"), (2, 1, "b")])
        expect(
            rows(project, "shifted"),
            [(1, dt.datetime(2024, 1, 1, 10)), (2, dt.datetime(2024, 1, 2, 10))],
        )

    def test_full_refresh(self, project):
        window = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]
        run_dbt(["run", *window])
        before = {n: current_snapshot(project, n) for n in ("repeated", "key_typo", "shifted")}
        contents = {n: rows(project, n) for n in before}

        results, output = run_dbt_and_capture(
            ["run", "--full-refresh", "--vars", "{repeat: true, latest_by: seqq, shift: 1}"]
            + window,
            expect_pass=False,
        )
        assert "unique_key (id) = (7)" in failure(results, "repeated")
        assert "latest_by 'seqq' is not one of its columns" in failure(results, "key_typo")
        failure(results, "shifted")
        assert "outside its batch" in output
        for name, snapshot in before.items():
            assert current_snapshot(project, name) == snapshot, name
            assert rows(project, name) == contents[name], name

        # An incremental run refuses the same inputs the same way.
        results, output = run_dbt_and_capture(
            ["run", "--vars", "{repeat: true, key: idd, shift: 1}", *window], expect_pass=False
        )
        assert "unique_key (id) = (7)" in failure(results, "repeated")
        assert "unique_key 'idd' is not one of its columns" in failure(results, "key_typo")
        failure(results, "shifted")
        assert "outside its batch" in output
        for name, snapshot in before.items():
            assert current_snapshot(project, name) == snapshot, name
