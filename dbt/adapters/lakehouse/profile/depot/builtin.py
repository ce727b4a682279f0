"""The depots that need no depots file: the embedded local lakehouse and `depot: env`.

The embedded lakehouse (no `depot` in the profile) is a local folder with an H2-backed JDBC
catalog that several dbt processes can share. `depot: env` is the DataOS / Nilus contract: an
S3 + REST depot described entirely by environment variables (TYPE, DESTINATION_BUCKET, ...).
"""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.lakehouse.credentials import DEFAULT_WAREHOUSE_DIR
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.model import (
    _SCHEME_RE,
    ENV_DEPOT_TYPES,
    CatalogSpec,
    Depot,
    DepotSecrets,
    LocalStorage,
    _Context,
)
from dbt.adapters.lakehouse.profile.depot.parse import _Draft, _valid_bucket
from dbt.adapters.lakehouse.profile.depot.paths import _absolute, _local_folder
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
    if ";" in str(path):
        raise DepotConfigError(
            f"The embedded lakehouse folder cannot contain ';' (H2 reads it as a URL option "
            f"separator); got {path}. Accepted: a folder path without ';'."
        )
    storage = LocalStorage(path)
    catalog = CatalogSpec(
        type="jdbc",
        uri=embedded_catalog_uri(path),
        warehouse=storage.warehouse_uri,
    )
    return Depot("embedded", storage, catalog, DepotSecrets(), "embedded", embedded=True)


def embedded_catalog_uri(path: Path) -> str:
    """The H2 database behind the embedded catalog.

    AUTO_SERVER lets several processes share it. DATABASE_TO_LOWER keeps the catalog tables'
    names lowercase as Iceberg's JdbcCatalog looks them up: with H2's default upper-casing, its
    schema check misses an existing column and fails in every process after the first.
    """
    return (
        f"jdbc:h2:file:{path.as_posix()}/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE"
    )


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
