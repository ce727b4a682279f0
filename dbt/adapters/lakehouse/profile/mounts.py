"""The profile's `depots:`: more depots mounted as Spark catalogs beside the profile's own.

Models are written to the profile's depot (catalog `database`); a mounted depot is read as a
source (`sources: [{database: <catalog>, ...}]`) and, unless it is `read_only`, may be written
too. Each entry is resolved exactly as a profile's `depot` is (dataos://, inline, env), with
its own credentials, region and endpoint. Entries a project's catalogs.yml added
(catalogs/register.py) are named by their `origins` in messages, not as profile keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import Depot, resolve_depot
from dbt.adapters.lakehouse.profile.depot.keys import unknown_key_problems

# The long form of an entry: {depot: <dataos://name | inline depot | env>, read_only: ..., ...}
MOUNT_KEYS = ("depot", "read_only", "aws_region", "aws_endpoint")


@dataclass(frozen=True)
class MountedDepot:
    catalog: str
    depot: Depot
    read_only: bool = False
    # Where the entry came from when not the profile's `depots:` (e.g. "catalogs.yml catalog 'x'").
    origin: str | None = None

    @property
    def label(self) -> str:
        return f"'{self.depot.name}' ({self.depot.source})"

    @property
    def entry_label(self) -> str:
        """The entry as the user wrote it: its catalogs.yml entry, or its profile key."""
        return self.origin or f"Profile `depots: {self.catalog}`"


def resolve_mounted_depots(
    entries: Mapping[str, Any] | None,
    depots_file: str | None,
    origins: Mapping[str, str] | None = None,
    apikey: str | None = None,
) -> tuple[MountedDepot, ...]:
    """Every `depots:` entry resolved, or one error naming each entry that cannot be.
    `origins`: catalog -> where an entry other than the profile's own came from."""
    if not entries:
        return ()
    if not isinstance(entries, Mapping):
        raise DepotConfigError(
            "Profile `depots:` must map catalog names to depots, e.g. {raw: "
            f"dataos://testawslh}}; got {type(entries).__name__}."
        )
    mounted: list[MountedDepot] = []
    problems: list[str] = []
    for catalog, entry in entries.items():
        origin = (origins or {}).get(str(catalog))
        try:
            mounted.append(_resolve_entry(str(catalog), entry, depots_file, origin, apikey))
        except DepotConfigError as exc:
            problems.append(f"{origin or f'Profile `depots: {catalog}`'}: {exc.msg}")
    if problems:
        raise DepotConfigError("\n".join(problems))
    return tuple(mounted)


def _resolve_entry(
    catalog: str,
    entry: Any,
    depots_file: str | None,
    origin: str | None = None,
    apikey: str | None = None,
) -> MountedDepot:
    options: Mapping[str, Any] = {}
    address = entry
    if isinstance(entry, Mapping) and "depot" in entry:
        problems = unknown_key_problems(entry, MOUNT_KEYS, f"`depots: {catalog}`")
        if problems:
            raise DepotConfigError("\n".join(problems))
        options, address = entry, entry["depot"]
    if address is None:
        raise DepotConfigError(
            "names no depot; a mounted depot is dataos://<name>, an inline depot mapping, or "
            "env (the embedded lakehouse can only be the profile's own depot)."
        )
    read_only = options.get("read_only", False)
    if not isinstance(read_only, bool):
        raise DepotConfigError(f"read_only must be true or false; got {read_only!r}.")
    depot = resolve_depot(
        depot=address,
        depots_file=depots_file,
        warehouse=None,
        aws_region=options.get("aws_region"),
        aws_endpoint=options.get("aws_endpoint"),
        apikey=apikey,
        read_only=read_only,
    )
    if origin is not None and isinstance(address, Mapping):
        # An inline depot a catalogs.yml entry became: messages name the entry, not "inline".
        depot = replace(depot, name=catalog, source="catalogs.yml")
    return MountedDepot(catalog=catalog, depot=depot, read_only=read_only, origin=origin)
