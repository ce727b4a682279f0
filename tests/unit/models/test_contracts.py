"""The columns a contracted table is created with, and the warnings dbt gives for the rest."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_common.exceptions import DbtValidationError

from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.adapters.lakehouse.models.contracts import contract_table


def _column(name: str, data_type: str, *types: str, quote: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "data_type": data_type,
        "quote": quote,
        "constraints": [{"type": t, "expression": "x > 0" if t == "check" else ""} for t in types],
    }


class _Adapter(LakehouseAdapter):
    """The adapter's constraint handling without a profile (quote is an instance method)."""

    @classmethod
    def quote(cls, identifier: str) -> str:  # type: ignore[override]
        return f"`{identifier}`"


def _columns(*columns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in columns}


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(
        "dbt.adapters.base.impl.warn_or_error", lambda event: seen.append(event.constraint)
    )
    return seen


def test_not_null_and_key_columns_are_required_and_the_key_is_the_identifier(
    warnings: list[str],
) -> None:
    table = contract_table(
        _columns(
            _column("id", "int", "primary_key", "check", "unique"),
            _column("from", "string", "not_null", quote=True),
            _column("v", "string", "foreign_key"),
        ),
        [],
        _Adapter,
    )
    assert table.columns == ["id int not null", "`from` string not null", "v string"]
    assert table.required == ["id", "`from`"]
    assert table.identifier_fields == ["id"]
    # not_null is enforced: no warning; the others are reported as not enforced.
    assert sorted(warnings) == ["check", "foreign_key", "primary_key", "unique"]


def test_a_model_level_key_keeps_its_column_order() -> None:
    table = contract_table(
        _columns(_column("a", "int"), _column("b", "int"), _column("c", "int")),
        [{"type": "primary_key", "columns": ["c", "`a`"]}],
        _Adapter,
    )
    assert table.columns == ["a int not null", "b int", "c int not null"]
    assert table.identifier_fields == ["c", "a"]


def test_a_contract_without_required_columns_needs_no_staging() -> None:
    table = contract_table(_columns(_column("a", "int", "check")), [], _Adapter)
    assert table.required == [] and table.identifier_fields == []


def test_a_key_on_a_column_the_contract_lacks_is_refused() -> None:
    with pytest.raises(DbtValidationError, match="does not list"):
        contract_table(
            _columns(_column("a", "int")),
            [{"type": "primary_key", "columns": ["nope"]}],
            _Adapter,
        )


def test_a_table_fits_its_contract_only_with_the_same_shape():
    from dbt.adapters.lakehouse.models.contracts import ContractTable, contract_shape, table_shape

    columns = {
        "id": {"name": "id", "data_type": "integer"},
        "region": {"name": "region", "data_type": "varchar(10)"},
        "v": {"name": "v", "data_type": "string"},
    }
    contract = ContractTable(columns=[], required=["id", "`region`"], identifier_fields=["id"])
    wanted = contract_shape(columns, contract, ["region"])
    fields = [("id", "int", False), ("region", "string", False), ("v", "string", True)]
    properties = "[current-snapshot-id=1,format=iceberg/parquet,identifier-fields=[id]]"
    assert table_shape(fields, ["region"], properties) == wanted
    # A column made optional, a partition changed, the key gone, a column moved: no fit.
    assert table_shape([*fields[:2], ("v", "string", False)], ["region"], properties) != wanted
    assert table_shape(fields, ["bucket(4, id)"], properties) != wanted
    assert table_shape(fields, ["region"], "[format=iceberg/parquet]") != wanted
    assert table_shape(fields[::-1], ["region"], properties) != wanted


def test_primary_key_columns_column_and_model_level_in_order():
    from dbt.adapters.lakehouse.models.contracts import primary_key_columns

    columns = {
        "id": {"name": "id", "constraints": [{"type": "primary_key"}]},
        "day": {"name": "day", "constraints": [{"type": "not_null"}]},
    }
    constraints = [{"type": "primary_key", "columns": ["ID", "`day`"]}]
    assert primary_key_columns(columns, constraints) == ["id", "day"]
    assert primary_key_columns({"v": {"name": "v"}}, None) == []
