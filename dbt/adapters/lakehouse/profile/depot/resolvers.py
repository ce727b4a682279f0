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

from dataclasses import dataclass, field
from pathlib import Path
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
    describe_depots_files,
)
from dbt.adapters.lakehouse.profile.depot.model import _Context
from dbt.adapters.lakehouse.profile.depot.secret_dir import (
    describe_secret_dir,
    from_secret_dir,
    secret_dir_path,
)

PURPOSES = ("r", "rw")


@dataclass(frozen=True)
class Answer:
    """A resolver's answer: the depot entry and where it came from (for messages, `dbt debug`)."""

    entry: Any
    source: str
    # Our key path -> the key as the answering document wrote it (dataos_shapes.Spelled).
    spelling: dict[str, str] = field(default_factory=dict)


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
        source = f"DataOS secret dir {secret_file.path}"
        return Answer(secret_file.spelled.entry, source, secret_file.spelled.spelling)
    try:
        served = from_service(name, purpose, ctx)
    except DepotNotInService:
        served = None
    if served is not None:
        source = f"DataOS Depot Service at {served.endpoint.shown}"
        return Answer(served.spelled.entry, source, served.spelled.spelling)
    raise DepotConfigError(
        f"Unknown depot dataos://{name}: no resolver knows it. Tried, in order: 1. depots file: "
        f"{describe_depots_files(path, known, depots_file, ctx)}; 2. "
        f"{describe_secret_dir(name, ctx)}; 3. {describe_service(ctx)}. Fix: "
        f"{_fix_for_unknown(name, path, ctx)}"
    )


def _fix_for_unknown(name: str, path: Path | None, ctx: _Context) -> str:
    """The fix that fits where the command runs: inside DataOS nobody writes a depots file."""
    if ctx.getenv("DEPOT_SERVICE_URL") or ctx.getenv("DATAOS_FQDN"):
        return (
            f"name a depot this DataOS instance has (its Depot Service answered 404 for "
            f"'{name}', as it does for a depot the run-as user may not read), or define "
            f"'{name}' in a depots file."
        )
    if ctx.getenv("DATAOS_SECRET_DIR"):
        return (
            f"declare dataos://{name} among the workload's depots, so DataOS writes "
            f"{secret_dir_path(name, ctx)}; or set DEPOT_SERVICE_URL (or DATAOS_FQDN) for the "
            "Depot Service; or define it in a depots file."
        )
    if path is not None:
        return f"use one of the names {path} defines, or add '{name}' under `depots:` there."
    return (
        "set `depots_file:` in the profile, export LAKEHOUSE_DEPOTS_FILE=/path/to/depots.yml, or "
        f"create ./depots.yml or ~/.dbt/depots.yml with `depots: {{{name}: {{type: lakehouse, "
        "...}}`; inside DataOS, DEPOT_SERVICE_URL or DATAOS_FQDN reaches its Depot Service."
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
