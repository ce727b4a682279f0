"""The partitions a run wrote, as a filter for compaction `scope: run`
(maintenance/compaction_scope.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from dbt.adapters.lakehouse.iceberg import describe
from dbt.adapters.lakehouse.maintenance import compaction_scope as cs

DESCRIBED = [
    ("id", "bigint", None),
    ("ts", "timestamp", None),
    ("odd `col`", "string", None),
    ("st", "struct<a:int>", None),
    ("", "", ""),
    ("# Partitioning", "", ""),
    ("Part 0", "days(ts)", ""),
    ("Part 1", "bucket(16, id)", ""),
    ("Part 2", "truncate(4, `odd ``col```)", ""),
    ("Part 3", "st.a", ""),
    ("", "", ""),
    ("# Metadata Columns", "", ""),
    ("_spec_id", "int", ""),
    ("", "", ""),
    ("# Detailed Table Information", "", ""),
    ("Name", "lh.s.t", ""),
]


def test_the_current_spec_and_columns_come_from_describe():
    columns, fields = describe.parse_describe(DESCRIBED)
    assert columns == {
        "id": "bigint",
        "ts": "timestamp",
        "odd `col`": "string",
        "st": "struct<a:int>",
    }
    assert [(f.transform, f.column, f.param, f.name) for f in fields] == [
        ("days", ("ts",), None, "ts_day"),
        ("bucket", ("id",), 16, "id_bucket"),
        ("truncate", ("odd `col`",), 4, "odd `col`_trunc"),
        ("identity", ("st", "a"), None, "st.a"),
    ]
    assert fields[2].quoted_column == "`odd ``col```"
    assert fields[3].quoted_column == "`st`.`a`"


def test_an_identity_only_spec_is_described_as_partition_information():
    rows = [
        ("id", "int", None),
        ("region", "string", None),
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("region", "string", None),
        ("`st`.`a`", "int", None),
        ("", "", ""),
        ("# Metadata Columns", "", ""),
    ]
    columns, fields = describe.parse_describe(rows)
    assert columns == {"id": "int", "region": "string"}
    assert [(f.transform, f.column, f.source_type) for f in fields] == [
        ("identity", ("region",), "string"),
        ("identity", ("st", "a"), "int"),
    ]
    assert describe.parse_describe([("id", "int", None)]) == ({"id": "int"}, [])


def spec(text: str) -> describe.SpecField:
    return describe.parse_spec_field(text)


@pytest.mark.parametrize(
    "field, kind, value, expected",
    [
        # identity: one value of the column's type
        ("region", "string", "it's a \\ %_", "`region` = 'it\\'s a \\\\ %_'"),
        ("region", "string", None, "`region` IS NULL"),
        ("n", "int", -5, "`n` = -5"),
        ("n", "bigint", 9223372036854775807, "`n` = 9223372036854775807"),
        ("flag", "boolean", False, "`flag` = false"),
        ("m", "decimal(10,2)", Decimal("-0.05"), "`m` = -0.05BD"),
        ("d", "date", "1969-12-31", "`d` = DATE'1969-12-31'"),
        (
            "ts",
            "timestamp",
            "2024-01-02 03:04:05.123456",
            "`ts` = TIMESTAMP'2024-01-02 03:04:05.123456 UTC'",
        ),
        (
            "ts",
            "timestamp_ntz",
            "2024-01-02 03:04:05.000000",
            "`ts` = TIMESTAMP_NTZ'2024-01-02 03:04:05.000000'",
        ),
        ("x", "double", 1.5, None),  # no exact literal here: left out
        ("x", "binary", "AAE=", None),
        # time transforms: a half-open range on the source column, in its own type
        (
            "days(ts)",
            "timestamp",
            "2024-02-29",
            "`ts` >= TIMESTAMP'2024-02-29 00:00:00 UTC'"
            " AND `ts` < TIMESTAMP'2024-03-01 00:00:00 UTC'",
        ),
        (
            "days(ts)",
            "timestamp_ntz",
            "2024-12-31",
            "`ts` >= TIMESTAMP_NTZ'2024-12-31 00:00:00'"
            " AND `ts` < TIMESTAMP_NTZ'2025-01-01 00:00:00'",
        ),
        ("days(d)", "date", "1900-01-01", "`d` >= DATE'1900-01-01' AND `d` < DATE'1900-01-02'"),
        ("days(d)", "date", None, "`d` IS NULL"),
        (
            "hours(ts)",
            "timestamp",
            -1,
            "`ts` >= TIMESTAMP'1969-12-31 23:00:00 UTC'"
            " AND `ts` < TIMESTAMP'1970-01-01 00:00:00 UTC'",
        ),
        ("hours(d)", "date", 5, None),
        ("months(d)", "date", 649, "`d` >= DATE'2024-02-01' AND `d` < DATE'2024-03-01'"),
        ("months(d)", "date", -12, "`d` >= DATE'1969-01-01' AND `d` < DATE'1969-02-01'"),
        (
            "months(ts)",
            "timestamp",
            659,
            "`ts` >= TIMESTAMP'2024-12-01 00:00:00 UTC'"
            " AND `ts` < TIMESTAMP'2025-01-01 00:00:00 UTC'",
        ),
        ("years(d)", "date", -20, "`d` >= DATE'1950-01-01' AND `d` < DATE'1951-01-01'"),
        ("years(d)", "date", 8029, "`d` >= DATE'9999-01-01'"),  # no year 10000 to end at
        ("years(d)", "date", 9000, None),
        # truncate: a prefix, or the whole value when shorter than the width
        ("truncate(3, s)", "string", "ab%", "startswith(`s`, 'ab%')"),
        ("truncate(3, s)", "string", "it'", "startswith(`s`, 'it\\'')"),
        ("truncate(3, s)", "string", "ab", "`s` = 'ab'"),
        ("truncate(3, s)", "string", "éàü", "startswith(`s`, 'éàü')"),
        ("truncate(3, s)", "string", None, "`s` IS NULL"),
        ("truncate(10, k)", "int", -20, "`k` >= -20 AND `k` < -10"),
        ("truncate(10, k)", "int", 2147483640, None),  # where Iceberg's truncate wraps
        ("truncate(100, k)", "bigint", 200, "`k` >= 200 AND `k` < 300"),
        ("truncate(50, m)", "decimal(10,2)", Decimal("12.5"), "`m` >= 12.50BD AND `m` < 13.00BD"),
        ("truncate(50, m)", "decimal(4,2)", Decimal("99.50"), "`m` >= 99.50BD"),
        (
            "truncate(50, m)",
            "decimal(4,2)",
            Decimal("-99.50"),
            "`m` >= -99.50BD AND `m` < -99.00BD",
        ),
        ("truncate(4, b)", "binary", "AAE=", None),
        # no filter form
        ("bucket(16, id)", "bigint", 3, None),
        ("bucket(16, id)", "bigint", None, None),
        ("void(id)", "bigint", None, None),
        ("zorder(id)", "bigint", 3, None),
    ],
)
def test_field_filter(field: str, kind: str, value: Any, expected: str | None):
    assert cs.field_filter(spec(field), kind, value, nulls_known=True) == expected


def test_a_null_of_a_field_the_files_spec_may_lack_is_left_out():
    assert cs.field_filter(spec("days(ts)"), "timestamp", None, nulls_known=False) is None
    assert cs.field_filter(spec("region"), "string", "eu", nulls_known=False) == "`region` = 'eu'"


COLUMNS = {"id": "bigint", "ts": "timestamp", "region": "string"}


def test_run_filter_ors_the_partitions_and_leaves_out_bucket():
    fields = [spec("days(ts)"), spec("bucket(4, id)"), spec("region")]
    partitions = [
        ({"ts_day": "2024-01-02", "id_bucket": 1, "region": "eu"}, True),
        ({"ts_day": "2024-01-02", "id_bucket": 3, "region": "eu"}, True),  # same filter
        ({"ts_day": None, "id_bucket": 0, "region": "us"}, True),
    ]
    found = cs.run_filter(fields, COLUMNS, partitions)
    assert found.where == (
        "(`ts` >= TIMESTAMP'2024-01-02 00:00:00 UTC' AND `ts` < TIMESTAMP'2024-01-03 00:00:00 UTC'"
        " AND `region` = 'eu') OR (`ts` IS NULL AND `region` = 'us')"
    )
    assert found.left_out == ("bucket(4, id)",)
    one = cs.run_filter(fields, COLUMNS, partitions[:1])
    assert one.where is not None and not one.where.startswith("(")


def test_run_filter_is_the_whole_table_when_a_partition_has_no_filter():
    fields = [spec("days(ts)"), spec("bucket(4, id)")]
    partitions = [
        ({"ts_day": "2024-01-02", "id_bucket": 1}, True),
        ({"ts_day": None, "id_bucket": 2}, False),
    ]
    found = cs.run_filter(fields, COLUMNS, partitions)
    assert found.where is None
    assert found.left_out == ("bucket(4, id)", "days(ts)")
    assert cs.run_filter([spec("bucket(4, id)")], COLUMNS, [({"id_bucket": 1}, True)]).where is None


def test_run_filter_leaves_out_renamed_fields_and_unknown_columns():
    # A field renamed by its owner (`ADD PARTITION FIELD days(ts) AS day`) is not in the tuple
    # under Iceberg's default name; a nested source column has no known type.
    fields = [spec("days(ts)"), spec("region"), spec("st.a"), spec("gone")]
    values = {"day": "2024-01-02", "region": "eu", "st.a": 1, "gone": 2}
    found = cs.run_filter(fields, COLUMNS, [(values, True)])
    assert found.where == "`region` = 'eu'"
    assert found.left_out == ("days(ts)", "st.a", "gone")


def test_which_run():
    after_run = cs.choose_run("0123456789abcdef", [])
    assert after_run == cs.RunChoice("0123456789abcdef", "invocation 01234567…")
    line = [(3, "append", "inv-3"), (2, "append", "inv-2")]
    assert cs.choose_run(None, line) == cs.RunChoice(
        "inv-3", "invocation inv-3 (made the current snapshot)"
    )
    # Compaction and manifest rewrites (`replace`, committed by procedures without a dbt
    # invocation id) change no row: the last write before them is the run.
    rewritten = [(5, "replace", None), (4, "replace", None), *line]
    assert cs.choose_run(None, rewritten) == cs.RunChoice(
        "inv-3", "invocation inv-3 (made snapshot 3, the last write before 2 file rewrite(s))"
    )
    outside = cs.choose_run(None, [(7, "overwrite", None), *line])
    assert outside.invocation is None
    assert outside.label == (
        "its last write (snapshot 7) carries no dbt.invocation_id (written outside dbt, or "
        "under Spark Connect, where commits do not name their run)"
    )
    assert cs.choose_run(None, []) == cs.RunChoice(None, "the table has no snapshot yet")
    assert cs.choose_run(None, [(5, "replace", None)]).invocation is None


def test_early_years_are_zero_padded():
    assert cs.field_filter(spec("years(d)"), "date", -1000, True) == (
        "`d` >= DATE'0970-01-01' AND `d` < DATE'0971-01-01'"
    )
