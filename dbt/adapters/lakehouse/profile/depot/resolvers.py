"""Which resolver answers for `dataos://<name>`, in a fixed order, and the report of every
place looked when none does.

The order (docs/profiles-and-depots.md, "Inside DataOS"): an inline depot in the profile never
gets here (the profile already holds the depot); then
1. the depots file (profile `depots_file`, LAKEHOUSE_DEPOTS_FILE, ./depots.yml,
   ~/.dbt/depots.yml), when the first that exists defines the name: what the user wrote wins;
2. the DataOS secret directory, `$DATAOS_SECRET_DIR/<name>_config.yaml` (DataOS 2.0);
3. the DataOS Depot Service (DataOS 1.x, and the tenant-scoped API).
Each answers with one depot entry in our format; parse.py and precedence.py make it a Depot,
and engine/sparkconf.py makes that the engine's plan, whichever resolver answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.depot_service import (
    DepotNotInService,
    describe_service,
    from_service,
)
from dbt.adapters.lakehouse.profile.depot.files import (
    _find_depots_file,
    _load_depots,
    _render,
    _template_env,
    no_depots_file_message,
    unknown_depot_message,
)
from dbt.adapters.lakehouse.profile.depot.model import _Context
from dbt.adapters.lakehouse.profile.depot.secret_dir import describe_secret_dir, from_secret_dir

PURPOSES = ("r", "rw")


@dataclass(frozen=True)
class Answer:
    """A resolver's answer: the depot entry and where it came from (for messages, `dbt debug`)."""

    entry: Any
    source: str


def resolve_named(name: str, purpose: str, depots_file: str | None, ctx: _Context) -> Answer:
    """The first resolver's answer for `dataos://<name>`; DepotConfigError listing every place
    looked, in order, when none has the depot."""
    path = _find_depots_file(depots_file, ctx)
    known: list[str] = []
    if path is not None:
        depots = _load_depots(path)
        if name in depots:
            rendered = _render(depots[name], name, path, _template_env(ctx.env), key_path="")
            return Answer(rendered, f"depots file {path}")
        known = list(depots)
    secret_file = from_secret_dir(name, ctx)
    if secret_file is not None:
        return Answer(secret_file.entry, f"DataOS secret dir {secret_file.path}")
    try:
        served = from_service(name, purpose, ctx)
    except DepotNotInService:
        served = None
    if served is not None:
        return Answer(served.entry, f"DataOS Depot Service at {served.endpoint.shown}")
    first = (
        unknown_depot_message(path, name, known, depots_file, ctx)
        if path is not None
        else no_depots_file_message(name, depots_file, ctx)
    )
    raise DepotConfigError(
        f"{first}\nResolvers tried, in order: 1. depots file "
        f"({path if path is not None else 'none found'}); 2. {describe_secret_dir(name, ctx)}; "
        f"3. {describe_service(ctx)}."
    )


def check_purpose(purpose: str | None, read_only: bool, address: str) -> str:
    """The secret purpose to ask DataOS for: the address's `?purpose=`, else what the depot is
    used for (rw: models are written; r: a read-only mount)."""
    if purpose is None:
        return "r" if read_only else "rw"
    if purpose not in PURPOSES:
        raise DepotConfigError(
            f"Depot address {address} asks for purpose {purpose!r}. Accepted: "
            f"?purpose=r or ?purpose=rw (or none: rw, r for a read_only mount)."
        )
    return purpose
