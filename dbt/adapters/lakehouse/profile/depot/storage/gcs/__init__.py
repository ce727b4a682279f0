"""storageType gcs: a Google Cloud Storage bucket and prefix, reached with a service-account
key, the default Google chain, or unauthenticated on an emulator.

Its section and key checks are section.py's; Spark conf: Hadoop's GCS connector or Iceberg's
GCSFileIO (conf.py); `dbt debug`: token, bucket and permissions over the JSON API (preflight.py,
token.py); Delta: not available yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.lakehouse.profile.depot.draft import _Draft
from dbt.adapters.lakehouse.profile.depot.model import Depot, GcsStorage, _Context
from dbt.adapters.lakehouse.profile.depot.storage.gcs.conf import (
    claim_gcs_bucket,
    gcs_catalog_conf,
)
from dbt.adapters.lakehouse.profile.depot.storage.gcs.preflight import GcsChecks
from dbt.adapters.lakehouse.profile.depot.storage.gcs.section import (
    SECTION_KEYS,
    read_gcs_section,
    resolve_gcs_storage,
)
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    ConfParts,
    Owners,
    PreflightClients,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.table_defaults import DeltaConfigError


class GcsKind:
    storage_type = "gcs"
    storage_class: type = GcsStorage
    section_keys: tuple[str, ...] = SECTION_KEYS

    def read_section(
        self, section: Mapping[Any, Any], draft: _Draft, where: str, problems: list[str]
    ) -> None:
        read_gcs_section(section, draft, where, problems)

    def resolve_storage(
        self, draft: _Draft, ctx: _Context, problems: list[str]
    ) -> GcsStorage | None:
        return resolve_gcs_storage(draft, ctx, problems)

    def claim(self, owners: Owners, catalog_name: str, depot: Depot) -> None:
        claim_gcs_bucket(owners, catalog_name, depot)

    def add_catalog_conf(self, depot: Depot, prefix: str, default: bool, parts: ConfParts) -> None:
        parts.jar_needs |= gcs_catalog_conf(
            depot, prefix, default, parts.conf, parts.secret_hadoop, parts.secret_catalog
        )

    def error_context(self, depot: Depot) -> Mapping[str, str | None]:
        return {}

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        GcsChecks(_storage(depot), depot.secrets, clients.gcs_request, timeout, report).run()
        return []

    def delta_options(self, depot: Depot) -> StorageOptions:
        raise DeltaConfigError(
            f"The Delta log beside Iceberg is not available on GCS depots yet; depot "
            f"'{depot.name}' is on gs://{_storage(depot).bucket}. Accepted: table_formats: "
            "[iceberg] on GCS, or a dual-format table in an S3 or file depot."
        )


def _storage(depot: Depot) -> GcsStorage:
    # The registry hands a depot only to its own kind.
    assert isinstance(depot.storage, GcsStorage)
    return depot.storage


KIND = GcsKind()
