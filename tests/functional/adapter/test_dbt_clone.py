"""dbt-tests-adapter `dbt_clone/` suite, and what a zero-copy clone must never do.

dbt's suite and the isolation check run on `local` (the embedded lakehouse's jdbc catalog
registers tables, so its tables are zero-copy clones); `s3_rest` clones through the REST
catalog. The other catalog types (zero-copy on jdbc, glue and nessie, a copy on hadoop) are
checked in tests/functional/lakehouse/catalogs/test_catalogs.py and test_nessie_catalog.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dbt.tests.adapter.dbt_clone.test_dbt_clone import (
    BaseClonePossible,
    BaseCloneSameSourceAndTarget,
    BaseCloneSameTargetAndState,
)
from dbt.tests.adapter.dbt_clone.test_dbt_clone import (
    TestPostgresCloneNotPossible as DbtCloneNotPossible,
)
from dbt.tests.util import run_dbt, run_dbt_and_capture

from functional.lakehouse.shared.clones import clone_rows, clone_tables, clone_target
from functional.lakehouse.shared.tables import expect

LOCAL = pytest.mark.only_profile("local")


class _DropSchemas:
    """dbt's suite leaves the `_seeds` and `_other` schemas behind (its own NotPossible class
    drops them): each class here drops what it made."""

    @pytest.fixture(autouse=True)
    def clean_up(self, project, other_schema):
        yield
        with project.adapter.connection_named("__test"):
            for schema in (f"{project.test_schema}_seeds", other_schema):
                relation = project.adapter.Relation.create(database=project.database, schema=schema)
                project.adapter.drop_schema(relation)


@LOCAL
class TestClonePossible(_DropSchemas, BaseClonePossible):
    def test_clone_modes_are_reported(self, project, unique_schema, other_schema):
        project.create_test_schema(other_schema)
        self.run_and_save_state(project.project_root, with_snapshot=True)
        run_dbt(["clone", "--state", "state", "--target", "otherschema"])
        messages = {
            r["unique_id"].split(".")[-1]: r["message"]
            for r in json.loads(Path("target/run_results.json").read_text())["results"]
        }
        assert messages["table_model"] == "CLONE zero-copy"
        assert messages["my_cool_snapshot"] == "CLONE zero-copy"
        assert messages["seed"] == "CLONE zero-copy"
        assert messages["view_model"] == "CREATE VIEW"  # a view is cloned as a view


@LOCAL
class TestCloneNotPossible(DbtCloneNotPossible):
    pass


@LOCAL
class TestCloneSameSourceAndTarget(BaseCloneSameSourceAndTarget):
    pass


@LOCAL
class TestCloneSameTargetAndState(_DropSchemas, BaseCloneSameTargetAndState):
    pass


SOURCE_SQL = """
{{ config(materialized='table', partition_by=['bucket(4, id)']) }}
{% if var('version', 1) == 1 %}
select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, s)
{% else %}
select * from values (1, 'A'), (4, 'd') as t(id, s)
{% endif %}
"""
FIRST = [(1, "a"), (2, "b"), (3, "c")]
SECOND = [(1, "A"), (4, "d")]


def _files(root: Path) -> dict[str, int]:
    """Every file under a table's folder with its size."""
    return {
        str(path): path.stat().st_size
        for path in root.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }


@LOCAL
class TestZeroCopyCloneIsolation:
    """A clone and its source share data files: neither's writes, compaction or expiry may
    touch the other's rows or files."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"source_table.sql": SOURCE_SQL}

    @pytest.fixture(scope="class")
    def other_schema(self, unique_schema):
        return unique_schema + "_dev"

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema, other_schema):
        prod = {**dbt_profile_target, "schema": unique_schema}
        dev = {**dbt_profile_target, "schema": other_schema}
        return {"test": {"outputs": {"default": prod, "dev": dev}, "target": "default"}}

    def _rows(self, project, schema: str) -> list[tuple]:
        table = f"`{project.database}`.`{schema}`.`source_table`"
        project.run_sql(f"refresh table {table}")
        found = project.run_sql(f"select * from {table}", fetch="all")
        return sorted((tuple(r) for r in found), key=repr)

    def _maintain(self, target: str) -> str:
        args = {
            "select": ["source_table"],
            "operations": ["compaction", "snapshot_expiry", "orphan_cleanup"],
            "compaction": {"min_input_files": 1},
            "snapshot_expiry": {"retain_days": 0, "retain_last": 1},
            "orphan_cleanup": {"older_than_days": 1},
        }
        _, out = run_dbt_and_capture(
            ["run-operation", "lakehouse_maintain", "--target", target, "--args", json.dumps(args)]
        )
        return out

    def test_clone_and_source_leave_each_other_alone(self, project, other_schema):
        warehouse = Path(project.adapter.config.credentials.warehouse)
        source_root = warehouse / project.test_schema / "source_table"
        clone_root = warehouse / other_schema / "source_table"
        project.create_test_schema(other_schema)
        run_dbt(["run"])
        os.makedirs("state", exist_ok=True)
        Path("state/manifest.json").write_text(Path("target/manifest.json").read_text())
        run_dbt(["clone", "--state", "state", "--target", "dev"])
        expect(self._rows(project, other_schema), FIRST)
        source_files = _files(source_root)

        # The clone changes, compacts and expires: the source keeps its rows and every file.
        project.run_sql(
            f"insert into `{project.database}`.`{other_schema}`.`source_table` values (9, 'dev')"
        )
        out = self._maintain("dev")
        assert "may share files with another table" in out, out
        expect(self._rows(project, other_schema), [*FIRST, (9, "dev")])
        expect(self._rows(project, project.test_schema), FIRST)
        assert _files(source_root) == source_files
        assert not any(str(clone_root) in path for path in source_files)

        # The source is rebuilt, compacted, expired and cleaned of orphans: the clone keeps its
        # rows, since the tag the clone put on the source keeps the files it reads.
        run_dbt(["run", "--vars", "{version: 2}"])
        self._maintain("default")
        expect(self._rows(project, project.test_schema), SECOND)
        expect(self._rows(project, other_schema), [*FIRST, (9, "dev")])
        assert set(source_files) <= set(_files(source_root))

        # A re-clone replaces the clone with the source as it is now, and moves the tag.
        Path("state/manifest.json").write_text(Path("target/manifest.json").read_text())
        run_dbt(["clone", "--state", "state", "--target", "dev", "--full-refresh"])
        expect(self._rows(project, other_schema), SECOND)
        tags = project.run_sql(
            f"select name from `{project.database}`.`{project.test_schema}`.`source_table`.refs "
            "where type = 'TAG'",
            fetch="all",
        )
        assert [t[0] for t in tags] == [f"dbt-clone:{project.database}.{other_schema}.source_table"]


@pytest.mark.only_profile("s3_rest", "connect")
class TestCloneOnRestCatalog:
    """The REST catalog registers the clone: zero-copy, its source tagged, its rows the same;
    under Spark Connect too (every step is SQL)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"source_table.sql": SOURCE_SQL}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema):
        outputs = {
            "default": {**dbt_profile_target, "schema": unique_schema},
            "clone": clone_target(dbt_profile_target, unique_schema),
        }
        return {"test": {"outputs": outputs, "target": "default"}}

    def test_clone_is_zero_copy(self, project):
        run_dbt(["run"])
        assert clone_tables(project, ["source_table"]) == {"source_table": "CLONE zero-copy"}
        expect(clone_rows(project, "source_table"), FIRST)
        clone = f"`{project.database}`.`{project.test_schema}_clone`.`source_table`"
        files = project.run_sql(f"select file_path from {clone}.files", fetch="all")
        assert files and all(f"/{project.test_schema}/" in f[0] for f in files)  # shared
        properties = dict(project.run_sql(f"show tblproperties {clone}", fetch="all"))
        assert properties["gc.enabled"] == "false"
        # Its own folder, where the catalog places a table of the clone's name.
        assert f"{project.test_schema}_clone" in properties["write.data.path"]
