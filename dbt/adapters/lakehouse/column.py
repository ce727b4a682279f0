"""Columns with Spark SQL type names and backtick quoting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark.column import SparkColumn

_UNSIZED_STRING_TYPES = frozenset({"varchar", "char", "character", "character varying", "text"})


@dataclass
class LakehouseColumn(SparkColumn):
    comment: str | None = None

    @classmethod
    def translate_type(cls, dtype: str) -> str:
        # Spark refuses VARCHAR/CHAR without a length; Iceberg stores every one as a string.
        return "string" if dtype.strip().lower() in _UNSIZED_STRING_TYPES else dtype

    @property
    def data_type(self) -> str:
        return self.translate_type(super().data_type)

    @property
    def quoted(self) -> str:
        return "`{}`".format(self.column.replace("`", "``"))

    def literal(self, value: Any) -> str:
        return f"cast({value} as {self.dtype})"

    def __repr__(self) -> str:
        return f"<LakehouseColumn {self.name} ({self.data_type})>"
