"""dbt-tests-adapter `catalog/` suite: relation types in `dbt docs generate`'s catalog.

The suite's own docstring asks adapters to configure it: this adapter builds no materialized
views (no such materialization), and its catalog names relation types as dbt-spark does,
`table` and `view` (not Postgres's `BASE TABLE` and `VIEW`), so the models and expected
types are given here (data only).
"""

from __future__ import annotations

import pytest
from dbt.artifacts.schemas.catalog import CatalogArtifact
from dbt.tests.adapter.catalog import files
from dbt.tests.adapter.catalog.relation_types import CatalogRelationTypes

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestCatalogRelationTypes(CatalogRelationTypes):
    @pytest.fixture(scope="class", autouse=True)
    def models(self):
        yield {"my_table.sql": files.MY_TABLE, "my_view.sql": files.MY_VIEW}

    @pytest.mark.parametrize(
        "node_name,relation_type",
        [
            ("seed.test.my_seed", "table"),
            ("model.test.my_table", "table"),
            ("model.test.my_view", "view"),
        ],
    )
    def test_relation_types_populate_correctly(
        self, docs: CatalogArtifact, node_name: str, relation_type: str
    ):
        super().test_relation_types_populate_correctly(docs, node_name, relation_type)
