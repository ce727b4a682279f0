"""DataOS dataset addresses: `dataos://<depot>:<collection>/<dataset>`, a table in a depot's
catalog, as DataOS's own tools (Flare inputs, Workbench) name one. A source may name its table
so (profile/dataset_mounts.py mounts the depot; relation.py renders the table in it).

The depot part is an address like a profile's (`parse_depot_reference`), so its `?purpose=`
and its errors are the same; collection and dataset are the namespace and the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import parse_depot_reference

SCHEME = "dataos://"
# A collection or dataset is one Iceberg name: letters, digits, '_' and '-' (DataOS's own).
_PART_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_FORM = "dataos://<depot>:<collection>/<dataset> (e.g. dataos://lakehouse:retail/orders)"


@dataclass(frozen=True)
class DatasetAddress:
    depot: str
    collection: str
    dataset: str

    @property
    def depot_address(self) -> str:
        return f"{SCHEME}{self.depot}"

    def __str__(self) -> str:
        return f"{SCHEME}{self.depot}:{self.collection}/{self.dataset}"


def is_dataset_address(text: object) -> bool:
    """A `dataos://` text with a `:` after the depot: a dataset, not a depot address."""
    return (
        isinstance(text, str)
        and text.strip().lower().startswith(SCHEME)
        and ":" in text.strip()[len(SCHEME) :]
    )


def parse_dataset_address(text: str) -> DatasetAddress:
    """`dataos://lake:retail/orders` -> DatasetAddress('lake', 'retail', 'orders'), or one
    DepotConfigError naming the expected form."""
    rest = text.strip()[len(SCHEME) :]
    depot, _, path = rest.partition(":")
    collection, _, dataset = path.partition("/")
    if "?" in dataset:
        raise DepotConfigError(
            f"Dataset address {text.strip()!r} has options; a source reads its depot with the "
            "read purpose unless the profile mounts it under `depots:` without read_only. "
            f"Expected {_FORM}."
        )
    if not (_PART_RE.match(collection) and _PART_RE.match(dataset)):
        raise DepotConfigError(f"Invalid dataset address {text.strip()!r}. Expected {_FORM}.")
    name, _ = parse_depot_reference(f"{SCHEME}{depot}")
    return DatasetAddress(name, collection, dataset)


def catalog_name(depot: str) -> str:
    """The Spark catalog a depot a source names is mounted as: its name, with the characters a
    Spark catalog name cannot hold unquoted ('-', '.') as '_'."""
    return re.sub(r"[^A-Za-z0-9_]", "_", depot)
