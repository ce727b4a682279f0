"""An Iceberg table's name in the forms Spark SQL and Iceberg's procedures take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def quote(part: str) -> str:
    """A backticked identifier part (backticks inside doubled, as Spark SQL expects)."""
    return "`{}`".format(part.replace("`", "``"))


def string_literal(value: str) -> str:
    """A Spark SQL string literal (backslash escapes, as Spark parses by default)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class TableName:
    catalog: str
    namespace: str
    name: str

    @classmethod
    def of(cls, relation: Any) -> TableName:
        """The table a dbt relation names (its database is the Spark catalog), as the relation
        writes it (relation.py folds an unquoted namespace or table name to lower case), so
        model `MODEL` is the table `model` its statements wrote."""
        if hasattr(relation, "written_names"):
            return cls(*relation.written_names())
        return cls(str(relation.database), str(relation.schema), str(relation.identifier))

    @property
    def sql_name(self) -> str:
        return ".".join(quote(p) for p in (self.catalog, self.namespace, self.name))

    @property
    def in_catalog(self) -> str:
        """The name Iceberg's procedures take inside their catalog, as a string literal:
        '`ns`.`t`'."""
        return string_literal(f"{quote(self.namespace)}.{quote(self.name)}")

    @property
    def procedures(self) -> str:
        """Where the catalog's Iceberg procedures live: `catalog`.system."""
        return f"{quote(self.catalog)}.system"

    def __str__(self) -> str:
        return f"{self.catalog}.{self.namespace}.{self.name}"
