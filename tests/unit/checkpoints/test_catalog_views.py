"""The pure checks of creating a view through its catalog (checkpoints/catalog_views.py): which
statements are candidates before Spark's parser is asked, a query naming the view it defines,
duplicate columns as Spark's resolver sees them."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.checkpoints.catalog_views import (
    CREATE_VIEW,
    duplicated_columns,
    names_itself,
)
from dbt.adapters.lakehouse.iceberg.table_name import TableName


@pytest.mark.parametrize(
    "statement, candidate",
    [
        ("create or replace view `c`.`s`.`v` as select 1", True),
        ('/* {"app": "dbt"} */\ncreate or replace view `c`.`s`.`v`\n  as select 1', True),
        ("-- note\n  CREATE  OR\nREPLACE VIEW x as select 1", True),
        ("create view `c`.`s`.`v` as select 1", False),  # no OR REPLACE: the statement runs
        ("create or replace table `c`.`s`.`v` as select 1", False),
        ("create or replace temporary view v as select 1", False),
        ("select 'create or replace view'", False),
    ],
)
def test_candidates(statement, candidate):
    assert bool(CREATE_VIEW.match(statement)) is candidate


def test_a_query_naming_its_own_view():
    target = TableName("lakehouse", "s", "v")
    assert names_itself("select * from `lakehouse` . `S`.`v`", target)
    assert not names_itself("select * from `lakehouse`.`s`.`v2`", target)
    assert not names_itself("select v from `lakehouse`.`s`.`w`", target)


class _Conf:
    def __init__(self, sensitive: str) -> None:
        self.sensitive = sensitive

    def get(self, key: str, default: str) -> str:
        assert key == "spark.sql.caseSensitive"
        return self.sensitive


class _Session:
    def __init__(self, sensitive: str = "false") -> None:
        self.conf = _Conf(sensitive)


def test_duplicate_columns_as_the_resolver_sees_them():
    assert duplicated_columns(_Session(), ["id", "ID"])
    assert not duplicated_columns(_Session("true"), ["id", "ID"])
    assert not duplicated_columns(_Session(), ["id", "v"])
