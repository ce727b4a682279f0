"""storageType file: a local folder (the embedded lakehouse's, or `spec.file.path`, made
absolute against the working folder by paths.py).

Hadoop's local file system needs no settings, keys or jars, `dbt debug` has no storage to reach
(the folder is made when the profile is resolved, `prepare`), delta-rs writes a local path
without options, and pyiceberg reads it without properties: each answer is the empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.draft import _Draft, _opt_str
from dbt.adapters.lakehouse.profile.depot.model import Depot, LocalStorage, _Context
from dbt.adapters.lakehouse.profile.depot.paths import _local_folder
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    ConfParts,
    FileIoProperties,
    PreflightClients,
    Section,
    StorageKind,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport


def _read_section(
    section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
) -> None:
    draft.file_path = _opt_str(section, "path", where, problems)
    if draft.file_path is None:
        problems.append(f"{where}.path is missing. Accepted: a local folder path.")


def _resolve_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> LocalStorage | None:
    if not draft.file_path:
        return None
    try:
        return LocalStorage(_local_folder(draft.file_path, "spec.file.path", ctx))
    except DepotConfigError as exc:
        problems.append(exc.msg)
        return None


def _no_secrets(
    draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
) -> None:
    """A folder takes no credentials; the other kinds refuse theirs on it."""


class FileKind(StorageKind[LocalStorage]):
    def local_folder(self, depot: Depot) -> Path:
        return self.storage(depot).path

    def prepare(self, depot: Depot, label: str, read_only: bool = False) -> None:
        prepare_folder(Path(self.storage(depot).path), label, read_only)

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        return None

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        return []

    def delta_options(self, depot: Depot) -> StorageOptions:
        return StorageOptions()

    def pyiceberg_properties(self, depot: Depot) -> FileIoProperties:
        return {}, {}


def prepare_folder(folder: Path, label: str, read_only: bool = False) -> None:
    """Create a local depot's folder, as the embedded lakehouse does its own, so a fresh file
    depot works on its first command. A read-only mount's folder is never created: nothing may
    be written there, and an empty new folder would hide a mistyped path."""
    if folder.is_dir():
        return
    if folder.exists():
        raise DepotConfigError(
            f"Depot {label}: spec.file.path {folder} is a file, not a folder. Accepted: a "
            "folder (created when missing), absolute, relative to the project, or file:/..."
        )
    if read_only:
        raise DepotConfigError(
            f"Depot {label} is mounted read_only and its folder {folder} does not exist; a "
            "read-only depot's folder is not created, since nothing may be written to it. Fix: "
            "point spec.file.path at the folder holding its tables, or mount it without "
            "read_only."
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DepotConfigError(
            f"Depot {label}: cannot create its folder {folder} ({exc.strerror}). Fix: create "
            "it yourself, or point spec.file.path at a folder this user may write."
        ) from None


KIND = FileKind(
    "file", LocalStorage, Section(("path",), _read_section, _resolve_storage, _no_secrets)
)
