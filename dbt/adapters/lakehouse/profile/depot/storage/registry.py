"""The storage kinds by `spec.storageType`, and a resolved storage's kind.

Adding a kind: a module subclassing `kind.StorageKind` (its Spark conf, `dbt debug` checks,
Delta options, and what else it has), its `KIND` made with its storageType, storage class and
`Section` (its section and credential forms), one entry in `KINDS`, and its storage class in
model.py's Storage union.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.profile.depot.storage import abfss, file, gcs, s3
from dbt.adapters.lakehouse.profile.depot.storage.kind import StorageKind

# In this order the messages list the accepted storageTypes (precedence.py checks a depot's
# secrets in the reverse order).
KINDS: dict[str, StorageKind[Any]] = {
    kind.storage_type: kind for kind in (s3.KIND, file.KIND, abfss.KIND, gcs.KIND)
}
STORAGE_TYPES = tuple(KINDS)
_BY_CLASS = {kind.storage_class: kind for kind in KINDS.values()}


def kind_of(storage: object) -> StorageKind[Any]:
    """The kind of a resolved depot's storage (a Depot holds only registered ones)."""
    return _BY_CLASS[type(storage)]
