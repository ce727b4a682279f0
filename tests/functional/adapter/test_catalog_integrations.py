"""dbt-tests-adapter `catalog_integrations/` suite: catalogs.yml written by dbt's own base class
(v1, and v2 through the project's `use_catalogs_v2` flag); a model with `catalog_name` is
written into that catalog (a hadoop catalog on a folder of the project), a model without one
reads it from the profile's catalog, over a run and a rerun. The storage and catalog kinds are
tests/functional/lakehouse/catalogs/test_catalogs_yml.py's (both profiles); this runs on `local`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.config import catalogs as dbt_catalogs
from dbt.tests.adapter.catalog_integrations.test_catalog_integration import (
    BaseCatalogIntegrationValidation,
)
from dbt.tests.util import run_dbt

pytestmark = pytest.mark.only_profile("local")

IN_CATALOG = """
{{ config(materialized='table', catalog_name='lake') }}
select * from values (1, 'a'), (2, 'b') as t(id, v)
"""
READER = """
{{ config(materialized='table') }}
select id * 10 as id, v from {{ ref('in_catalog') }}
"""


class TestCatalogIntegrationLakehouse(BaseCatalogIntegrationValidation):
    @pytest.fixture(scope="class")
    def catalogs(self) -> dict[str, Any]:
        return {
            "catalogs": [
                {
                    "name": "lake",
                    "active_write_integration": "lake_hadoop",
                    "write_integrations": [
                        {
                            "name": "lake_hadoop",
                            "catalog_type": "hadoop",
                            "table_format": "iceberg",
                            "external_volume": "lake_files",
                        }
                    ],
                }
            ]
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"in_catalog.sql": IN_CATALOG, "reader.sql": READER}

    def test_a_model_writes_into_its_catalog(self, project) -> None:
        for _ in range(2):  # a run and a rerun (a replace of each table)
            results = run_dbt(["run"])
            where = {r.node.name: r.node.database for r in results}
            assert where == {"in_catalog": "lake", "reader": project.database}
            # project.adapter is the last command's: it has the catalog mounted.
            found = project.run_sql(
                f"select id, v from `lake`.`{project.test_schema}`.`in_catalog` order by id",
                fetch="all",
            )
            assert [tuple(r) for r in found] == [(1, "a"), (2, "b")]
            found = project.run_sql(
                f"select id from {project.test_schema}.reader order by id", fetch="all"
            )
            assert [tuple(r) for r in found] == [(10,), (20,)]
        table = Path(project.project_root) / "lake_files" / project.test_schema / "in_catalog"
        assert list((table / "metadata").glob("*.metadata.json"))


@pytest.mark.skipif(
    not hasattr(dbt_catalogs, "load_catalogs_v2"), reason="catalogs.yml v2 is dbt-core 1.12's"
)
class TestCatalogIntegrationLakehouseV2(TestCatalogIntegrationLakehouse):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return {"flags": {"use_catalogs_v2": True}}

    @pytest.fixture(scope="class")
    def catalogs(self) -> dict[str, Any]:
        return {
            "catalogs": [
                {
                    "name": "lake",
                    "type": "hadoop",
                    "table_format": "iceberg",
                    "config": {"lakehouse": {"external_volume": "lake_files"}},
                }
            ]
        }
