"""The catalogs a command's early engine start includes (command_setup.start_engine_early).

The engine starts while dbt parses, from the adapter's construction, before dbt adds the
project's catalogs.yml integrations. Started from the profile alone, its session would lack
their catalogs and the first connection would start another (on the warm engine, a second JVM
kept warm beside the first). So the early start mounts the integrations dbt is about to add on
a copy of the credentials, through the same checks and merge, and starts the session the
nodes will ask for. Any problem is left to dbt's own registration, which reports it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dbt.adapters.lakehouse.catalogs.adapter import V2Bridge
from dbt.adapters.lakehouse.catalogs.integrations import (
    CATALOG_INTEGRATIONS,
    LakehouseCatalogIntegration,
)
from dbt.adapters.lakehouse.catalogs.project import command_project, project_integrations
from dbt.adapters.lakehouse.catalogs.register import register


def with_project_catalogs(
    credentials: Any, project_root: str | None = None, project_flags: Any = None
) -> Any:
    """A copy of `credentials` with the running command's catalogs.yml integrations mounted,
    or `credentials` itself when the project has none. `project_root` and `project_flags` are
    the adapter's project's, when known (project.command_project says why)."""
    project = command_project(project_root, project_flags)
    if not project.catalogs_file.is_file():
        return credentials
    # The adapter that dbt makes is still being constructed here: v2 catalogs are bridged
    # without it, as the adapter itself bridges them.
    bridge = V2Bridge()
    classes = {c.catalog_type: c for c in CATALOG_INTEGRATIONS}
    copy = replace(credentials)
    for config in project_integrations(bridge, project):
        integration = classes[str(config.catalog_type).casefold()](config)
        assert isinstance(integration, LakehouseCatalogIntegration)
        register(copy, integration, project.project_dir)
    return copy
