"""A checked integration mounted: its depot entry merged into the credentials' `depots`.

From there resolution, jars, secrets, the engine spec (and so the warm engine's identity) and
`dbt debug`'s preflight all follow the profile's mounted depots (profile/mounts.py, resolved.py);
nothing here builds Spark settings. This module owns which names may be taken: a catalogs.yml
entry may not take the profile's `database`, a name its `depots:` mounts, or another entry's
Spark catalog. dbt may add an integration twice to the same credentials (the adapter registered
twice with one config): the same entry again changes nothing.

What was registered is kept on the credentials object itself (`registered`, in
credentials.py, which lists it in `connection_info`), beside the `depots` it changed, so a
second adapter made from the same config sees it too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbt.adapters.catalogs import (
    DbtCatalogIntegrationAlreadyExistsError,
    InvalidCatalogIntegrationConfigError,
)
from dbt_common.exceptions import DbtConfigError

from dbt.adapters.lakehouse.catalogs.integrations import LakehouseCatalogIntegration
from dbt.adapters.lakehouse.catalogs.translate import EMBEDDED
from dbt.adapters.lakehouse.credentials import CATALOGS_RECORD, Registered, registered
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.mounts import resolve_mounted_depots


class DuplicateCatalogError(DbtCatalogIntegrationAlreadyExistsError):
    """Two catalogs.yml entries under one name (dbt's own error would not say which)."""

    def __init__(self, catalog_name: str, msg: str) -> None:
        self.catalog_name = catalog_name
        DbtConfigError.__init__(self, msg)


def mount_origins(credentials: Any) -> dict[str, str]:
    """Spark catalog -> the catalogs.yml entry it was mounted for (profile/resolved.py)."""
    return {r.spark_catalog: r.label for r in registered(credentials).values() if r.entry}


def register(credentials: Any, integration: LakehouseCatalogIntegration, project_dir: Path) -> None:
    """Mount `integration` on `credentials` (a new `depots` mapping), or fail naming the entry
    and the fix before anything runs."""
    record = registered(credentials)
    if integration.catalog_type == EMBEDDED:
        spark_catalog, entry = _embedded_catalog(credentials, integration), None
    else:
        spark_catalog = integration.spark_catalog
        entry = integration.translation.entry(project_dir)
    new = Registered(
        integration.name, integration.label, integration.catalog_type, spark_catalog, entry
    )
    integration.spark_catalog = spark_catalog
    if record.get(new.name) == new:
        return
    _check_name_free(credentials, record, new)
    if entry is not None:
        _check_resolves(credentials, new, integration.keys.type)
        credentials.depots = {**(credentials.depots or {}), spark_catalog: entry}
    record[new.name] = new
    setattr(credentials, CATALOGS_RECORD, record)


def _invalid(new: Registered | LakehouseCatalogIntegration, text: str) -> Exception:
    return InvalidCatalogIntegrationConfigError(new.name, f"{new.label}: {text}")


def _embedded_catalog(credentials: Any, integration: LakehouseCatalogIntegration) -> str:
    if credentials.depot is not None:
        raise _invalid(
            integration,
            f"{integration.keys.type} embedded names the embedded lakehouse, which can only be "
            f"the profile's own depot, and this profile's depot is {credentials.depot_label}. "
            "Fix: the type of the catalog you mean (rest, glue, nessie, jdbc, hadoop), or "
            f"{integration.keys.prop('depot')}: dataos://<name>.",
        )
    database = str(credentials.database)
    if integration.catalog_database and integration.catalog_database != database:
        key = integration.keys.top("catalog_database")
        raise _invalid(
            integration,
            f"{key} '{integration.catalog_database}' is not the profile's `database` "
            f"('{database}'), the catalog the embedded lakehouse is. Fix: drop {key}.",
        )
    return database


def _check_name_free(credentials: Any, record: dict[str, Registered], new: Registered) -> None:
    name = new.spark_catalog
    if new.name in record:
        raise DuplicateCatalogError(
            new.name,
            f"catalogs.yml names two catalogs '{new.name}'. Fix: give each catalog its own name.",
        )
    if new.entry is not None and name == credentials.database:
        raise _invalid(
            new,
            f"its Spark catalog '{name}' is the profile's `database`, the catalog of the "
            "profile's own depot. Fix: another name (or catalog_database) for the catalogs.yml "
            "entry, or another `database` in the profile.",
        )
    for other in record.values():
        # Two names for the profile's own embedded catalog are two names, not two catalogs.
        if other.spark_catalog == name and (new.entry is not None or other.entry is not None):
            raise DuplicateCatalogError(
                new.name,
                f"{new.label} and {other.label} are both Spark catalog '{name}'. Fix: give one "
                "of them another name (or catalog_database).",
            )
    if new.entry is None:
        return
    mounted_by_us = {r.spark_catalog for r in record.values()}
    if name in (credentials.depots or {}) and name not in mounted_by_us:
        raise _invalid(
            new,
            f"its Spark catalog '{name}' is already mounted by the profile's `depots: {name}`. "
            "Fix: another name (or catalog_database) for one of them.",
        )


def _check_resolves(credentials: Any, new: Registered, type_key: str) -> None:
    """The entry resolved now, as the session will resolve it, so a problem fails here."""
    try:
        (mount,) = resolve_mounted_depots(
            {new.spark_catalog: new.entry},
            credentials.depots_file,
            origins={new.spark_catalog: new.label},
        )
    except DepotConfigError as exc:
        raise InvalidCatalogIntegrationConfigError(new.name, exc.msg) from None
    actual = mount.depot.catalog.type
    if actual != new.catalog_type:
        raise _invalid(
            new,
            f"its {type_key} is {new.catalog_type}, but depot {mount.label} is a {actual} catalog. "
            f"Fix: {type_key}: {actual} for this entry.",
        )
