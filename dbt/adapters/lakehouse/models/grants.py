"""What a `grants:` config does: on these catalogs, it is reported, never applied.

Open-source Spark parses no GRANT or REVOKE (`Operation not allowed: grant`), and none of the
Iceberg catalogs the adapter connects to (jdbc, the embedded one included, hadoop, rest, glue,
nessie) takes grants through Spark: access is the catalog's or the storage's own. Running
dbt-spark's grant statements would fail a model after its table was written; staying silent
would let a user believe access was granted. So each run warns once per catalog, at the first
model that has grants there, naming the catalog and where its access is managed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Lakehouse")
# Where a catalog of each kind has its access rules, for the warning.
ACCESS_MANAGED_BY = {
    "rest": "the REST catalog server's own roles and privileges",
    "glue": "AWS Lake Formation permissions or IAM policies on the Glue Data Catalog",
    "nessie": "Nessie's authorization rules",
    "hadoop": "the storage's permissions (bucket policies, folder permissions)",
    "jdbc": "the catalog database's users and the storage's permissions",
}

_lock = threading.Lock()
_warned: set[tuple[str, str]] = set()


def grants_warning(
    invocation_id: str,
    relation: str,
    catalog: str,
    grant_config: Any,
    catalogs: Sequence[Any],
) -> str | None:
    """The warning for `relation`'s grants, or None: no grants, or this run already warned
    about its catalog. `catalogs`: the session's CatalogMounts (their kind and depot)."""
    if not grant_config:
        return None
    with _lock:
        if (invocation_id, catalog) in _warned:
            return None
        _warned.add((invocation_id, catalog))
    mount = next((m for m in catalogs if m.name == catalog), None)
    kind = mount.context.kind if mount is not None and mount.context is not None else None
    described = f"catalog `{catalog}`" + (
        f" ({kind}, depot {mount.depot_label})" if kind and mount is not None else ""
    )
    managed = ACCESS_MANAGED_BY.get(kind or "", "the catalog's and the storage's own rules")
    granted = (
        ", ".join(f"{k} to {_grantees(v)}" for k, v in grant_config.items())
        if isinstance(grant_config, Mapping)
        else repr(grant_config)
    )
    return (
        f"grants ({granted}) on {relation} were not applied: {described} takes no grants "
        "through Spark (open-source Spark has no GRANT or REVOKE for Iceberg catalogs), and "
        f"neither do the other models' grants on it in this run. Manage access with {managed}."
    )


def _grantees(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def report(catalogs: Sequence[Any], relation: Any, grant_config: Any, invocation_id: str) -> str:
    """`apply_grants` on this adapter: the warning, when one is due (nothing is run)."""
    catalog = str(relation.database)
    warning = grants_warning(invocation_id, str(relation), catalog, grant_config, catalogs)
    if warning:
        logger.warning(warning)
    return ""
