"""`dbt debug` preflight: is the depot's storage and catalog usable, checked before Spark starts.

This module owns which checks apply to a depot and their one report: its storage kind's
(profile/depot/storage/; S3's run as the depot's IAM role when it has one), the Blob checks
(preflight_abfss.py) for abfss storage, the
REST catalog check (preflight_catalog.py) for a REST catalog. No secret reaches a message:
every text passes `scrub`.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    Depot,
)
from dbt.adapters.lakehouse.profile.depot.storage import kind_of
from dbt.adapters.lakehouse.profile.depot.storage.gcs.token import HttpRequest, urllib_request
from dbt.adapters.lakehouse.profile.depot.storage.kind import PreflightClients
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight import (
    S3ClientFactory,
    boto3_s3_client,
)
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight_role import (
    StsClientFactory,
    boto3_sts_client,
)
from dbt.adapters.lakehouse.profile.preflight_abfss import (
    AbfssChecks,
    AbfssClientFactory,
    blob_container_client,
)
from dbt.adapters.lakehouse.profile.preflight_catalog import HttpGet, check_rest_catalog, urllib_get
from dbt.adapters.lakehouse.profile.secrets import scrub

# Seconds: a preflight that hangs is worse than one that says "unreachable".
DEFAULT_TIMEOUT = 10.0


def run_preflight(
    depot: Depot,
    *,
    s3_client_factory: S3ClientFactory = boto3_s3_client,
    abfss_client_factory: AbfssClientFactory = blob_container_client,
    http_get: HttpGet = urllib_get,
    gcs_request: HttpRequest = urllib_request,
    timeout: float = DEFAULT_TIMEOUT,
    sts_client_factory: StsClientFactory = boto3_sts_client,
) -> PreflightReport:
    """Every check that applies to `depot`; problems are collected, not raised one by one."""
    report = PreflightReport()
    hidden = depot.secret_values()
    clients = PreflightClients(
        s3=s3_client_factory,
        sts=sts_client_factory,
        abfss=abfss_client_factory,
        gcs_request=gcs_request,
    )
    kind = kind_of(depot.storage)
    if kind is not None:
        hidden += kind.preflight(depot, clients, timeout, report)
    if isinstance(depot.storage, AbfssStorage):
        AbfssChecks(depot.storage, depot.secrets, abfss_client_factory, timeout, report).run()
    if depot.catalog.type == "rest":
        check_rest_catalog(
            depot.catalog, depot.storage.warehouse_uri, depot.secrets, http_get, timeout, report
        )
    report.passed = [scrub(line, hidden) for line in report.passed]
    report.problems = [scrub(line, hidden) for line in report.problems]
    return report
