"""The engine spec of a profile's own depot, resolved as the setup layer resolves it
(profile/resolved.py), for the tests of the spec and of the session built from it."""

from __future__ import annotations

from collections.abc import Mapping

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.spec import EngineSpec, engine_spec
from dbt.adapters.lakehouse.profile.resolved import resolve_profile_depot


def profile_spec(
    creds: LakehouseCredentials,
    env: Mapping[str, str] | None = None,
    fetch_missing: bool = True,
) -> EngineSpec:
    return engine_spec(creds, env, fetch_missing, depot=resolve_profile_depot(creds))
