"""storageType file: a local folder (the embedded lakehouse's, or `spec.file.path`).

Hadoop's local file system needs no settings, keys or jars, `dbt debug` has no storage to reach
(the folder is made when the profile is resolved, profile/resolved.py), and delta-rs writes a
local path without options: each answer is the empty one.
"""

from __future__ import annotations

from collections.abc import Mapping

from dbt.adapters.lakehouse.profile.depot.model import Depot, LocalStorage
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    ConfParts,
    Owners,
    PreflightClients,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport


class FileKind:
    storage_type = "file"
    storage_class: type = LocalStorage

    def claim(self, owners: Owners, catalog_name: str, depot: Depot) -> None:
        return None

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        return None

    def error_context(self, depot: Depot) -> Mapping[str, str | None]:
        return {}

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        return []

    def delta_options(self, depot: Depot) -> StorageOptions:
        return StorageOptions()


KIND = FileKind()
