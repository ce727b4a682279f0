"""Relation listing: only a missing namespace means "no relations"; any other failure raises."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.adapters.lakehouse.relation import LakehouseRelation


class ListingOnly(LakehouseAdapter):
    """The adapter's listing logic with the catalog's answers given per kind (tables/views)."""

    def __init__(self, answers: dict[str, Any]) -> None:  # no dbt config needed for listing
        self.answers = answers

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
    missing = DbtDatabaseError("[SCHEMA_NOT_FOUND] The schema `analytics` cannot be found.")
    assert ListingOnly({"tables": missing}).list_relations_without_caching(SCHEMA) == []


def test_a_catalog_without_views_still_lists_tables() -> None:
    adapter = ListingOnly(
        {
            "tables": [("analytics", "orders", False)],
            "views": DbtDatabaseError("[MISSING_CATALOG_ABILITY.VIEWS] does not support views"),
        }
    )
    assert [r.identifier for r in adapter.list_relations_without_caching(SCHEMA)] == ["orders"]


@pytest.mark.parametrize(
    "failure",
    [
        "Connection refused: catalog at http://127.0.0.1:1/ is unreachable",
        "NotAuthorizedException: Not authorized",
        "AccessDeniedException: s3://bucket/warehouse",
    ],
)
def test_any_other_failure_raises_instead_of_reading_as_empty(failure: str) -> None:
    adapter = ListingOnly({"tables": DbtDatabaseError(failure), "views": []})
    with pytest.raises(DbtRuntimeError, match="Database Error"):
        adapter.list_relations_without_caching(SCHEMA)
