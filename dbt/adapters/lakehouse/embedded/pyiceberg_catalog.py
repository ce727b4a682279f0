"""The embedded lakehouse opened from Python without a JVM: pyiceberg's SqlCatalog on its file.

pyiceberg's SqlCatalog keeps the same two tables as Iceberg's JdbcCatalog, with the same V1
`iceberg_type` column, so it reads and writes what Spark does: a table pyiceberg appends to is
read by the next dbt command, and a view Spark wrote is no table to it. Its `catalog_name` must
be the Spark catalog's name (the profile's `database`, `lakehouse` by default): the rows are kept
per catalog name, and another name shows an empty catalog.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    BUSY_TIMEOUT_SECONDS,
    EmbeddedCatalog,
    prepare_catalog,
)

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog


def pyiceberg_properties(catalog: EmbeddedCatalog) -> dict[str, str]:
    """SqlCatalog's properties for `catalog`: `SqlCatalog(catalog.name, **these)`.

    `timeout` is the SQLite driver's busy timeout (seconds), so a write waits for a dbt
    process's commit instead of failing with "database is locked"."""
    return {
        "uri": f"sqlite:///{catalog.database_file.as_posix()}?timeout={BUSY_TIMEOUT_SECONDS:.0f}",
        "warehouse": catalog.warehouse.resolve().as_uri(),
    }


def embedded_catalog_of(
    project_dir: str | Path | None = None,
    profiles_dir: str | Path | None = None,
    profile: str | None = None,
    target: str | None = None,
    env: Mapping[str, str] | None = None,
) -> EmbeddedCatalog:
    """The embedded catalog a dbt project's profile target builds into.

    Resolved as dbt would from `project_dir` (default: the current folder): its profiles.yml
    (`profiles_dir`, else DBT_PROFILES_DIR, the project folder, ~/.dbt), the profile named by
    dbt_project.yml and its default target, and the target's `warehouse` relative to the
    project. Raises ValueError when the target is not an embedded lakehouse."""
    from dbt.adapters.lakehouse.profile.depot import resolve_depot
    from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
    from dbt.adapters.lakehouse.profile.user_profile import default_profiles_dir, load_profile

    environ = dict(os.environ if env is None else env)
    project = Path(project_dir or ".").expanduser().resolve()
    environ.setdefault("DBT_PROJECT_DIR", str(project))
    folder = (
        Path(profiles_dir).expanduser()
        if profiles_dir is not None
        else default_profiles_dir(environ, project, Path.home())
    )
    chosen = load_profile(folder, profile, target, project_dir=project)
    creds = chosen.credentials
    depot = resolve_depot(
        depot=creds.depot,
        depots_file=creds.depots_file,
        warehouse=creds.warehouse,
        aws_region=creds.aws_region,
        aws_endpoint=creds.aws_endpoint,
        env=environ,
        cwd=project,
    )
    warehouse = kind_of(depot.storage).local_folder(depot)
    if not depot.embedded or warehouse is None:
        raise ValueError(
            f"Profile '{chosen.profile}', target '{chosen.target}' uses depot {depot.name}, not "
            "the embedded lakehouse: open its catalog with the depot's own settings."
        )
    return EmbeddedCatalog(name=creds.database, warehouse=warehouse)


def open_catalog(
    project_dir: str | Path | None = None,
    *,
    warehouse: str | Path | None = None,
    name: str = "lakehouse",
    **profile_options: Any,
) -> SqlCatalog:
    """A pyiceberg catalog of a dbt project's embedded lakehouse.

    `open_catalog()` in the project folder, `open_catalog("path/to/project")`, or
    `open_catalog(warehouse="path/to/lakehouse_warehouse")` for a folder without its project
    (`name`: the profile's `database`). `profile_options` are embedded_catalog_of's
    (profiles_dir, profile, target). The catalog file is created when the warehouse has none,
    as a dbt command would."""
    from pyiceberg.catalog.sql import SqlCatalog

    if warehouse is not None:
        catalog = EmbeddedCatalog(name=name, warehouse=Path(warehouse).expanduser().resolve())
    else:
        catalog = embedded_catalog_of(project_dir, **profile_options)
    prepare_catalog(catalog)
    return SqlCatalog(catalog.name, **pyiceberg_properties(catalog))
