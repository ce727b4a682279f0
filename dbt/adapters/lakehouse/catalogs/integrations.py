"""The `CatalogIntegration` class of each catalog type a catalogs.yml write integration may name,
and the relation config they build for a node that names one with `catalog_name`.

One class per type (rest, glue, nessie, jdbc, hadoop: the depot catalog types; embedded: the
profile's own embedded lakehouse), listed in `CATALOG_INTEGRATIONS` for the adapter. Each checks
its integration when dbt adds it (translate.py) and fails with every problem at once, naming the
catalogs.yml entry; register.py then mounts it. A repr never shows a property's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.catalogs import CatalogIntegration, InvalidCatalogIntegrationConfigError

from dbt.adapters.lakehouse.catalogs.translate import (
    EMBEDDED,
    FILE_FORMAT_PROPERTY,
    TABLE_FORMAT,
    Keys,
    Translation,
    translate,
)

_CONFIG_FIELDS = (
    "name",
    "catalog_type",
    "catalog_name",
    "table_format",
    "external_volume",
    "file_format",
    "catalog_database",
    "adapter_properties",
)


@dataclass
class V2IntegrationConfig:
    """An integration bridged from catalogs.yml v2 (dbt-adapters' CatalogWriteIntegrationConfig,
    whose fields it has), marked so messages name v2's keys."""

    name: str
    catalog_type: str
    external_volume: str | None = None
    table_format: str | None = None
    catalog_name: str | None = None
    file_format: str | None = None
    catalog_database: str | None = None
    adapter_properties: dict[str, Any] = field(default_factory=dict)
    v2: bool = True


@dataclass
class LakehouseCatalogRelation:
    """dbt's CatalogRelation for a node with `catalog_name`: `catalog_database` is the Spark
    catalog its table is written to (dbt's generate_database_name returns it)."""

    catalog_name: str | None
    table_format: str | None
    catalog_database: str | None
    external_volume: str | None = None
    file_format: str | None = None


def entry_label(config: Any, v2: bool) -> str:
    """The catalogs.yml entry as a message names it. In v1 dbt hands over the catalog's name as
    `name` and its write integration's as `catalog_name` (config/catalogs.py)."""
    written = getattr(config, "catalog_name", None)
    if v2 or not written or written == config.name:
        return f"catalogs.yml catalog '{config.name}'"
    return f"catalogs.yml catalog '{config.name}' (write integration '{written}')"


class LakehouseCatalogIntegration(CatalogIntegration):
    """A write integration of one catalog type, checked; `spark_catalog` is the Spark catalog
    its tables are written to (for the embedded type, set when it is registered)."""

    catalog_type = ""
    allows_writes = True
    table_format: str | None = TABLE_FORMAT

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.keys = Keys(v2=bool(getattr(config, "v2", False)))
        self.label = entry_label(config, self.keys.v2)
        self.given = tuple(getattr(config, name, None) for name in _CONFIG_FIELDS)
        self.translation: Translation = translate(config, self.catalog_type, self.keys)
        problems = self.translation.problems
        if problems:
            detail = (
                f" {problems[0]}"
                if len(problems) == 1
                else "".join(f"\n- {problem}" for problem in problems)
            )
            raise InvalidCatalogIntegrationConfigError(
                config.name, f"{self.label} ({self.keys.type} {self.catalog_type}):{detail}"
            )
        self.table_format = TABLE_FORMAT
        properties = self.translation.properties.get("properties") or {}
        self.file_format = properties.get(FILE_FORMAT_PROPERTY)
        self.spark_catalog = self.translation.spark_catalog

    def same_config(self, config: Any) -> bool:
        """Whether `config` is the one this integration was made from (dbt may add it twice)."""
        return self.given == tuple(getattr(config, name, None) for name in _CONFIG_FIELDS)

    def build_relation(self, config: Any) -> LakehouseCatalogRelation:
        return LakehouseCatalogRelation(
            catalog_name=self.name,
            table_format=TABLE_FORMAT,
            catalog_database=self.spark_catalog,
            external_volume=self.external_volume,
            file_format=self.file_format,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, spark_catalog={self.spark_catalog!r})"


class RestCatalogIntegration(LakehouseCatalogIntegration):
    catalog_type = "rest"


class GlueCatalogIntegration(LakehouseCatalogIntegration):
    catalog_type = "glue"


class NessieCatalogIntegration(LakehouseCatalogIntegration):
    catalog_type = "nessie"


class JdbcCatalogIntegration(LakehouseCatalogIntegration):
    catalog_type = "jdbc"


class HadoopCatalogIntegration(LakehouseCatalogIntegration):
    catalog_type = "hadoop"


class EmbeddedCatalogIntegration(LakehouseCatalogIntegration):
    """The profile's own embedded lakehouse, named in catalogs.yml: nothing is mounted, and its
    Spark catalog is the profile's `database` (register.py refuses it beside a depot)."""

    catalog_type = EMBEDDED


CATALOG_INTEGRATIONS: list[type[CatalogIntegration]] = [
    RestCatalogIntegration,
    GlueCatalogIntegration,
    NessieCatalogIntegration,
    JdbcCatalogIntegration,
    HadoopCatalogIntegration,
    EmbeddedCatalogIntegration,
]
