"""TableName.of names the table a relation's statements write, case folding included."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.relation import LakehouseRelation


@pytest.mark.parametrize(
    ("quoting", "expected"),
    [
        # The default quote policy keeps a name's case: `MODEL` is its own table.
        ({}, TableName("lakehouse", "Sales", "MODEL")),
        # quoting false (dbt-tests-adapter's caching suite): the statement writes `sales`.`model`.
        ({"schema": False, "identifier": False}, TableName("lakehouse", "sales", "model")),
    ],
)
def test_of_names_the_table_the_relation_renders(quoting: dict, expected: TableName) -> None:
    relation = LakehouseRelation.create(
        database="lakehouse", schema="Sales", identifier="MODEL", quote_policy=quoting
    )
    assert TableName.of(relation) == expected
    assert relation.render().replace("`", "") == str(expected)
