"""Relation names: catalog.namespace.table, backtick quoting, and the two-part name check."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.relation import LakehouseRelation, split_table_name


def test_three_part_names_are_quoted_with_backticks() -> None:
    relation = LakehouseRelation.create(database="lakehouse", schema="analytics", identifier="t")
    assert relation.render() == "`lakehouse`.`analytics`.`t`"


def test_backticks_inside_a_name_are_doubled() -> None:
    relation = LakehouseRelation.create(database="lh", schema="odd`ns", identifier="a`b")
    assert relation.render() == "`lh`.`odd``ns`.`a``b`"


def test_without_identifier_is_the_namespace() -> None:
    relation = LakehouseRelation.create(database="lh", schema="analytics", identifier="t")
    assert relation.without_identifier().render() == "`lh`.`analytics`"


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("analytics.orders", ("analytics", "orders")),
        ("`analytics`.`orders`", ("analytics", "orders")),
    ],
)
def test_two_part_names(name: str, parts: tuple[str, str]) -> None:
    assert split_table_name(name) == parts


@pytest.mark.parametrize("name", ["orders", "lh.analytics.orders", "analytics.", ".orders", ""])
def test_anything_else_names_the_expected_format(name: str) -> None:
    with pytest.raises(CompilationError) as caught:
        split_table_name(name)
    assert "Table name must be in the format <schema>.<table>" in str(caught.value)
    assert repr(name) in str(caught.value)
