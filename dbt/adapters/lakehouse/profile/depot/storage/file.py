"""storageType file: a local folder (the embedded lakehouse's, or `spec.file.path`, made
absolute against the working folder by paths.py).

Hadoop's local file system needs no settings, keys or jars, `dbt debug` has no storage to reach
(the folder is made when the profile is resolved, profile/resolved.py), and delta-rs writes a
local path without options: each answer is the empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.aws_role import ROLE_KEYS, AwsRole
from dbt.adapters.lakehouse.profile.depot.draft import _Draft, _opt_str
from dbt.adapters.lakehouse.profile.depot.model import Depot, LocalStorage, Storage, _Context
from dbt.adapters.lakehouse.profile.depot.paths import _local_folder
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
    section_keys: tuple[str, ...] = ("path",)

    def read_section(
        self, section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
    ) -> None:
        draft.file_path = _opt_str(section, "path", where, problems)
        if draft.file_path is None:
            problems.append(f"{where}.path is missing. Accepted: a local folder path.")

    def resolve_storage(
        self, draft: _Draft, ctx: _Context, problems: list[str]
    ) -> LocalStorage | None:
        if not draft.file_path:
            return None
        try:
            return LocalStorage(_local_folder(draft.file_path, "spec.file.path", ctx))
        except DepotConfigError as exc:
            problems.append(exc.msg)
            return None

    def check_secrets(
        self, draft: _Draft, ctx: _Context, values: dict[str, str], problems: list[str], own: bool
    ) -> None:
        return None

    def resolve_role(
        self, draft: _Draft, ctx: _Context, storage: Storage | None, problems: list[str]
    ) -> AwsRole | None:
        if ctx.aws_role or any(k in draft.secrets for k in ROLE_KEYS):
            problems.append(
                "aws_role_arn needs S3 storage; got storageType file. Accepted: no aws_role_* "
                "keys for a local folder."
            )
        return None

    def check_table_formats(self, table_formats: tuple[str, ...], problems: list[str]) -> None:
        return None

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
