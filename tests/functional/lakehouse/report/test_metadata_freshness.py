"""`dbt source freshness` without `loaded_at_field` reports the commit time of the source
table's current snapshot, read from its metadata with no SQL sent: it moves when a commit
lands, and a read or a second check leaves it where it was. A source with `loaded_at_field`
still takes max() of that column; a view source fails saying why."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from functional.lakehouse.shared.tables import current_snapshot, table

SOURCES_YML = """
sources:
  - name: raw
    schema: "{{ target.schema }}"
    config:
      freshness:
        warn_after: {count: 1, period: day}
    tables:
      - name: landing
      - name: stamped
        config:
          loaded_at_field: loaded_at
      - name: landing_view
"""
LANDING = "source:raw.landing"


def _freshness(project, *select: str) -> dict[str, dict]:
    run_dbt(["source", "freshness", "--select", *select])
    found = json.loads((Path(project.project_root) / "target" / "sources.json").read_text())
    return {r["unique_id"].rsplit(".", 1)[1]: r for r in found["results"]}


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=dt.timezone.utc)


def _committed_at(project, name: str) -> dt.datetime:
    """The current snapshot's commit time, from the `snapshots` metadata table."""
    snapshot_id = current_snapshot(project, name)
    millis = project.run_sql(
        f"select unix_millis(committed_at) from {table(project, name)}.snapshots "
        f"where snapshot_id = {snapshot_id}",
        fetch="one",
    )[0]
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=millis)


def _statements_of_last_run(logs_dir: str, node: str) -> list[str]:
    """The SQL dbt logged on `node`'s connection in the last invocation (dbt.log)."""
    log = (Path(logs_dir) / "dbt.log").read_text(errors="replace")
    last = log.rsplit("Running with dbt=", 1)[-1]
    return [line for line in last.splitlines() if f"On {node}: " in line]


class TestMetadataFreshness:
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML}

    def test_freshness_follows_commits_only(self, project, logs_dir):
        landing, stamped = table(project, "landing"), table(project, "stamped")
        project.run_sql(f"create table {landing} (id bigint) using iceberg")
        project.run_sql(f"insert into {landing} values (1), (2)")
        project.run_sql(f"create table {stamped} (id bigint, loaded_at timestamp) using iceberg")
        project.run_sql(
            f"insert into {stamped} values (1, timestamp'2024-05-01 12:30:00'), "
            "(2, timestamp'2024-05-02 08:00:00')"
        )
        project.run_sql(f"create view {table(project, 'landing_view')} as select * from {landing}")

        first = _freshness(project, LANDING, "source:raw.stamped")
        assert _at(first["landing"]["max_loaded_at"]) == _committed_at(project, "landing")
        assert first["landing"]["status"] == "pass"
        assert _statements_of_last_run(logs_dir, "source.test.raw.landing") == []
        # loaded_at_field: max() of the column, as before.
        assert _at(first["stamped"]["max_loaded_at"]) == dt.datetime(
            2024, 5, 2, 8, tzinfo=dt.timezone.utc
        )
        assert first["stamped"]["status"] == "warn"

        # A read and a second check commit nothing: the same time.
        assert project.run_sql(f"select count(*) from {landing}", fetch="one")[0] == 2
        again = _freshness(project, LANDING)
        assert again["landing"]["max_loaded_at"] == first["landing"]["max_loaded_at"]

        # A commit moves it to the new snapshot's time.
        project.run_sql(f"insert into {landing} values (3)")
        moved = _freshness(project, LANDING)
        assert _at(moved["landing"]["max_loaded_at"]) == _committed_at(project, "landing")
        assert _at(moved["landing"]["max_loaded_at"]) > _at(first["landing"]["max_loaded_at"])

        # A view has no snapshots: that source fails, saying so.
        (view,) = run_dbt(
            ["source", "freshness", "--select", "source:raw.landing_view"], expect_pass=False
        )
        assert view.status == "runtime error"
        assert "is a view (views have no snapshots)" in view.message
