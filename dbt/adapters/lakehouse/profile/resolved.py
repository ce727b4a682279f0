"""A profile target resolved once per process: its depot, the depots mounted beside it, and
the engine spec they imply, shared by the session, error masking and `dbt debug`.

Resolution reads the environment, the working folder and the depots files, so a change to any
of them (or to the credentials) resolves afresh; otherwise every connection of every node gets
the same object.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.catalogs.register import mount_origins
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.spec import EngineSpec, engine_spec
from dbt.adapters.lakehouse.profile.dataset_mounts import dataset_origins
from dbt.adapters.lakehouse.profile.depot import Depot, depots_file_candidates, resolve_depot
from dbt.adapters.lakehouse.profile.depot.secret_dir import DEFAULT_SECRET_DIR
from dbt.adapters.lakehouse.profile.depot.storage.registry import kind_of
from dbt.adapters.lakehouse.profile.mounts import MountedDepot, resolve_mounted_depots


@dataclass(frozen=True)
class ResolvedProfile:
    depot: Depot
    mounted: tuple[MountedDepot, ...]
    spec: EngineSpec

    @property
    def depots(self) -> tuple[Depot, ...]:
        return (self.depot, *(m.depot for m in self.mounted))

    @property
    def read_only(self) -> Mapping[str, str]:
        """Catalog name -> label of the depot mounted there read-only."""
        return {m.catalog: m.label for m in self.mounted if m.read_only}

    def mounted_depot(self, catalog: str | None) -> Depot | None:
        """The depot mounted as `catalog`, None when none is. Exact names: Spark's catalog names
        are case-sensitive (`RAW.s.t` is not in catalog `raw`)."""
        return next((m.depot for m in self.mounted if m.catalog == catalog), None)

    def depot_of(self, catalog: str | None) -> Depot:
        """The depot a table of `catalog` lives in: the one mounted there, else the profile's.
        Its spec's table defaults (tableFormats, formatVersion) are that table's."""
        mounted = self.mounted_depot(catalog)
        return self.depot if mounted is None else mounted

    def secret_values(self) -> list[str]:
        return [value for depot in self.depots for value in depot.secret_values()]


def resolve_profile_depot(creds: LakehouseCredentials) -> Depot:
    """The depot of the profile target itself (its `depot`, else the embedded lakehouse)."""
    return resolve_depot(
        depot=creds.depot,
        depots_file=creds.depots_file,
        warehouse=creds.warehouse,
        aws_region=creds.aws_region,
        aws_endpoint=creds.aws_endpoint,
        aws_role=creds.role_options(),
        apikey=creds.apikey,
    )


_LOCK = threading.Lock()
_CACHE: dict[tuple[Any, ...], ResolvedProfile] = {}
_CACHE_SIZE = 8


def resolve_profile(creds: LakehouseCredentials) -> ResolvedProfile:
    key = _cache_key(creds)
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            return found
        depot = resolve_profile_depot(creds)
        # Entries catalogs.yml or a source's dataset address added are named by it.
        mounted = resolve_mounted_depots(
            creds.depots, creds.depots_file, _origins(creds), apikey=creds.apikey
        )
        kind_of(depot.storage).prepare(depot, f"'{depot.name}' ({depot.source})")
        for mount in mounted:
            kind_of(mount.depot.storage).prepare(mount.depot, mount.label, mount.read_only)
        spec = engine_spec(creds, depot=depot, mounted={m.catalog: m.depot for m in mounted})
        resolved = ResolvedProfile(depot=depot, mounted=mounted, spec=spec)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = resolved
        return resolved


def _cache_key(creds: LakehouseCredentials) -> tuple[Any, ...]:
    files: list[tuple[str, int | None]] = []
    for path in depots_file_candidates(creds.depots_file):
        try:
            files.append((str(path), path.stat().st_mtime_ns))
        except OSError:
            files.append((str(path), None))
    # A DataOS secret directory's files may change between two commands of one process.
    secret_dir = Path(os.environ.get("DATAOS_SECRET_DIR") or DEFAULT_SECRET_DIR)
    try:
        secret_files = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in secret_dir.iterdir()))
    except OSError:
        secret_files = ()
    return (
        json.dumps(creds.to_dict(omit_none=False), sort_keys=True, default=str),
        secret_files,
        tuple(sorted(os.environ.items())),
        str(Path.cwd()),
        tuple(files),
        tuple(sorted(_origins(creds).items())),
    )


def _origins(creds: LakehouseCredentials) -> dict[str, str]:
    """Catalog -> what mounted it, for the entries the profile's `depots:` did not name."""
    return {**mount_origins(creds), **dataset_origins(creds)}
