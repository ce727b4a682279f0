"""storageType gcs: a Google Cloud Storage bucket and prefix, reached with a service-account
key, the default Google chain, or unauthenticated on an emulator.

Its section and key checks are section.py's; Spark conf: Hadoop's GCS connector or Iceberg's
GCSFileIO (conf.py); `dbt debug`: token, bucket and permissions over the JSON API (preflight.py,
token.py); Delta: not available yet.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot.model import Depot, GcsStorage
from dbt.adapters.lakehouse.profile.depot.storage.gcs.conf import (
    claim_gcs_bucket,
    gcs_catalog_conf,
)
from dbt.adapters.lakehouse.profile.depot.storage.gcs.preflight import GcsChecks
from dbt.adapters.lakehouse.profile.depot.storage.gcs.section import (
    SECTION,
)
from dbt.adapters.lakehouse.profile.depot.storage.kind import (
    PreflightClients,
    StorageKind,
    StorageOptions,
)
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.table_defaults import DeltaConfigError


class GcsKind(StorageKind[GcsStorage]):
    claim = staticmethod(claim_gcs_bucket)
    add_catalog_conf = staticmethod(gcs_catalog_conf)

    def check_table_formats(self, table_formats: tuple[str, ...], problems: list[str]) -> None:
        # At parse time what delta_options refuses when a table is written.
        if "delta" in table_formats:
            problems.append(
                "spec.tableFormats names delta, but the Delta log beside Iceberg is not "
                "available on GCS depots yet. Accepted: [iceberg] (or no tableFormats) on GCS."
            )

    def preflight(
        self, depot: Depot, clients: PreflightClients, timeout: float, report: PreflightReport
    ) -> list[str]:
        GcsChecks(self.storage(depot), depot.secrets, clients.gcs_request, timeout, report).run()
        return []

    def delta_options(self, depot: Depot) -> StorageOptions:
        raise DeltaConfigError(
            f"The Delta log beside Iceberg is not available on GCS depots yet; depot "
            f"'{depot.name}' is on gs://{self.storage(depot).bucket}. Accepted: table_formats: "
            "[iceberg] on GCS, or a dual-format table in an S3 or file depot."
        )


KIND = GcsKind("gcs", GcsStorage, SECTION)
