"""`dbt debug` preflight: is the depot's storage and catalog usable, checked before Spark starts.

This module owns which checks apply to a depot and their one report: its storage kind's (each
kind's preflight.py under profile/depot/storage/, reaching the outside world through the clients
passed here) and the REST catalog check (preflight_catalog.py) for a REST catalog. No secret
reaches a message: every text passes `scrub`.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot import Depot
from dbt.adapters.lakehouse.profile.depot.storage.abfss.preflight import (
    AbfssClientFactory,
    blob_container_client,
)
from dbt.adapters.lakehouse.profile.depot.storage.gcs.token import HttpRequest, urllib_request
from dbt.adapters.lakehouse.profile.depot.storage.kind import PreflightClients
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
from dbt.adapters.lakehouse.profile.depot.storage.report import PreflightReport
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight import (
    S3ClientFactory,
    boto3_s3_client,
)
from dbt.adapters.lakehouse.profile.depot.storage.s3.preflight_role import (
    StsClientFactory,
    boto3_sts_client,
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
    hidden += kind_of(depot.storage).preflight(depot, clients, timeout, report)
    if depot.catalog.type == "rest":
        check_rest_catalog(
            depot.catalog, depot.storage.warehouse_uri, depot.secrets, http_get, timeout, report
        )
    report.passed = [scrub(line, hidden) for line in report.passed]
    report.problems = [scrub(line, hidden) for line in report.problems]
    return report
