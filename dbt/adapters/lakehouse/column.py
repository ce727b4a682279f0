"""Columns with Spark SQL type names and backtick quoting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark.column import SparkColumn


@dataclass
class LakehouseColumn(SparkColumn):
    comment: str | None = None

    @property
    def quoted(self) -> str:
        return "`{}`".format(self.column.replace("`", "``"))

    def literal(self, value: Any) -> str:
        return f"cast({value} as {self.dtype})"

    def __repr__(self) -> str:
        return f"<LakehouseColumn {self.name} ({self.data_type})>"
