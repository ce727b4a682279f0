"""Whether the project's files changed since the last run that consulted the reuse memo: the
held-back engine start (command_setup.py) then begins while dbt parses, not once the nodes are
selected (memo.py `start_engine_unless_covered`), since an edited node is decided through the
engine.

A run that consulted the memo touches its file at its end (memo.py `save_all`), so a project
file, or a folder (a file added, removed or renamed in it), newer than that file was changed
after dbt last parsed the project. A guess either way costs latency, never a result: a node
that needs the engine gets it at its first statement.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# RuntimeConfig's folders that dbt parses (dbt_project.yml's *-paths), and its installed packages.
_SOURCE_FOLDERS = (
    "model_paths",
    "seed_paths",
    "snapshot_paths",
    "macro_paths",
    "test_paths",
    "analysis_paths",
    "docs_paths",
)


def project_sources(config: Any) -> tuple[Path, ...]:
    """dbt_project.yml, the folders dbt parses and the installed packages' folder of the
    project `config` (dbt's RuntimeConfig); none for a profile made outside a project."""
    root = getattr(config, "project_root", None)
    if root is None:
        return ()
    folders = [p for name in _SOURCE_FOLDERS for p in (getattr(config, name, None) or ())]
    installed = getattr(config, "packages_install_path", None)
    named = ["dbt_project.yml", *folders, *([installed] if installed else [])]
    return tuple(dict.fromkeys(Path(root) / str(p) for p in named))


def edited_since(stamp: Path, sources: Iterable[Path]) -> bool:
    """Whether any of `sources` (files, or folders walked down, hidden ones skipped) was
    modified after `stamp` was; True when `stamp` is not there."""
    try:
        since = stamp.stat().st_mtime
    except OSError:
        return True
    pending = [str(p) for p in sources]
    while pending:
        path = pending.pop()
        try:
            found = os.stat(path)
            if found.st_mtime > since:
                return True
            if not stat.S_ISDIR(found.st_mode):
                continue
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif entry.stat().st_mtime > since:
                        return True
        except OSError:  # not there (an unused *-path), or gone while walked
            continue
    return False
