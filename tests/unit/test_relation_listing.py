"""Relation listing: only a missing namespace means "no relations"; any other failure raises."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    EmbeddedCatalog,
    connect,
    prepare_catalog,
)
from dbt.adapters.lakehouse.engine.diagnosis import engine_error_type
from dbt.adapters.lakehouse.exceptions import (
    AccessDeniedError,
    CatalogUnreachableError,
    LakehouseDatabaseError,
    NamespaceMissingError,
    ViewsUnsupportedError,
)
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.adapters.lakehouse.relation import LakehouseRelation


class ListingOnly(LakehouseAdapter):
    """The adapter's listing logic with the catalog's answers given per kind (tables/views)."""

    def __init__(self, answers: dict[str, Any], embedded: Any = None) -> None:
        self.answers = answers  # no dbt config needed for listing
        # No manifest: no materialized_view model to type (mv/adapter.py reads it).
        self._macro_resolver = None
        self.spec = SimpleNamespace(embedded_catalog=embedded, is_connect=False)

    def _resolved(self) -> Any:
        return SimpleNamespace(spec=self.spec)

    def execute_macro(self, macro_name: str, kwargs: dict[str, Any] | None = None, **_: Any):
        answer = self.answers[kwargs["kind"]]
        if isinstance(answer, Exception):
            raise answer
        return answer


SCHEMA = LakehouseRelation.create(database="lakehouse", schema="analytics")


def test_tables_and_views_are_listed_and_temp_views_skipped() -> None:
    adapter = ListingOnly(
        {
            "tables": [("analytics", "orders", False)],
            "views": [("analytics", "v_orders", False), ("", "tmp_view", True)],
        }
    )
    listed = {(r.identifier, str(r.type)) for r in adapter.list_relations_without_caching(SCHEMA)}
    assert listed == {("orders", "table"), ("v_orders", "view")}


def test_missing_namespace_means_no_relations() -> None:
    missing = NamespaceMissingError("The schema `analytics` cannot be found.")
    assert ListingOnly({"tables": missing}).list_relations_without_caching(SCHEMA) == []


def test_a_catalog_without_views_still_lists_tables() -> None:
    adapter = ListingOnly(
        {
            "tables": [("analytics", "orders", False)],
            "views": ViewsUnsupportedError("the catalog does not support views"),
        }
    )
    assert [r.identifier for r in adapter.list_relations_without_caching(SCHEMA)] == ["orders"]


@pytest.mark.parametrize(
    "failure",
    [
        CatalogUnreachableError("catalog at http://127.0.0.1:1/ is unreachable"),
        AccessDeniedError("NotAuthorizedException: Not authorized"),
        LakehouseDatabaseError("[SCHEMA_NOT_FOUND] in a message, but not the missing-schema type"),
    ],
)
def test_any_other_failure_raises_instead_of_reading_as_empty(failure: Exception) -> None:
    adapter = ListingOnly({"tables": failure, "views": []})
    with pytest.raises(DbtRuntimeError, match="Database Error"):
        adapter.list_relations_without_caching(SCHEMA)
    # A catalog without views is only "no views", never "no tables".
    adapter = ListingOnly({"tables": ViewsUnsupportedError("no views"), "views": []})
    with pytest.raises(ViewsUnsupportedError):
        adapter.list_relations_without_caching(SCHEMA)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[SCHEMA_NOT_FOUND] The schema `a` cannot be found.", "NamespaceMissingError"),
        ("org.apache.iceberg.exceptions.NoSuchNamespaceException: x", "NamespaceMissingError"),
        ("[TABLE_OR_VIEW_NOT_FOUND] The table or view `t`", "RelationMissingError"),
        (
            "[MISSING_CATALOG_ABILITY.VIEWS] Catalog h does not support VIEWS.",
            "ViewsUnsupportedError",
        ),
        (
            "CommitFailedException: Requirement failed: branch main has changed",
            "CommitConflictError",
        ),
        ("AccessDeniedException: s3a://b/w: getFileStatus on s3a://b/w: 403", "AccessDeniedError"),
        ("NotAuthorizedException: Not authorized: token rejected", "AccessDeniedError"),
        (
            "RESTException: Error occurred while processing GET request\n"
            "caused by: org.apache.hc.client5.http.HttpHostConnectException: refused",
            "CatalogUnreachableError",
        ),
        ("java.lang.RuntimeException: [dbt-lakehouse check] key 7 repeats", "DataCheckError"),
        ("[DIVIDE_BY_ZERO] Division by zero.", "LakehouseDatabaseError"),
    ],
)
def test_engine_errors_are_classified_once_by_type(text: str, expected: str) -> None:
    assert engine_error_type(text).__name__ == expected


def test_the_embedded_catalog_is_listed_from_its_sqlite_rows(tmp_path: Path) -> None:
    """Tables (an old row without a type too) and views of the namespace alone, namespaces as
    SHOW NAMESPACES lists them; the engine is not asked (no answers given)."""
    embedded = EmbeddedCatalog(name="lakehouse", warehouse=tmp_path)
    prepare_catalog(embedded)
    with connect(embedded.database_file) as con:
        con.executemany(
            "INSERT INTO iceberg_tables VALUES ('lakehouse', ?, ?, 'm', NULL, ?)",
            [
                ("analytics", "orders", "TABLE"),
                ("analytics", "v_orders", "VIEW"),
                ("analytics", "legacy", None),
                ("analytics.nested", "deep", "TABLE"),
                ("other", "x", "TABLE"),
            ],
        )
        con.execute(
            "INSERT INTO iceberg_namespace_properties "
            "VALUES ('lakehouse', 'empty', 'exists', 'true')"
        )
    adapter = ListingOnly({}, embedded)
    listed = {(r.identifier, str(r.type)) for r in adapter.list_relations_without_caching(SCHEMA)}
    assert listed == {("orders", "table"), ("v_orders", "view"), ("legacy", "table")}
    assert adapter.list_schemas("`lakehouse`") == ["analytics", "empty", "other"]
    assert adapter.check_schema_exists("lakehouse", "EMPTY")
    assert not adapter.check_schema_exists("lakehouse", "missing")
    missing = LakehouseRelation.create(database="lakehouse", schema="missing")
    assert adapter.list_relations_without_caching(missing) == []
