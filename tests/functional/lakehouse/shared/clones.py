"""`dbt clone` in the per-catalog tests: clone a built project's tables into a second schema
(the profile's `clone` target) and read what each node reports and what the clones hold."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from dbt.tests.util import run_dbt


def clone_target(target: dict[str, Any], schema: str) -> dict[str, Any]:
    """The profile output dbt clone writes to: the same depot, the schema `<schema>_clone`."""
    return {**target, "schema": f"{schema}_clone"}


def clone_tables(project: Any, select: list[str]) -> dict[str, str]:
    """`dbt clone` of `select` from the last run's manifest into the `clone` target: each
    node's result message (`CLONE zero-copy` or `CLONE copy`)."""
    project.create_test_schema(f"{project.test_schema}_clone")
    root = Path(project.project_root)
    (root / "state").mkdir(exist_ok=True)
    shutil.copyfile(root / "target" / "manifest.json", root / "state" / "manifest.json")
    results = run_dbt(["clone", "--state", "state", "--target", "clone", "--select", *select])
    return {r.node.name: str(r.message) for r in results}


def clone_rows(project: Any, name: str) -> list[tuple]:
    table = f"`{project.database}`.`{project.test_schema}_clone`.`{name}`"
    project.run_sql(f"refresh table {table}")
    found = project.run_sql(f"select * from {table}", fetch="all")
    return sorted((tuple(r) for r in found), key=repr)


def drop_clone_schema(project: Any) -> None:
    with project.adapter.connection_named("__test"):
        relation = project.adapter.Relation.create(
            database=project.database, schema=f"{project.test_schema}_clone"
        )
        project.adapter.drop_schema(relation)
