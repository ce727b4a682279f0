"""Reading Iceberg tables back in tests: exact rows (order-independent) and snapshot ids."""

from __future__ import annotations


def table(project, name: str) -> str:
    return f"`{project.database}`.`{project.test_schema}`.`{name}`"


def rows(project, name: str, columns: str = "*") -> list[tuple]:
    project.run_sql(f"refresh table {table(project, name)}")
    found = project.run_sql(f"select {columns} from {table(project, name)}", fetch="all")
    return sorted((tuple(r) for r in found), key=repr)


def snapshot_count(project, name: str) -> int:
    project.run_sql(f"refresh table {table(project, name)}")
    return project.run_sql(f"select count(*) from {table(project, name)}.snapshots", fetch="one")[0]


def current_snapshot(project, name: str) -> int:
    project.run_sql(f"refresh table {table(project, name)}")
    return project.run_sql(
        f"select snapshot_id from {table(project, name)}.history where is_current_ancestor "
        "order by made_current_at desc limit 1",
        fetch="one",
    )[0]


def expect(found: list[tuple], expected: list[tuple]) -> None:
    assert found == sorted(expected, key=repr)
