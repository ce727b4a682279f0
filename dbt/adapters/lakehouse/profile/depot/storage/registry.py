"""The storage kinds by `spec.storageType`, and a resolved storage's kind.

Adding a kind: a module implementing `kind.StorageKind` (its storage class and section, its
credential forms, Spark conf, `dbt debug` checks, Delta options), one entry in `KINDS`, and its
storageType in model.py's STORAGE_TYPES (and the Storage union there).
"""

from __future__ import annotations

from dbt.adapters.lakehouse.profile.depot.storage import abfss, file, gcs, s3
from dbt.adapters.lakehouse.profile.depot.storage.kind import StorageKind

# In this order each kind checks a depot's secrets (precedence.py), the order of the problems.
KINDS: dict[str, StorageKind] = {
    kind.storage_type: kind for kind in (gcs.KIND, abfss.KIND, s3.KIND, file.KIND)
}
_BY_CLASS = {kind.storage_class: kind for kind in KINDS.values()}


def kind_of(storage: object) -> StorageKind:
    """The kind of a resolved depot's storage (a Depot holds only registered ones)."""
    return _BY_CLASS[type(storage)]
