"""A project's catalogs.yml read with dbt-core's own loader, v1 or v2 as the project's
`use_catalogs_v2` flag says: for commands that get no integration from dbt, `dbt debug` (which
does not parse the project, so dbt registers none).

dbt-core is imported here only, and only when called: the adapter otherwise depends on
dbt-adapters alone, and dbt-core is the one that reads project files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATALOGS_FILE = "catalogs.yml"


@dataclass(frozen=True)
class CommandProject:
    """The project the running dbt command is for, as its flags name it."""

    project_dir: Path
    cli_vars: dict[str, Any] = field(default_factory=dict)
    use_v2: bool = False

    @property
    def catalogs_file(self) -> Path:
        return self.project_dir / CATALOGS_FILE


def command_project(project_root: str | None = None, project_flags: Any = None) -> CommandProject:
    """The running command's project folder, `--vars` and `use_catalogs_v2` flag.

    `project_root` is the folder of the project the adapter was made for, when known. dbt's
    flags are process-wide and belong to the last command run in the process: an adapter made
    outside a command (dbt's test fixtures make one per test project, in one process) would
    otherwise read another project's catalogs.yml. Then the folder is the adapter's own, with
    no --vars and the flag from its dbt_project.yml (`project_flags`)."""
    try:
        from dbt.flags import get_flags

        flags = get_flags()
    except Exception:  # dbt-core's flags are not set up outside its CLI
        flags = None
    project_dir = getattr(flags, "PROJECT_DIR", None) or os.getcwd()
    if project_root is not None and Path(project_dir).resolve() != Path(project_root).resolve():
        own_v2 = project_flags.get("use_catalogs_v2") if isinstance(project_flags, dict) else None
        return CommandProject(Path(project_root).resolve(), {}, bool(own_v2))
    cli_vars = getattr(flags, "VARS", None) or {}
    use_v2 = bool(getattr(flags, "USE_CATALOGS_V2", False))
    return CommandProject(Path(project_dir).resolve(), dict(cli_vars), use_v2)


def project_integrations(adapter: Any, project: CommandProject) -> list[Any]:
    """The active write integration of each catalog in the project's catalogs.yml, as dbt
    hands them to `add_catalog_integration` (dbt/cli/requires.py, setup_manifest)."""
    if not project.catalogs_file.is_file():
        return []
    where, name = str(project.project_dir), project.project_dir.name
    if project.use_v2:
        # dbt-core 1.12's (the flag exists from 1.12 on).
        from dbt.config.catalogs import load_catalogs_v2

        return [
            adapter.bridge_v2_catalog(c) for c in load_catalogs_v2(where, name, project.cli_vars)
        ]
    from dbt.config.catalogs import get_active_write_integration, load_catalogs

    active = (get_active_write_integration(c) for c in load_catalogs(where, name, project.cli_vars))
    return [integration for integration in active if integration is not None]
