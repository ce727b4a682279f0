"""Depots a project's sources name by dataset address, mounted beside the profile's depots.

A source table may be written the DataOS way, `identifier: dataos://<depot>:<collection>/
<dataset>` (profile/depot/dataset_address.py). Its depot must be a Spark catalog when the session
starts, and the engine starts while dbt parses (command_setup.start_engine_early), before dbt has
read a source. So the project's YAML under its model paths is read for such addresses when the
adapter is made, and each depot named is mounted as the profile's `depots:` entries are:

- the profile's own depot (`depot: dataos://<depot>`): its catalog, the profile's `database`;
- a depot the profile already mounts under `depots:`: that catalog, read-only or not as the
  profile says (this is how a project writes to one: mount it without `read_only`);
- any other: a new read-only mount, catalog named after the depot (dataset_address.catalog_name).

Addresses must be written literally: YAML is read before dbt renders any Jinja in it.
What was mounted is kept on the credentials object (`dataset_catalogs`, `dataset_origins`) so
relation.py renders each source in the catalog its depot was mounted as.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import parse_depot_reference
from dbt.adapters.lakehouse.profile.depot.dataset_address import (
    DatasetAddress,
    catalog_name,
    is_dataset_address,
    parse_dataset_address,
)

_CATALOGS = "_lakehouse_dataset_catalogs"
_ORIGINS = "_lakehouse_dataset_origins"


def dataset_catalogs(credentials: Any) -> dict[str, str]:
    """Depot name -> the Spark catalog it is read through, for the depots sources named."""
    return dict(getattr(credentials, _CATALOGS, None) or {})


def dataset_origins(credentials: Any) -> dict[str, str]:
    """Spark catalog -> the source address it was mounted for (messages name it)."""
    return dict(getattr(credentials, _ORIGINS, None) or {})


def project_addresses(project_dir: Path, model_paths: Iterable[str]) -> list[DatasetAddress]:
    """Every dataset address a source table of the project names, in file order; one
    DepotConfigError naming each malformed one and its file."""
    found: list[DatasetAddress] = []
    problems: list[str] = []
    for path, identifier in _source_identifiers(project_dir, model_paths):
        try:
            found.append(parse_dataset_address(identifier))
        except DepotConfigError as exc:
            problems.append(f"{path}: {exc.msg}")
    if problems:
        raise DepotConfigError("\n".join(problems))
    return found


def catalog_for(credentials: Any, depot: str) -> str:
    """The Spark catalog a source naming `depot` reads: the one it was mounted as, else the one
    the profile already has for it, else a new one named after it."""
    mounted = dataset_catalogs(credentials).get(depot)
    if mounted is not None:
        return mounted
    return _profile_catalog(credentials, depot) or catalog_name(depot)


def mount_dataset_depots(credentials: Any, project_dir: Path, model_paths: Iterable[str]) -> None:
    """Mount (read-only) each depot the project's sources name that the profile has no catalog
    for, on `credentials` (a new `depots` mapping), or fail naming the clash and the fix."""
    addresses = project_addresses(project_dir, model_paths)
    catalogs = dataset_catalogs(credentials)
    origins = dataset_origins(credentials)
    depots = dict(credentials.depots or {})
    for address in addresses:
        if address.depot in catalogs:
            continue
        existing = _profile_catalog(credentials, address.depot)
        if existing is not None:
            catalogs[address.depot] = existing
            continue
        catalog = catalog_name(address.depot)
        taken = "the profile's `database`" if catalog == credentials.database else None
        if catalog in depots:
            taken = f"the profile's `depots: {catalog}` (another depot)"
        if taken is not None:
            raise DepotConfigError(
                f"Source address {address} names depot '{address.depot}', which would be "
                f"mounted as catalog '{catalog}', but that is {taken}. Fix: mount it yourself "
                f"under another name, e.g. `depots: {{{catalog}_src: {{depot: "
                f"{address.depot_address}, read_only: true}}}}`."
            )
        depots[catalog] = {"depot": address.depot_address, "read_only": True}
        catalogs[address.depot] = catalog
        origins[catalog] = f"Source address {address}"
    if depots != (credentials.depots or {}):
        credentials.depots = depots
    setattr(credentials, _CATALOGS, catalogs)
    setattr(credentials, _ORIGINS, origins)


def _profile_catalog(credentials: Any, depot: str) -> str | None:
    if _names(credentials.depot, depot):
        return str(credentials.database)
    for catalog, entry in (credentials.depots or {}).items():
        address = entry.get("depot") if isinstance(entry, Mapping) else entry
        if _names(address, depot):
            return str(catalog)
    return None


def _names(address: Any, depot: str) -> bool:
    if not isinstance(address, str) or not address.strip().lower().startswith("dataos://"):
        return False
    try:
        return parse_depot_reference(address)[0] == depot
    except DepotConfigError:  # the profile's own problem, reported where it is resolved
        return False


def _source_identifiers(
    project_dir: Path, model_paths: Iterable[str]
) -> Iterator[tuple[Path, str]]:
    for folder in model_paths:
        root = project_dir / folder
        if not root.is_dir():
            continue
        for path in sorted([*root.rglob("*.yml"), *root.rglob("*.yaml")]):
            text = path.read_text(errors="replace")
            if "dataos://" not in text:  # most files: no YAML parse
                continue
            try:
                document = yaml.safe_load(text)
            except yaml.YAMLError:  # dbt's own parse reports it, with its line
                continue
            for identifier in _identifiers(document):
                yield path, identifier


def _identifiers(document: Any) -> Iterator[str]:
    if not isinstance(document, Mapping):
        return
    for source in document.get("sources") or ():
        if not isinstance(source, Mapping):
            continue
        for table in source.get("tables") or ():
            if isinstance(table, Mapping) and is_dataset_address(table.get("identifier")):
                yield str(table["identifier"])
