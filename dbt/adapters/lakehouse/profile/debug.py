"""`dbt debug` (the adapter's `debug_query` delegates here): every depot's preflight first,
problems of all depots together, then Spark itself and its view of each catalog. The project's
catalogs.yml integrations are mounted first (dbt registers none for `dbt debug`, which does not
parse), so each gets the preflight of a mounted depot.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.exceptions import PreflightError
from dbt.adapters.lakehouse.profile.secrets import safe_url

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter
    from dbt.adapters.lakehouse.profile.depot import Depot
    from dbt.adapters.lakehouse.profile.mounts import MountedDepot

logger = AdapterLogger("Lakehouse")


def debug_query(adapter: LakehouseAdapter) -> None:
    """`dbt debug`: every depot's storage and catalog checks first, then Spark itself.

    The preflight needs no Spark, so a missing bucket or a rejected token is reported in
    seconds, with its fix, before a JVM starts. Problems of all depots come together."""
    from dbt.adapters.lakehouse.catalogs.adapter import register_project_catalogs
    from dbt.adapters.lakehouse.profile.preflight import run_preflight
    from dbt.adapters.lakehouse.profile.resolved import resolve_profile

    for line in register_project_catalogs(adapter):
        logger.info(line)
    credentials = adapter.config.credentials
    resolved = resolve_profile(credentials)  # type: ignore[arg-type]
    problems: list[PreflightError] = []
    checks = [(credentials.depot_label, resolved.depot)]  # type: ignore[attr-defined]
    checks += [(_label(m), m.depot) for m in resolved.mounted]
    for label, depot in checks:
        logger.info(f"depot ({label}): {resolution_line(depot)}")
        report = run_preflight(depot)
        for line in report.passed:
            logger.info(f"preflight ({label}): {line}")
        try:
            report.raise_for_problems(label)
        except PreflightError as exc:
            problems.append(exc)
    if problems:
        raise PreflightError("\n".join(p.msg for p in problems))
    adapter.execute("select 1 as id")
    # Spark's own view of each catalog: it loads and answers a listing.
    for catalog in [credentials.database, *(m.catalog for m in resolved.mounted)]:
        adapter.execute(f"show namespaces in {adapter.quote(catalog)}")


def resolution_line(depot: Depot) -> str:
    """Which resolver answered and what it found, never a secret (secret names only)."""
    catalog = depot.catalog
    uri = f" at {safe_url(catalog.uri)}" if catalog.uri and catalog.type != "jdbc" else ""
    held = sorted(f.name for f in fields(depot.secrets) if getattr(depot.secrets, f.name))
    secrets = ", ".join(held) + " (values not shown)" if held else "none"
    return (
        f"resolved by {depot.source}; storage {depot.storage.warehouse_uri}; "
        f"{catalog.type} catalog{uri}; secrets: {secrets}"
    )


def _label(mount: MountedDepot) -> str:
    """The entry the user wrote and, when it names one, its depot."""
    if mount.origin is None:
        return f"`depots: {mount.catalog}` {mount.label}"
    if mount.depot.source == "catalogs.yml":
        return mount.origin
    return f"{mount.origin}, depot {mount.label}"
