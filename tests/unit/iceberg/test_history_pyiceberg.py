"""`dbt-lakehouse history` without a JVM: a table's commits read by pyiceberg from its metadata,
on a real SQLite catalog (pyiceberg's SqlCatalog, as the embedded lakehouse's) in a temporary
folder."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from dbt.adapters.lakehouse.iceberg.history import (
    history_rows,
    main_ancestors,
    table_commits,
)


def test_commits_counts_and_main_from_the_metadata(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "lakehouse",
        uri=f"sqlite:///{tmp_path / 'iceberg.db'}",
        warehouse=tmp_path.as_uri(),
    )
    catalog.create_namespace("jaffle")
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    table = catalog.create_table("jaffle.t", schema=rows.schema)
    table.append(rows)
    table.append(rows.slice(0, 1))
    table.overwrite(rows.slice(0, 2))
    # A branch off the first append: its snapshot is no ancestor of main.
    first = table.metadata.snapshots[0].snapshot_id
    table.manage_snapshots().create_branch(first, "audit_x").commit()
    table = catalog.load_table("jaffle.t")

    commits, main_head = table_commits(table)
    assert main_head == table.metadata.refs["main"].snapshot_id
    assert [c.operation for c in sorted(commits, key=lambda c: c.committed_at)][:2] == [
        "append",
        "append",
    ]
    assert all("operation" not in c.summary for c in commits)
    by_id = {c.snapshot_id: c for c in commits}
    assert by_id[first].parent_id is None and by_id[first].summary["added-records"] == "3"
    main = main_ancestors(commits, main_head)
    assert main == set(by_id)  # the branch points at a main snapshot, made no new one
    printed = history_rows(commits, main)
    # Newest first: the overwrite (as pyiceberg writes it: a delete, then an append).
    assert printed[-1][1] == str(first) and printed[-1][3] == "+3/-0"
    assert printed[0][1] == str(main_head) and all(row[5] == "yes" for row in printed)
    assert sum(int(row[3].split("/")[0][1:]) for row in printed) == 3 + 1 + 2


def test_a_table_with_no_commit_has_none(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "lakehouse", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=tmp_path.as_uri()
    )
    catalog.create_namespace("s")
    table = catalog.create_table("s.empty", schema=pa.schema([("id", pa.int64())]))
    assert table_commits(table) == ([], None)
