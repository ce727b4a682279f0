"""A materialized view's record (docs/materialized-views.md): the upstream snapshots it was built
from, in its table properties and in the summary of the commit `main` points at; for the
materialized-view tests (test_materialized_views*.py)."""

from __future__ import annotations

import json

from functional.lakehouse.shared.tables import table


def properties(project, name: str) -> dict[str, str]:
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(f"show tblproperties {table(project, name)}", fetch="all")
    return {str(k): str(v) for k, v in found if str(k).startswith("lakehouse.mv.")}


def main_head(project, name: str) -> str:
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(
        f"select snapshot_id from {table(project, name)}.refs where name = 'main'", fetch="one"
    )
    return str(found[0])


def committed_record(project, name: str) -> dict[str, str]:
    """The record in the summary of the commit `main` of the view points at."""
    view = table(project, name)
    project.run_sql(f"refresh table {view}")
    found = project.run_sql(
        "select to_json(map_filter(s.summary, (k, v) -> startswith(k, 'lakehouse.mv.'))) "
        f"from {view}.snapshots s join {view}.refs r on r.snapshot_id = s.snapshot_id "
        "where r.name = 'main'",
        fetch="one",
    )
    return json.loads(found[0])


def upstream_key(project, name: str) -> str:
    return f"lakehouse.mv.upstream.{project.database}.{project.test_schema}.{name}"
