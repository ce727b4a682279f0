"""The depots that need no depots file: the embedded local lakehouse and `depot: env`.

The embedded lakehouse (no `depot` in the profile) is a local folder with a JDBC catalog in a
SQLite file (dbt/adapters/lakehouse/embedded/) that several dbt processes, and pyiceberg, share.
`depot: env` is the DataOS / Nilus contract: an S3 + REST depot described entirely by
environment variables (TYPE, DESTINATION_BUCKET, ...).
"""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.lakehouse.embedded.sqlite_catalog import BUSY_TIMEOUT_SECONDS, catalog_jdbc_url
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.draft import _Draft, _valid_bucket
from dbt.adapters.lakehouse.profile.depot.model import (
    _SCHEME_RE,
    ENV_DEPOT_TYPES,
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    _Context,
)
from dbt.adapters.lakehouse.profile.depot.paths import (
    DEFAULT_WAREHOUSE_DIR,
    _absolute,
    _local_folder,
)
from dbt.adapters.lakehouse.profile.depot.precedence import _finish


def _embedded_depot(warehouse: str | None, ctx: _Context) -> Depot:
    given = (warehouse or "").strip() or ctx.getenv("LAKEHOUSE_WAREHOUSE")
    if given:
        where = "profile `warehouse`" if (warehouse or "").strip() else "LAKEHOUSE_WAREHOUSE"
        path = _local_folder(given, where, ctx)
    else:
        project_dir = ctx.getenv("DBT_PROJECT_DIR")
        base = _absolute(project_dir, ctx.cwd, ctx.home) if project_dir else ctx.cwd
        path = base / DEFAULT_WAREHOUSE_DIR
    if "?" in str(path):
        raise DepotConfigError(
            f"The embedded lakehouse folder cannot contain '?' (the SQLite driver reads it as "
            f"the start of its URL options); got {path}. Accepted: a folder path without it."
        )
    storage = LocalStorage(path)
    catalog = CatalogSpec(
        type="jdbc",
        uri=embedded_catalog_uri(path, _catalog_wait(ctx)),
        warehouse=storage.warehouse_uri,
    )
    return Depot("embedded", storage, catalog, DepotSecrets(), "embedded", embedded=True)


def embedded_catalog_uri(path: Path, wait_seconds: float = BUSY_TIMEOUT_SECONDS) -> str:
    """The SQLite database behind the embedded catalog, as every JVM opens it."""
    return catalog_jdbc_url(path, wait_seconds)


def _catalog_wait(ctx: _Context) -> float:
    """How long a process waits for another one's lock on the catalog file
    (LAKEHOUSE_CATALOG_WAIT, seconds)."""
    given = (ctx.getenv("LAKEHOUSE_CATALOG_WAIT") or "").strip()
    if not given:
        return BUSY_TIMEOUT_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 86400:
        raise DepotConfigError(
            f"LAKEHOUSE_CATALOG_WAIT must be a number of seconds above 0 (below a day); got "
            f"{given!r}. Accepted: e.g. 300 (unset: {BUSY_TIMEOUT_SECONDS:.0f})."
        )
    return seconds


def _env_depot(ctx: _Context) -> Depot:
    problems: list[str] = []
    draft = _Draft(storage_type="s3", catalog_type="rest")
    kind = ctx.getenv("TYPE")
    if kind is None:
        problems.append(
            "TYPE environment variable is not set. Accepted (case-insensitive): "
            + ", ".join(ENV_DEPOT_TYPES)
            + "."
        )
    elif kind.upper() not in ENV_DEPOT_TYPES:
        problems.append(
            f"TYPE environment variable is {kind!r}, which `depot: env` does not support. "
            f"Accepted (case-insensitive): {', '.join(ENV_DEPOT_TYPES)}."
        )
    destination = ctx.getenv("DESTINATION_BUCKET")
    match = _SCHEME_RE.match(destination or "")
    if destination is None:
        problems.append(
            "DESTINATION_BUCKET environment variable is required for `depot: env`; it is not "
            "set. Accepted: s3://<bucket>/<prefix> (or s3a://)."
        )
    elif match is None or match.group(1).lower() not in ("s3", "s3a"):
        given = f"{match.group(1)}://..." if match else repr(destination)
        problems.append(
            f"DESTINATION_BUCKET must be an S3 location; got {given}. Accepted: "
            "s3://<bucket>/<prefix> (or s3a://)."
        )
    else:
        bucket, _, prefix = match.group(2).partition("/")
        if _valid_bucket(bucket, "DESTINATION_BUCKET", problems):
            draft.bucket = bucket
            draft.relative_path = prefix
    return _finish(draft, problems, "env", "environment (DataOS variables)", ctx)
