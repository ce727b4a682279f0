"""What the adapter's catalogs.yml overrides delegate to: adding an integration (checked, then
mounted by register.py), the v2 bridge's adapter hooks, a node's `catalog_name` turned into its
Spark catalog at parse, and the integrations `dbt debug` reads itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import BaseAdapter
from dbt.adapters.capability import Capability, CapabilitySupport, Support
from dbt.adapters.catalogs import (
    CatalogIntegration,
    DbtCatalogIntegrationNotFoundError,
)
from dbt_common.exceptions import CompilationError, DbtConfigError

from dbt.adapters.lakehouse.catalogs.integrations import (
    LakehouseCatalogIntegration,
    V2IntegrationConfig,
)
from dbt.adapters.lakehouse.catalogs.project import command_project, project_integrations
from dbt.adapters.lakehouse.catalogs.register import DuplicateCatalogError, register, registered

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

# The key dbt reads a node's integration from; "catalog" is dbt's older spelling of it.
CATALOG_NAME_KEYS = ("catalog_name", "catalog")
# catalogs.yml v2 is declared where dbt-adapters knows it (1.12's; the project allows older).
_CATALOGS_V2 = getattr(Capability, "CatalogsV2", None)
CATALOGS_V2_CAPABILITY = (
    {} if _CATALOGS_V2 is None else {_CATALOGS_V2: CapabilitySupport(support=Support.Full)}
)


class UnknownCatalogError(DbtCatalogIntegrationNotFoundError):
    """A `catalog_name` no catalogs.yml entry has (dbt's own error would not say the fix)."""

    def __init__(self, catalog_name: str, known: list[str], subject: str | None = None) -> None:
        self.catalog_name = catalog_name
        defined = f"defined: {', '.join(known)}" if known else "it defines none"
        who = f"{subject} sets catalog_name" if subject else "catalog_name"
        DbtConfigError.__init__(
            self,
            f"{who} '{catalog_name}', which is not a catalog of the project's catalogs.yml "
            f"({defined}). Fix: one of those names, or a catalog named '{catalog_name}' in "
            "catalogs.yml.",
        )


def add_integration(
    adapter: LakehouseAdapter, config: Any, add: Callable[[Any], CatalogIntegration]
) -> CatalogIntegration:
    """dbt's `add_catalog_integration`: `add` (dbt-adapters' own) checks and keeps the
    integration, then it is mounted on the adapter's credentials."""
    try:
        existing: CatalogIntegration | None = adapter._catalog_client.get(config.name)
    except DbtCatalogIntegrationNotFoundError:
        existing = None
    if existing is not None:
        if not (isinstance(existing, LakehouseCatalogIntegration) and existing.same_config(config)):
            raise DuplicateCatalogError(
                config.name,
                f"catalogs.yml names two catalogs '{config.name}'. Fix: give each catalog its "
                "own name.",
            )
        integration: CatalogIntegration = existing
    else:
        integration = add(config)
    assert isinstance(integration, LakehouseCatalogIntegration)  # CATALOG_INTEGRATIONS' classes
    register(adapter.config.credentials, integration, project_dir(adapter))
    return integration


def get_integration(adapter: LakehouseAdapter, name: str, subject: str | None = None) -> Any:
    try:
        return adapter._catalog_client.get(name)
    except DbtCatalogIntegrationNotFoundError:
        known = sorted(registered(adapter.config.credentials))
        raise UnknownCatalogError(name, known, subject) from None


class V2Bridge:
    """A catalogs.yml v2 catalog bridged to a write integration's config: dbt-adapters' own bridge
    (BaseAdapter.bridge_v2_catalog) over this adapter's hooks. It reads no adapter state, so the
    early engine start (early.py) bridges with it while dbt is still making the adapter, and the
    adapter's bridge_v2_catalog is this one: the catalogs layer needs no adapter to bridge."""

    def type(self) -> str:
        return "lakehouse"

    def _v2_to_v1_type(self, catalog_type: str) -> str:
        # dbt-adapters' default, written out: a dbt-adapters without v2 has no such method to
        # borrow at import, and each v2 catalog type is a v1 one of the same name here.
        return catalog_type

    def _v2_table_format(self, catalog: Any) -> str:
        return v2_table_format(catalog.table_format.value)

    def _translate_v2_properties(self, catalog_type: str, props: dict[str, Any]) -> dict[str, Any]:
        return v2_properties(props)

    def bridge_v2_catalog(self, catalog: Any) -> V2IntegrationConfig:
        return bridged_v2(BaseAdapter.bridge_v2_catalog(self, catalog))  # type: ignore[arg-type]


def bridged_v2(config: Any) -> V2IntegrationConfig:
    """A v2 catalog as dbt-adapters bridged it, marked v2 so messages name v2's keys."""
    fields = (
        "name",
        "catalog_type",
        "external_volume",
        "table_format",
        "catalog_name",
        "file_format",
        "catalog_database",
        "adapter_properties",
    )
    return V2IntegrationConfig(**{name: getattr(config, name) for name in fields})


def v2_table_format(value: str) -> str:
    """v2's `table_format: default` is the platform's format, here Iceberg (its only one)."""
    return "iceberg" if value == "default" else value


def v2_properties(properties: dict[str, Any]) -> dict[str, Any]:
    # dbt-adapters keeps catalog_database among the properties for adapters that rename it;
    # here it is the integration's own catalog_database already.
    return {k: v for k, v in properties.items() if k != "catalog_database"}


def catalog_database_of(
    adapter: LakehouseAdapter, node: Any, custom_database_name: str | None
) -> str | None:
    """The Spark catalog of a node with `catalog_name` (None without one), at parse time, so an
    unknown name or one contradicting the node's `database` fails before any node runs."""
    config = node.get("config") if isinstance(node, Mapping) else getattr(node, "config", None)
    get = getattr(config, "get", None)
    name = next((get(k) for k in CATALOG_NAME_KEYS if callable(get) and get(k)), None)
    if not name:
        return None
    subject = _subject(node)
    spark_catalog = str(get_integration(adapter, str(name), subject).spark_catalog)
    if custom_database_name and str(custom_database_name) != spark_catalog:
        raise CompilationError(
            f"{subject} sets catalog_name '{name}' (Spark catalog '{spark_catalog}') and database "
            f"'{custom_database_name}', which contradict each other. Fix: keep one of them."
        )
    return spark_catalog


def register_project_catalogs(adapter: LakehouseAdapter) -> list[str]:
    """`dbt debug`: the project's catalogs.yml integrations added as a command would add them;
    one line per integration."""
    integrations = project_integrations(adapter, command_project())
    lines = []
    for config in integrations:
        integration = adapter.add_catalog_integration(config)
        assert isinstance(integration, LakehouseCatalogIntegration)
        lines.append(
            f"{integration.label}: {integration.catalog_type} catalog, Spark catalog "
            f"'{integration.spark_catalog}'"
        )
    return lines


def project_dir(adapter: Any) -> Path:
    root = getattr(adapter.config, "project_root", None)
    return Path(root).resolve() if root else command_project().project_dir


def _subject(node: Any) -> str:
    def field(key: str) -> Any:
        return node.get(key) if isinstance(node, Mapping) else getattr(node, key, None)

    kind = str(field("resource_type") or "node")
    return f"{kind} '{field('name')}' ({field('unique_id')})"
