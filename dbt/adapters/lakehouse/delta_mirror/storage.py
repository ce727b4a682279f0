"""delta-rs (object_store) options for a depot's storage, with credentials kept out of reprs;
each storage kind says its own (profile/depot/storage/)."""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot.model import Depot
from dbt.adapters.lakehouse.profile.depot.storage.kind import StorageOptions
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of


def storage_options(depot: Depot | None) -> dict[str, str]:
    """delta-rs (object_store) options for the depot's storage: its own endpoint, region and
    keys, so the log lands where the catalog's files are, with the same credentials."""
    if depot is None:
        return StorageOptions()
    return kind_of(depot.storage).delta_options(depot)
