"""Depot resolution: a profile target's `depot` turned into one typed, validated `Depot`.

This package owns the user's depot vocabulary (docs/architecture.md, "Depots"): the embedded
local lakehouse, `dataos://<name>` resolved as DataOS resolves it, an inline depot mapping, and
the DataOS / Nilus environment variables; the precedence of region, endpoint and credentials;
and the depot types, whose reprs never show a secret (profile/secrets.py owns what a secret
is). It is the lowest layer: it imports no feature package. Spark is not its business.

One pipeline, whatever the source: resolvers -> one depot entry -> `Depot` -> the engine's plan
(engine/sparkconf.py). The resolvers, in order (resolvers.py): the inline depot; the depots
file (files.py); the DataOS secret directory (secret_dir.py); the Depot Service
(depot_service.py). DataOS's shapes become our entry in dataos_shapes.py.

Here: the entry points, `resolve_depot` and `parse_depot_address`, and every name other modules
import. The other parts: model.py (types), table_defaults.py (a depot's table defaults),
paths.py (local paths), parse.py (the depot schema), precedence.py (precedence and cross-field
checks), builtin.py (the embedded and environment depots).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.builtin import (
    _embedded_depot,
    _env_depot,
    embedded_catalog_uri,
)
from dbt.adapters.lakehouse.profile.depot.files import depots_file_candidates
from dbt.adapters.lakehouse.profile.depot.model import (
    _SCHEME_RE,
    CATALOG_TYPES,
    DEPOT_SCHEME,
    DEPOTS_FILE_NAME,
    ENV_DEPOT,
    ENV_DEPOT_TYPES,
    AbfssStorage,
    CatalogSpec,
    Depot,
    DepotSecrets,
    GcsStorage,
    LocalStorage,
    S3Storage,
    _Context,
)
from dbt.adapters.lakehouse.profile.depot.parse import _draft_from_entry, _kind
from dbt.adapters.lakehouse.profile.depot.paths import _absolute_cwd
from dbt.adapters.lakehouse.profile.depot.precedence import _finish
from dbt.adapters.lakehouse.profile.depot.resolvers import check_purpose, resolve_named
from dbt.adapters.lakehouse.profile.depot.storage.registry import STORAGE_TYPES
from dbt.adapters.lakehouse.profile.secrets import Secret

__all__ = [
    "CATALOG_TYPES",
    "DEPOTS_FILE_NAME",
    "DEPOT_SCHEME",
    "ENV_DEPOT",
    "ENV_DEPOT_TYPES",
    "STORAGE_TYPES",
    "AbfssStorage",
    "CatalogSpec",
    "Depot",
    "DepotSecrets",
    "LocalStorage",
    "GcsStorage",
    "S3Storage",
    "Secret",
    "depots_file_candidates",
    "embedded_catalog_uri",
    "parse_depot_address",
    "resolve_depot",
]

_DEPOT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HINT_ADDRESS = "Use depot: dataos://<depot-name>, an inline depot mapping, or env."


def parse_depot_address(address: str) -> str:
    """`dataos://aws-lakehouse-depot` -> `aws-lakehouse-depot`."""
    return parse_depot_reference(address)[0]


def parse_depot_reference(address: str) -> tuple[str, str | None]:
    """`dataos://lh?purpose=rw` -> (`lh`, `rw`); the purpose is None when not given."""
    text = address.strip()
    match = _SCHEME_RE.match(text)
    if match is None:
        hint = _HINT_ADDRESS
        if text.lower() == ENV_DEPOT:
            hint += f" (`env` is lower case; got {text!r}.)"
        elif _DEPOT_NAME_RE.match(text):
            hint += f" Did you mean dataos://{text}?"
        raise DepotConfigError(f"Unsupported scheme: {text}. Expected 'dataos://'\n{hint}")
    scheme, rest = match.group(1), match.group(2)
    if scheme.lower() != DEPOT_SCHEME:
        # Only the scheme is echoed: the rest of a URL may carry user:password@.
        raise DepotConfigError(
            f"Unsupported scheme: {scheme}. Expected 'dataos://'\n{_HINT_ADDRESS}"
        )
    name, _, query = rest.strip().partition("?")
    name = name.rstrip("/")
    purpose = None
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        if key.strip().lower() != "purpose":
            raise DepotConfigError(
                f"Depot address dataos://{name}?... has option {key.strip()[:30]!r}. Accepted: "
                "?purpose=r or ?purpose=rw."
            )
        purpose = value.strip().lower()
    if not _DEPOT_NAME_RE.match(name):
        raise DepotConfigError(
            f"Invalid depot address: dataos://{name}. A depot address is dataos://<depot-name>, "
            "where the name uses letters, digits, '-', '_' and '.' (e.g. "
            "dataos://aws-lakehouse-depot)."
        )
    return name, purpose


def resolve_depot(
    *,
    depot: str | dict[str, Any] | None,
    depots_file: str | None,
    warehouse: str | None,
    aws_region: str | None,
    aws_endpoint: str | None,
    env: Mapping[str, str] | None = None,
    aws_role: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    apikey: str | None = None,
    read_only: bool = False,
) -> Depot:
    """The one Depot a profile target means; raises DepotConfigError listing every problem."""
    ctx = _Context(
        env=os.environ if env is None else env,
        cwd=_absolute_cwd(cwd),
        home=Path.home() if home is None else home,
        aws_region=(aws_region or "").strip() or None,
        aws_endpoint=(aws_endpoint or "").strip() or None,
        aws_role=dict(aws_role or {}),
        apikey=(apikey or "").strip() or None,
    )
    if depot is None:
        if ctx.aws_role:
            raise DepotConfigError(
                "The profile names an AWS role (aws_role_*), but it has no depot: the embedded "
                "lakehouse is a local folder. Accepted: a `depot:` on S3 beside the role keys, "
                "or no aws_role_* keys."
            )
        return _embedded_depot(warehouse, ctx)
    if isinstance(depot, Mapping):
        draft, problems = _draft_from_entry(depot)
        return _finish(draft, problems, "inline", "inline depot", ctx)
    if not isinstance(depot, str):
        raise DepotConfigError(
            f"The profile's `depot` must be a string or a mapping; got {_kind(depot)}. "
            f"{_HINT_ADDRESS}"
        )
    if not depot.strip():
        # An empty value (often an unset env var) must not silently mean "embedded".
        raise DepotConfigError(
            f"The profile's `depot` is empty. {_HINT_ADDRESS} Leave `depot` out entirely for "
            "the embedded local lakehouse."
        )
    if depot.strip() == ENV_DEPOT:
        return _env_depot(ctx)
    name, purpose = parse_depot_reference(depot)
    answer = resolve_named(name, check_purpose(purpose, read_only, depot), depots_file, ctx)
    draft, problems = _draft_from_entry(answer.entry)
    return _finish(draft, problems, name, answer.source, ctx, answer.spelling)
