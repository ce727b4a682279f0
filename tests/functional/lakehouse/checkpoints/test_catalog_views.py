"""Views over this run's stand-ins created through their Iceberg catalog (checkpoints/
catalog_views.py) store what `CREATE VIEW` stores: two stacks of the same views, `a` over a
checkpointed view (its upper levels written through the catalog) and `b` with no checkpoint (every
level its `CREATE VIEW` statement), hold the same text, schema (names, types, nullability, column
comments, those a view inherits from the one it reads included), column list, properties and
resolution context, and the same rows; a table over a stand-in has the columns it has over the
view, comments included."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE

# The catalog's view objects are read through the driver's JVM.
pytestmark = pytest.mark.only_profile("local")

SEED_CSV = "id,v,label\n1,10,x\n2,20,y\n3,30,z\n"
CREATED = "created through its catalog"
# Level 1 persists its docs (a comment with a quote in it); level 2 reads level 1 twice and
# inherits its columns' comments; level 3 persists its own, for one column of two (the other
# keeps the comment it inherits).
LEVELS = {
    1: "select id, v, label from {{ ref('base') }}\n",
    2: "select id, v, label from {{ ref('#1') }}\n"
    "union all\nselect id, v + 2 as v, label from {{ ref('#1') }}\n",
    3: "-- the top level\nselect id, sum(v) as total from {{ ref('#2') }} group by id\n",
    # A table over level 2 (read through its stand-in in stack a).
    4: "{{ config(materialized='table') }}\nselect id, v from {{ ref('#2') }}\n",
}
DOCS = {
    1: {"description": "level one's rows", "columns": {"id": "the row's id", "v": "a value"}},
    3: {"description": "totals", "columns": {"total": "sum of v"}},
}


def _schema_yml() -> str:
    lines = ["models:"]
    for stack in ("a", "b"):
        for level in LEVELS:
            lines.append(f"  - name: {stack}{level}")
            docs = DOCS.get(level)
            config = {"checkpoint": "true" if stack == "a" else "false"} if level == 1 else {}
            if docs:
                lines.append(f'    description: "{docs["description"]}"')
                lines.append("    columns:")
                for column, text in docs["columns"].items():
                    lines.append(f'      - name: {column}\n        description: "{text}"')
                lines.append("    config:\n      persist_docs: {relation: true, columns: true}")
                for key, value in config.items():
                    lines.append(f"      {key}: {value}")
            elif config:
                lines.append("    config:")
                lines.extend(f"      {key}: {value}" for key, value in config.items())
    return "\n".join(lines) + "\n"


def _stored(database: str, schema: str, view: str) -> dict:
    """What the catalog holds for the view, as Spark's view API reads it."""
    spark = ENGINE.active
    gateway = spark.sparkContext._gateway
    namespace = gateway.new_array(gateway.jvm.java.lang.String, 1)
    namespace[0] = schema
    ident = gateway.jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, view)
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(database)
    loaded = catalog.loadView(ident)
    properties = {str(k): str(v) for k, v in loaded.properties().items()}
    return {
        "sql": str(loaded.query()),
        "catalog": loaded.currentCatalog(),
        "namespace": list(loaded.currentNamespace()),
        "schema": str(loaded.schema().json()),
        "query_columns": list(loaded.queryColumnNames()),
        "aliases": list(loaded.columnAliases()),
        "comments": list(loaded.columnComments()),
        # The reuse record digests the plan, which names its own stack's views.
        "reuse_recorded": properties.pop("lakehouse.build.view", None) is not None,
        "properties": properties,
    }


class TestViewsCreatedThroughTheCatalog:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"base.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        found = {
            f"{stack}{level}.sql": sql.replace("#", stack)
            for stack in ("a", "b")
            for level, sql in LEVELS.items()
        }
        found["schema.yml"] = _schema_yml()
        return found

    def test_store_what_create_view_stores(self, project, logs_dir):
        results = run_dbt(["build"])
        assert all(r.status in ("success", "pass") for r in results), results
        log = (Path(logs_dir) / "dbt.log").read_text()
        through = {
            name
            for name in ("a1", "a2", "a3", "b1", "b2", "b3", "a4", "b4")
            if any(f".{name}: {CREATED}" in line for line in log.splitlines())
        }
        assert through == {"a2", "a3"}
        database, schema = project.database, project.test_schema
        for level in (2, 3):
            ours = _stored(database, schema, f"a{level}")
            statement = _stored(database, schema, f"b{level}")
            ours["sql"] = ours["sql"].replace("`a", "`b")
            location = ours["properties"]["location"]
            ours["properties"]["location"] = location.removesuffix(f"/a{level}") + f"/b{level}"
            assert ours == statement, level
        assert '"comment":"the row\'s id"' in _stored(database, schema, "a2")["schema"]
        # Level 3's `id` keeps the comment it inherits (Iceberg stores the schema's docs as the
        # column comments), `total` has its own, the view its description.
        top = _stored(database, schema, "a3")
        assert top["comments"] == ["the row's id", "sum of v"]
        assert top["properties"]["comment"] == "totals"
        rows = {
            stack: project.run_sql(
                f"select id, total from {database}.{schema}.{stack}3 order by id", fetch="all"
            )
            for stack in ("a", "b")
        }
        # A table over a stand-in has the columns (comments too) it has over the view.
        tables = {
            stack: [
                tuple(r)
                for r in project.run_sql(f"describe {database}.{schema}.{stack}4", fetch="all")
            ]
            for stack in ("a", "b")
        }
        assert tables["a"] == tables["b"] and ("id", "bigint", "the row's id") in tables["a"]
        assert [tuple(r) for r in rows["a"]] == [tuple(r) for r in rows["b"]] == [
            (1, 22), (2, 42), (3, 62)
        ]  # fmt: skip
