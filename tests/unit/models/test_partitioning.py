"""partition_by: every accepted spelling, its Iceberg DDL, and every rejected entry's message."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dbt.adapters.lakehouse.exceptions import PartitionConfigError
from dbt.adapters.lakehouse.models.partitioning import (
    parse_partition_by,
    render_partition_clause,
    validate_partition_columns,
)


@pytest.mark.parametrize(
    ("entry", "ddl", "iceberg"),
    [
        ("region", "`region`", "identity"),
        ("identity(region)", "`region`", "identity"),
        ("years(ts)", "years(`ts`)", "year"),
        ("year(ts)", "years(`ts`)", "year"),
        ("months(ts)", "months(`ts`)", "month"),
        ("month(ts)", "months(`ts`)", "month"),
        ("days(ts)", "days(`ts`)", "day"),
        ("day(ts)", "days(`ts`)", "day"),
        ("date(ts)", "days(`ts`)", "day"),
        ("hours(ts)", "hours(`ts`)", "hour"),
        ("hour(ts)", "hours(`ts`)", "hour"),
        ("date_hour(ts)", "hours(`ts`)", "hour"),
        ("bucket(16, id)", "bucket(16, `id`)", "bucket[16]"),
        ("BUCKET( 16 ,id )", "bucket(16, `id`)", "bucket[16]"),
        ("truncate(4, zip)", "truncate(4, `zip`)", "truncate[4]"),
        ("days(event.ts)", "days(`event`.`ts`)", "day"),
        ("`odd name`", "`odd name`", "identity"),
        ({"field": "id", "transform": "bucket", "n": 16}, "bucket(16, `id`)", "bucket[16]"),
        ({"column": "id", "transform": "bucket", "buckets": 8}, "bucket(8, `id`)", "bucket[8]"),
        (
            {"field": "zip", "transform": "truncate", "width": 3},
            "truncate(3, `zip`)",
            "truncate[3]",
        ),
        ({"field": "ts", "transform": "day"}, "days(`ts`)", "day"),
        ({"field": "region"}, "`region`", "identity"),
    ],
)
def test_accepted_entries(entry: Any, ddl: str, iceberg: str) -> None:
    (field,) = parse_partition_by([entry], "m")
    assert field.render() == ddl
    assert field.iceberg_transform() == iceberg


def test_single_string_and_mapping_are_one_entry() -> None:
    assert [f.render() for f in parse_partition_by("days(ts)")] == ["days(`ts`)"]
    assert [f.render() for f in parse_partition_by({"field": "id"})] == ["`id`"]


@pytest.mark.parametrize("empty", [None, [], ""])
def test_nothing_to_partition(empty: Any) -> None:
    assert parse_partition_by(empty) == []
    assert render_partition_clause([]) == ""


def test_clause_keeps_the_order_written() -> None:
    fields = parse_partition_by(["days(ts)", "bucket(16, id)", "truncate(4, zip)", "region"])
    assert render_partition_clause(fields) == (
        "partitioned by (days(`ts`), bucket(16, `id`), truncate(4, `zip`), `region`)"
    )


def test_backticks_in_names_are_escaped() -> None:
    (field,) = parse_partition_by(["`we``ird`"])
    assert field.render() == "`we``ird`"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("weeks(ts)", "unknown transform 'weeks'"),
        ("bucket(id)", "bucket takes 2 arguments as bucket(n, col), got 1"),
        ("truncate(4)", "truncate takes 2 arguments as truncate(width, col), got 1"),
        ("days(ts, id)", "days takes 1 argument (the column), got 2"),
        ("bucket(0, id)", "bucket count must be a positive integer, got 0"),
        ("bucket(-3, id)", "bucket count must be a positive integer, got -3"),
        ("truncate(0, zip)", "truncate width must be a positive integer, got 0"),
        ("bucket(id, 16)", "arguments are in the wrong order: bucket takes (n, column)"),
        ("bucket(1.5, id)", "bucket count must be a positive integer, got '1.5'"),
        ("days(ts", "malformed entry (unbalanced parentheses)"),
        ("", "the entry is empty"),
        ({"field": "id", "transform": "bucket"}, "bucket needs n, the bucket count"),
        ({"field": "id", "kind": "bucket"}, "unknown key(s) kind"),
        (42, "an entry must be a string or a mapping"),
    ],
)
def test_rejected_entries_name_the_model_and_entry(entry: Any, message: str) -> None:
    with pytest.raises(PartitionConfigError) as caught:
        parse_partition_by([entry], "orders")
    text = str(caught.value)
    assert "Invalid partition_by for model 'orders'" in text
    assert f"entry {entry!r}" in text
    assert message in text
    assert "Accepted entries:" in text


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(PartitionConfigError) as caught:
        parse_partition_by(["weeks(ts)", "bucket(0, id)", "region"], "orders")
    text = str(caught.value)
    assert "'weeks'" in text and "got 0" in text


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (["days(ts)", "day(ts)"], "partitions 'ts' the same way as 'days(ts)'"),
        (["days(ts)", "months(ts)"], "Iceberg allows one of years/months/days/hours per column"),
    ],
)
def test_redundant_entries(entries: list[str], message: str) -> None:
    with pytest.raises(PartitionConfigError, match=re.escape(message)):
        parse_partition_by(entries, "m")


def test_not_a_list() -> None:
    with pytest.raises(PartitionConfigError, match="must be a list, a string or a mapping"):
        parse_partition_by(42, "m")


def test_columns_must_exist_in_the_model() -> None:
    fields = parse_partition_by(["days(ts)", "bucket(16, customer_id)", "Region"], "orders")
    validate_partition_columns(fields, ["TS", "customer_id", "region"], "orders")
    with pytest.raises(PartitionConfigError) as caught:
        validate_partition_columns(fields, ["id", "region"], "orders")
    text = str(caught.value)
    assert "model 'orders'" in text
    assert "entry 'days(ts)': column 'ts' is not in the model" in text
    assert "entry 'bucket(16, customer_id)': column 'customer_id' is not in the model" in text
    assert "The model's columns are: id, region." in text


def test_nested_field_is_checked_by_its_top_level_column() -> None:
    fields = parse_partition_by(["days(event.ts)"], "m")
    validate_partition_columns(fields, ["event"], "m")
