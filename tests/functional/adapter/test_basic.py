"""dbt's own adapter suite (dbt-tests-adapter `basic/` and the incremental unique-key tests).

Overrides are data only: the Spark type names the suite cannot know (bigint, string,
timestamp), and the catalog owner: Spark records its user as a table's owner, while an Iceberg
view carries no owner at all, so views are expected with none. One behaviour differs on
purpose: the suite assumes unique keys "are not applied on first run"; here a first run
applies them as an incremental run does (a model's rows never depend on whether its table
existed), so the cases built on that assumption assert the refusal instead.
"""

from __future__ import annotations

import getpass

import pytest
from dbt.adapters.factory import get_adapter_by_type
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_get_catalog_for_single_relation import (
    BaseGetCatalogForSingleRelation,
)
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_table_materialization import BaseTableMaterialization
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_unique_id import (
    BaseIncrementalUniqueKey,
    seeds__seed_csv,
)
from dbt.tests.util import get_connection, run_dbt
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, TableMetadata

from dbt.adapters.lakehouse.iceberg.catalog_stats import STATS

SPARK_TYPES = {
    "id_type": "bigint",
    "text_type": "string",
    "time_type": "timestamp",
    "view_type": "view",
    "table_type": "table",
}


# What these check is SQL semantics and dbt's flow, the same whichever catalog and storage hold
# the tables: they run on the embedded lakehouse only (CI time; docs/tests.md). The classes
# left on every profile list, describe and catalog relations, which each catalog does its way.
SQL_ONLY = pytest.mark.only_profile("local")


class IcebergTableStats:
    """Equal to the stats of an Iceberg table in the catalog (tablestats.py): every stat there
    included, but for the row count, which is exact (`row_count`) or, with equality deletes,
    a bound (`row_count_at_most`): one of the two. Their values depend on the run;
    test_docs_stats.py checks them."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return NotImplemented
        items = {k: v if isinstance(v, dict) else v.to_dict() for k, v in other.items()}
        every = {stat.id for stat in STATS}
        included = {k for k, v in items.items() if k in every and v["include"] is True}
        return (
            set(items) <= every | {"has_stats"}
            and items.get("has_stats", {}).get("value") is True
            and included in (every - {"row_count_at_most"}, every - {"row_count"})
        )

    def __repr__(self) -> str:
        return "<the stats of an Iceberg table>"


@pytest.fixture(scope="class")
def profile_user() -> str:
    # Iceberg records the Spark user as the table owner.
    return getpass.getuser()


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


@SQL_ONLY
class TestSingularTests(BaseSingularTests):
    pass


@SQL_ONLY
class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


@SQL_ONLY
class TestEmpty(BaseEmpty):
    pass


@SQL_ONLY
class TestEphemeral(BaseEphemeral):
    pass


@SQL_ONLY
class TestIncremental(BaseIncremental):
    pass


@SQL_ONLY
class TestGenericTests(BaseGenericTests):
    pass


# dbt's basic suite also has BaseSnapshotCheckCols and BaseSnapshotTimestamp: the check and
# timestamp strategies that test_snapshot.py runs in dbt's own snapshot suite (TestSnapshotCheck,
# TestSimpleSnapshot), with more cases; run twice they cost CI a minute for no other claim.


class TestAdapterMethod(BaseAdapterMethod):
    pass


@SQL_ONLY
class TestTableMaterialization(BaseTableMaterialization):
    pass


class TestValidateConnection(BaseValidateConnection):
    pass


def _single_catalog(project, name: str, kind: str, owner: str | None) -> CatalogTable:
    columns = [
        ("id", "bigint"),
        ("first_name", "string"),
        ("email", "string"),
        ("ip_address", "string"),
        ("updated_at", "timestamp"),
    ]
    return CatalogTable(
        metadata=TableMetadata(
            type=kind,
            schema=project.test_schema,
            name=name,
            database=project.database,
            comment=None,
            owner=owner,
        ),
        columns={
            col: ColumnMetadata(type=dtype, index=i, name=col, comment=None)
            for i, (col, dtype) in enumerate(columns, start=1)
        },
        stats=IcebergTableStats() if kind == "table" else {},  # type: ignore[arg-type]
    )


class TestGetCatalogForSingleRelation(BaseGetCatalogForSingleRelation):
    @pytest.fixture(scope="class")
    def expected_catalog_my_seed(self, project, profile_user):
        return _single_catalog(project, "my_seed", "table", profile_user)

    @pytest.fixture(scope="class")
    def expected_catalog_my_view_model(self, project, profile_user):
        return _single_catalog(project, "my_view_model", "view", None)


# Spark's ANSI store assignment refuses a string literal into a DATE column, so the suite's
# own seed-update SQL spells the date as a DATE literal; rows and keys are unchanged.
_DUPLICATE_INSERT = """
insert into {schema}.seed (state, county, city, last_visit_date)
values ('CT','Hartford','Hartford',date'2022-02-14');
"""
_ADD_NEW_ROWS = """
insert into {schema}.seed (state, county, city, last_visit_date)
values ('WA','King','Seattle',date'2022-02-01');

insert into {schema}.seed (state, county, city, last_visit_date)
values ('CA','Los Angeles','Los Angeles',date'2022-02-01');
"""


@pytest.mark.only_profile("local")
class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "duplicate_insert.sql": _DUPLICATE_INSERT,
            "seed.csv": seeds__seed_csv,
            "add_new_rows.sql": _ADD_NEW_ROWS,
        }

    def fail_to_build_inc_missing_unique_key_column(self, incremental_model_name):
        # A unique_key naming no column fails the first build already, before writing.
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        result = run_dbt(
            ["run", "--select", incremental_model_name, "--full-refresh"], expect_pass=False
        ).results[0]
        assert "is not one of its columns" in result.message
        assert _relation_missing(incremental_model_name)
        return result.status, result.message

    def _first_build_refuses_repeated_state(self, model: str, key: str, values: str) -> None:
        # The seed holds two NY rows: a merge on `state` would keep one of them on an
        # incremental run, so the first build refuses them the same way, writing nothing.
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        result = run_dbt(["run", "--select", model], expect_pass=False).results[0]
        assert result.status == RunStatus.Error
        assert f"the new rows hold 2 rows for unique_key ({key}) = ({values})" in result.message
        assert "SQLSTATE" not in result.message  # Spark 4's suffix is not the check's message
        assert _relation_missing(model)

    def test__one_unique_key(self, project):
        self._first_build_refuses_repeated_state("str_unique_key", "state", "NY")

    def test__unary_unique_key_list(self, project):
        self._first_build_refuses_repeated_state("unary_unique_key_list", "state", "NY")

    def test__duplicated_unary_unique_key_list(self, project):
        self._first_build_refuses_repeated_state(
            "duplicated_unary_unique_key_list", "state, state", "NY, NY"
        )


def _relation_missing(name: str) -> bool:
    adapter = get_adapter_by_type("lakehouse")
    credentials = adapter.config.credentials
    with get_connection(adapter):
        _, found = adapter.execute(
            f"show tables in `{credentials.database}`.`{credentials.schema}` like '{name}'",
            fetch=True,
        )
    return len(found) == 0


@SQL_ONLY
class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


def _views_without_owner(catalog: dict) -> dict:
    for section in ("nodes", "sources"):
        for node in catalog[section].values():
            if node["metadata"]["type"] == "view":
                node["metadata"]["owner"] = None
    return catalog


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user):
        return _views_without_owner(
            expected_catalog.base_expected_catalog(
                project,
                role=profile_user,
                model_stats=expected_catalog.no_stats(),
                seed_stats=IcebergTableStats(),
                **SPARK_TYPES,
            )
        )


@SQL_ONLY
class TestDocsGenReferences(BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user):
        return _views_without_owner(
            expected_catalog.expected_references_catalog(
                project,
                role=profile_user,
                bigint_type="bigint",
                model_stats=IcebergTableStats(),
                view_summary_stats=expected_catalog.no_stats(),
                **SPARK_TYPES,
            )
        )
