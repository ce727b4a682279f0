"""`dbt docs generate` gives every Iceberg table the stats its metadata holds (rows, data files,
bytes, current snapshot, last commit, format version, partition spec, sort order), each equal
to what Iceberg's own metadata tables say; a view gets none, and a table created empty says it
has no snapshot."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import current_snapshot, table

# Rows over three days, written in two commits so the totals span snapshots.
EVENTS_SQL = """
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    partition_by=['days(ts)', 'bucket(4, id)'],
    write_order_by=['id'],
) }}
select id, cast(ts as timestamp) as ts from values
{% if is_incremental() %}
  (4, '2024-01-03 08:00:00'), (5, '2024-01-03 09:00:00')
{% else %}
  (1, '2024-01-01 10:00:00'), (2, '2024-01-02 11:00:00'), (3, '2024-01-02 12:00:00')
{% endif %}
as t(id, ts)
"""
EVENTS_VIEW_SQL = "select id from {{ ref('events') }}"
# Merge-on-read: the second run changes one row, which leaves the old row in its data file
# (still in total-records) and a position delete for it.
MOR_SQL = """
{{ config(
    materialized='incremental', incremental_strategy='merge', unique_key='id',
    table_properties={'write.merge.mode': 'merge-on-read'},
) }}
{% if is_incremental() %}
select 2 as id, 'changed' as v
{% else %}
select id, 'first' as v from values (1), (2), (3) as t(id)
{% endif %}
"""
SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: landing_empty
"""


def _commit_time(text: str) -> int:
    """The catalog's `last_modified` value as epoch milliseconds."""
    at = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f UTC").replace(tzinfo=dt.timezone.utc)
    return round(at.timestamp() * 1000)


class TestDocsCatalogStats:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "events.sql": EVENTS_SQL,
            "events_view.sql": EVENTS_VIEW_SQL,
            "mor.sql": MOR_SQL,
            "sources.yml": SOURCES_YML,
        }

    def test_stats_equal_iceberg_metadata(self, project):
        project.run_sql(f"create table {table(project, 'landing_empty')} (id bigint) using iceberg")
        run_dbt(["run"])
        run_dbt(["run"])  # the incremental append: a second commit
        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        nodes, sources = catalog["nodes"], catalog["sources"]

        stats = nodes["model.test.events"]["stats"]
        events = table(project, "events")
        snapshot_id = current_snapshot(project, "events")
        summary_rows, summary_files, summary_bytes, committed_ms = project.run_sql(
            "select summary['total-records'], summary['total-data-files'], "
            "summary['total-files-size'], unix_millis(committed_at) "
            f"from {events}.snapshots where snapshot_id = {snapshot_id}",
            fetch="one",
        )
        files, size = project.run_sql(
            f"select count(*), sum(file_size_in_bytes) from {events}.files", fetch="one"
        )
        count = project.run_sql(f"select count(*) from {events}", fetch="one")[0]
        data_files = project.run_sql(
            f"select count(*) from {events}.files where content = 0", fetch="one"
        )[0]

        assert stats["row_count"]["value"] == count == int(summary_rows) == 5
        assert stats["data_files"]["value"] == data_files == files == int(summary_files)
        assert files >= 3  # one per day and bucket at least
        assert stats["bytes"]["value"] == size == int(summary_bytes)
        assert stats["snapshot_id"]["value"] == str(snapshot_id)
        assert _commit_time(stats["last_modified"]["value"]) == committed_ms
        assert stats["format_version"]["value"] == "2"
        assert stats["partition_spec"]["value"] == "days(ts), bucket(4, id)"
        assert stats["sort_order"]["value"] == "id ASC NULLS FIRST"
        assert stats["has_stats"]["value"] is True
        for stat in ("row_count", "bytes", "snapshot_id", "last_modified", "partition_spec"):
            assert stats[stat]["include"] is True
            assert stats[stat]["label"] and stats[stat]["description"]

        # A position delete removes one row: the count is total-records less the deletes.
        mor = nodes["model.test.mor"]["stats"]
        records, positions = project.run_sql(
            "select summary['total-records'], summary['total-position-deletes'] from "
            f"{table(project, 'mor')}.snapshots where snapshot_id = "
            f"{current_snapshot(project, 'mor')}",
            fetch="one",
        )
        assert (int(records), int(positions)) == (4, 1)
        mor_count = project.run_sql(f"select count(*) from {table(project, 'mor')}", "one")[0]
        assert mor["row_count"]["value"] == mor_count == 3
        assert "row_count_at_most" not in mor

        view = nodes["model.test.events_view"]
        assert view["metadata"]["type"] == "view"
        assert set(view["stats"]) == {"has_stats"}
        assert view["stats"]["has_stats"]["value"] is False

        empty = sources["source.test.raw.landing_empty"]["stats"]
        assert empty["row_count"]["value"] == 0
        assert empty["data_files"]["value"] == 0
        assert empty["snapshot_id"]["value"] == "none (no snapshot yet)"
        assert empty["partition_spec"]["value"] == "unpartitioned"
        assert empty["sort_order"]["value"] == "unsorted"
