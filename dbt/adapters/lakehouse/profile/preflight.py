"""`dbt debug` preflight: is the depot's storage and catalog usable, checked before Spark starts.

This module owns which checks apply to a depot and their one report: the S3 checks
(preflight_s3.py) for S3 storage, run as the depot's IAM role when it has one
(preflight_role.py), the Blob checks (preflight_abfss.py) for abfss storage, the GCS checks
(preflight_gcs.py) for GCS storage, the REST catalog check (preflight_catalog.py) for a REST
catalog. No secret reaches a message: every text passes `scrub`.
"""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    Depot,
    DepotSecrets,
    GcsStorage,
    S3Storage,
)
from dbt.adapters.lakehouse.profile.gcs_token import HttpRequest, urllib_request
from dbt.adapters.lakehouse.profile.preflight_abfss import (
    AbfssChecks,
    AbfssClientFactory,
    blob_container_client,
)
from dbt.adapters.lakehouse.profile.preflight_catalog import HttpGet, check_rest_catalog, urllib_get
from dbt.adapters.lakehouse.profile.preflight_gcs import GcsChecks
from dbt.adapters.lakehouse.profile.preflight_report import PreflightReport
from dbt.adapters.lakehouse.profile.preflight_role import (
    StsClientFactory,
    assume_for_checks,
    boto3_sts_client,
)
from dbt.adapters.lakehouse.profile.preflight_s3 import S3Checks, S3ClientFactory, boto3_s3_client
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
    if isinstance(depot.storage, S3Storage):
        secrets: DepotSecrets | None = depot.secrets
        principal = "these credentials"
        if depot.aws_role is not None:
            # S3 is checked as the role, with its temporary credentials (hidden like the keys).
            role = depot.aws_role
            secrets = assume_for_checks(role, depot.secrets, sts_client_factory, timeout, report)
            hidden += [] if secrets is None else secrets.values()
            principal = f"role {role.arn}"
        if secrets is not None:
            S3Checks(depot.storage, secrets, s3_client_factory, timeout, report, principal).run()
    if isinstance(depot.storage, AbfssStorage):
        AbfssChecks(depot.storage, depot.secrets, abfss_client_factory, timeout, report).run()
    elif isinstance(depot.storage, GcsStorage):
        GcsChecks(depot.storage, depot.secrets, gcs_request, timeout, report).run()
    if depot.catalog.type == "rest":
        check_rest_catalog(
            depot.catalog, depot.storage.warehouse_uri, depot.secrets, http_get, timeout, report
        )
    report.passed = [scrub(line, hidden) for line in report.passed]
    report.problems = [scrub(line, hidden) for line in report.problems]
    return report
