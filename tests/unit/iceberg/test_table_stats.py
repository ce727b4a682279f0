"""Table stats: what Iceberg's metadata becomes in dbt's docs catalog, without Spark."""

from __future__ import annotations

import datetime as dt

import agate
from dbt_common.clients.agate_helper import build_type_tester, merge_tables

from dbt.adapters.lakehouse.iceberg.catalog_stats import (
    NO_SNAPSHOT,
    STATS,
    TEXT_COLUMNS,
    catalog_columns,
    format_commit_time,
    stat_values,
    stats_items,
)
from dbt.adapters.lakehouse.iceberg.table_stats import committed_at, partition_field, table_stats

SUMMARY = {
    "total-records": "1200",
    "total-position-deletes": "0",
    "total-equality-deletes": "0",
    "total-data-files": "7",
    "total-files-size": "48213",
}
# 2026-11-23 10:15:30.123 UTC
MILLIS = 1795428930123


def _stats(**overrides):
    args = {
        "snapshot_id": 8412345678901234567,
        "timestamp_millis": MILLIS,
        "summary": SUMMARY,
        "format_version": 2,
        "transforms": ["days(ts)", "bucket(4, id)", "identity(region)"],
        "sort_order": "id ASC NULLS FIRST",
    }
    args.update(overrides)
    return table_stats(**args)


def test_commit_time_is_utc_with_milliseconds():
    at = committed_at(MILLIS)
    assert at == dt.datetime(2026, 11, 23, 10, 15, 30, 123000, tzinfo=dt.timezone.utc)
    assert format_commit_time(at) == "2026-11-23 10:15:30.123 UTC"


def test_stats_from_the_current_snapshot_and_table_metadata():
    stats = _stats()
    assert (stats.row_count, stats.data_files, stats.total_bytes) == (1200, 7, 48213)
    assert stats.partition_spec == ("days(ts)", "bucket(4, id)", "region")
    assert stat_values(stats) == {
        "row_count": 1200,
        "row_count_at_most": None,
        "data_files": 7,
        "bytes": 48213,
        "snapshot_id": "8412345678901234567",
        "last_modified": "2026-11-23 10:15:30.123 UTC",
        "format_version": "2",
        "partition_spec": "days(ts), bucket(4, id), region",
        "sort_order": "id ASC NULLS FIRST",
    }


def test_a_table_without_snapshot_has_no_rows_and_says_so():
    values = stat_values(_stats(snapshot_id=None, timestamp_millis=None, summary={}))
    assert (values["row_count"], values["data_files"], values["bytes"]) == (0, 0, 0)
    assert values["snapshot_id"] == values["last_modified"] == NO_SNAPSHOT


def test_unpartitioned_and_unsorted_are_named():
    values = stat_values(_stats(transforms=[], sort_order=""))
    assert values["partition_spec"] == "unpartitioned"
    assert values["sort_order"] == "unsorted"


def test_identity_is_written_as_the_column():
    assert partition_field("identity(region)") == "region"
    assert partition_field("truncate(3, s)") == "truncate(3, s)"
    assert partition_field("years(`we ird`)") == "years(`we ird`)"


def test_a_total_missing_from_the_summary_is_left_out_not_guessed():
    summary = {**SUMMARY, "total-records": "5", "total-files-size": "garbage"}
    del summary["total-data-files"]
    stats = _stats(summary=summary)
    assert (stats.row_count, stats.data_files, stats.total_bytes) == (5, None, None)
    columns = catalog_columns(stats)
    assert columns["stats:data_files:include"] is False
    assert columns["stats:row_count:include"] is True
    assert "data_files" not in stats_items(stats)
    assert "bytes" not in stats_items(stats)


def test_position_deletes_are_subtracted_one_row_each():
    stats = _stats(summary={**SUMMARY, "total-records": "1200", "total-position-deletes": "35"})
    assert (stats.row_count, stats.row_count_at_most) == (1165, None)
    assert stat_values(stats)["row_count"] == 1165
    assert "row_count_at_most" not in stats_items(stats)
    assert catalog_columns(stats)["stats:row_count_at_most:include"] is False


def test_equality_deletes_make_the_count_an_upper_bound_the_docs_label():
    stats = _stats(
        summary={
            **SUMMARY,
            "total-position-deletes": "35",
            "total-equality-deletes": "4",
        }
    )
    assert (stats.row_count, stats.row_count_at_most) == (None, 1165)
    items = stats_items(stats)
    assert "row_count" not in items
    assert items["row_count_at_most"].value == 1165
    assert items["row_count_at_most"].label == "Row count (at most)"
    assert "equality deletes" in items["row_count_at_most"].description
    columns = catalog_columns(stats)
    assert columns["stats:row_count:include"] is False
    assert columns["stats:row_count_at_most:value"] == 1165


def test_missing_delete_totals_bound_the_count_rather_than_guess_none():
    only_records = {"total-records": "5", "total-data-files": "1"}
    assert _stats(summary=only_records).row_count is None
    assert _stats(summary=only_records).row_count_at_most == 5
    positions_only = {"total-records": "5", "total-position-deletes": "2"}
    assert (_stats(summary=positions_only).row_count_at_most, _stats().row_count) == (3, 1200)
    assert _stats(summary={"total-records": "0"}).row_count == 0
    assert _stats(summary={}).row_count is None


def test_catalog_columns_have_all_four_parts_of_every_stat():
    columns = catalog_columns(_stats())
    assert len(columns) == 4 * len(STATS)
    assert columns["stats:row_count:label"] == "Row count"
    assert columns["stats:row_count:value"] == 1200
    assert columns["stats:bytes:include"] is True
    assert "total-records" in columns["stats:row_count:description"]


def test_a_view_gets_no_stats():
    columns = catalog_columns(None)
    assert set(columns) == set(catalog_columns(_stats()))
    assert all(value is None for value in columns.values())
    assert stats_items(None) == {}


def test_stats_items_match_the_catalog_columns():
    stats = _stats()
    items = stats_items(stats)
    assert items["has_stats"].value is True
    assert items["has_stats"].include is False
    for stat in STATS:
        if stat.id == "row_count_at_most":  # only with equality deletes
            assert stat.id not in items
            continue
        item = items[stat.id]
        assert item.label == catalog_columns(stats)[f"stats:{stat.id}:label"]
        assert item.value == catalog_columns(stats)[f"stats:{stat.id}:value"]
        assert item.include is True


def test_agate_keeps_text_stats_as_text_and_merges_schemas_of_views_only():
    """A snapshot id, format version and commit time must reach dbt as strings (StatsItem
    takes no datetime, and a 19-digit id would lose digits as a float)."""
    types = build_type_tester(TEXT_COLUMNS)
    table_row = {"table_name": "t", **catalog_columns(_stats())}
    view_row = {"table_name": "v", **catalog_columns(None)}
    tables = agate.Table.from_object([table_row, view_row], column_types=types)
    views_only = agate.Table.from_object([view_row], column_types=types)
    merged = merge_tables([tables, views_only])
    first = dict(zip(merged.column_names, merged.rows[0], strict=True))
    assert first["stats:snapshot_id:value"] == "8412345678901234567"
    assert first["stats:last_modified:value"] == "2026-11-23 10:15:30.123 UTC"
    assert first["stats:format_version:value"] == "2"
    assert first["stats:row_count:value"] == 1200
    assert first["stats:row_count:include"] is True
