"""dbt's own materialized-view suite (dbt-tests-adapter `materialized_view/basic.py`), with the
four hooks it leaves to the adapter. `materialized_view/changes.py` does not apply: it needs an
ALTER path for some setting changes, and every setting change here is a rebuild
(docs/materialized-views.md). On `local` only: its steps replace relations of one type by
another and count rows, the same on any catalog; on `s3_rest`, test_relations.py's
TestChangeRelationTypes replaces tables and views through the REST catalog, and
test_materialized_views_rest.py's TestMaterializedViewOnRestCatalog commits and reads a view's
record there through every kind of refresh."""

from __future__ import annotations

import pytest
from dbt.adapters.base.relation import BaseRelation
from dbt.tests.adapter.materialized_view.basic import MaterializedViewBasic
from dbt.tests.util import get_connection, get_model_file, run_dbt, set_model_file

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv import metadata
from dbt.adapters.lakehouse.mv.reading import foreign_writer, holds_build
from dbt.adapters.lakehouse.mv.state import recorded_of


def _name(relation: BaseRelation) -> str:
    return f"`{relation.database}`.`{relation.schema}`.`{relation.identifier}`"


@pytest.mark.only_profile("local")
class TestMaterializedViewBasic(MaterializedViewBasic):
    @pytest.fixture(scope="function", autouse=True)
    def setup(self, project, my_materialized_view):
        # The suite's own setup, but for its last step: it runs `drop schema ... cascade`,
        # which Iceberg's Spark catalog refuses for a namespace holding tables, so the schema
        # is dropped the adapter's way, its relations first (as test_simple_seed.py does).
        run_dbt(["seed"])
        run_dbt(["run", "--models", my_materialized_view.identifier, "--full-refresh"])
        initial_model = get_model_file(project, my_materialized_view)
        yield
        set_model_file(project, my_materialized_view, initial_model)
        relation = project.adapter.Relation.create(
            database=project.database, schema=project.test_schema
        )
        with get_connection(project.adapter):
            project.adapter.drop_schema(relation)

    @staticmethod
    def insert_record(project, table: BaseRelation, record: tuple[int, int]) -> None:
        project.run_sql(f"insert into {_name(table)} values {record}")

    @staticmethod
    def refresh_materialized_view(project, materialized_view: BaseRelation) -> None:
        run_dbt(["run", "--models", str(materialized_view.identifier)])

    @staticmethod
    def query_row_count(project, relation: BaseRelation) -> int:
        project.run_sql(f"refresh table {_name(relation)}")
        return int(project.run_sql(f"select count(*) from {_name(relation)}", fetch="one")[0])

    @staticmethod
    def query_relation_type(project, relation: BaseRelation) -> str | None:
        """From the catalog, as dbt-postgres reads pg_class: a view, else a table whose main
        holds a materialized view's build (mv/reading.py), else a table."""
        views = project.run_sql(
            f"show views in `{relation.database}`.`{relation.schema}` like '{relation.identifier}'",
            fetch="all",
        )
        if views:
            return "view"
        project.run_sql(f"refresh table {_name(relation)}")
        table = TableName(str(relation.database), str(relation.schema), str(relation.identifier))
        # Through the metadata tables (no JVM handed over): a reading apart from the refresh's.
        read = metadata.reader(None, lambda sql: project.run_sql(sql, fetch="all"))
        held = holds_build(read, table)
        if not held and recorded_of(read(table).properties).is_view:
            # A table over a former view keeps its properties (CREATE OR REPLACE): its rows'
            # commit names the model that wrote them, so `mv status` says so (mv/reading.py).
            assert str(foreign_writer(read, table)).endswith(f".{relation.identifier}")
        return "materialized_view" if held else "table"
