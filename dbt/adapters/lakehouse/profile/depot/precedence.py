"""Precedence and cross-field checks: a parsed `_Draft` plus its context made into a `Depot`.

This module owns which source wins for credentials, the REST catalog's uri and apikey (profile, then
depot, then environment; the storage itself, with its region or endpoint, is its kind's,
storage/registry.py), and the rules that span several fields (one storage kind's, such as a glue
catalog needing S3 storage, are its kind's). It reports all of a depot's problems at once, in one
DepotConfigError naming the depot and where it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.aws_role import ROLE_KEYS
from dbt.adapters.lakehouse.profile.depot.draft import _Draft
from dbt.adapters.lakehouse.profile.depot.model import (
    CatalogSpec,
    Depot,
    DepotSecrets,
    Storage,
    _Context,
)
from dbt.adapters.lakehouse.profile.depot.storage.registry import KINDS
from dbt.adapters.lakehouse.profile.depot.table_defaults import (
    DeltaConfigError,
    FormatVersionError,
    parse_format_version,
    parse_table_formats,
)
from dbt.adapters.lakehouse.profile.depot.written_keys import as_written
from dbt.adapters.lakehouse.profile.secrets import Secret, safe_url


def _finish(
    draft: _Draft,
    problems: list[str],
    name: str,
    source: str,
    ctx: _Context,
    spelling: Mapping[str, str] | None = None,
) -> Depot:
    """The Depot; else every problem in one error, its keys named as `spelling` says the
    answering document wrote them (written_keys.py)."""
    storage = _resolve_storage(draft, ctx, problems)
    catalog = _resolve_catalog(draft, ctx, problems)
    secrets = _resolve_secrets(draft, ctx, problems)
    kind = KINDS.get(draft.storage_type or "")
    # The IAM role its AWS clients act as: S3's (aws_role.py), refused by a local folder.
    aws_role = None if kind is None else kind.resolve_role(draft, ctx, storage, problems)
    table_formats = None
    if draft.table_formats is not None:
        try:
            table_formats = parse_table_formats(draft.table_formats, "spec.tableFormats")
        except DeltaConfigError as exc:
            problems.append(str(exc.msg))
        if kind is not None:
            kind.check_table_formats(table_formats or (), problems)
    format_version = None
    try:
        format_version = parse_format_version(draft.format_version, "spec.formatVersion")
    except FormatVersionError as exc:
        problems.append(str(exc.msg))
    if problems or storage is None or catalog is None:
        written = [as_written(p, spelling or {}) for p in problems]
        _raise(written or ["The depot is incomplete."], name, source)
    return Depot(
        name,
        storage,
        catalog,
        secrets,
        source,
        embedded=False,
        table_formats=table_formats,
        format_version=format_version,
        aws_role=aws_role,
    )


def _resolve_storage(draft: _Draft, ctx: _Context, problems: list[str]) -> Storage | None:
    kind = KINDS.get(draft.storage_type or "")
    return None if kind is None else kind.section.resolve(draft, ctx, problems)


def _resolve_secrets(draft: _Draft, ctx: _Context, problems: list[str]) -> DepotSecrets:
    values = {k: v for k, v in draft.secrets.items() if k not in ROLE_KEYS}
    # Each kind resolves its credential forms on its own depots and refuses or checks them on
    # the others'. Last registered first: the order these problems have always had (gcs,
    # abfss, s3), kept while the registry lists the kinds in the order users read them.
    for kind in reversed(KINDS.values()):
        own = kind.storage_type == draft.storage_type
        kind.section.check_secrets(draft, ctx, values, problems, own)
    if draft.catalog_type == "rest" and "apikey" not in values:
        apikey = ctx.getenv("LAKEHOUSE_APIKEY")
        if apikey:
            values["apikey"] = apikey
        else:
            problems.append(
                "'apikey' is required in Lakehouse depot secret.\nThe REST catalog "
                "authenticates with a bearer token. Given: no secrets.apikey in the depot and "
                "no LAKEHOUSE_APIKEY environment variable. Accepted: secrets.apikey in the "
                "depot (e.g. \"{{ env_var('LAKEHOUSE_APIKEY') }}\"), or LAKEHOUSE_APIKEY in "
                "the environment."
            )
    return DepotSecrets(**{k: Secret(v) for k, v in values.items()})


def _resolve_catalog(draft: _Draft, ctx: _Context, problems: list[str]) -> CatalogSpec | None:
    kind, uri = draft.catalog_type, draft.catalog_uri
    if kind is None:
        return None
    if kind == "rest" and uri is None:
        uri = ctx.getenv("METASTORE_URL")
        if uri is None:
            problems.append(
                "METASTORE_URL environment variable is required for Lakehouse destination\n"
                "The REST catalog has no uri. Given: no catalog.uri in the depot and no "
                "METASTORE_URL environment variable. Accepted: catalog.uri in the depot, or "
                "METASTORE_URL=https://<host>/<path> in the environment."
            )
            return None
    if kind in ("rest", "nessie"):
        if uri is None:
            problems.append(
                "The nessie catalog needs catalog.uri; it is not set. Accepted: the Nessie "
                "API URL, e.g. http://nessie:19120/api/v2."
            )
            return None
        if not uri.lower().startswith(("http://", "https://")):
            problems.append(
                f"The {kind} catalog's catalog.uri must be an http(s) URL; got {safe_url(uri)!r}. "
                "Accepted: http://host:port/path or https://host/path."
            )
    elif kind == "jdbc":
        if uri is None or not uri.lower().startswith("jdbc:"):
            given = "it is not set" if uri is None else f"got {safe_url(uri)!r}"
            problems.append(
                f"The jdbc catalog needs catalog.uri, a JDBC URL; {given}. Accepted: e.g. "
                "jdbc:postgresql://host:5432/iceberg (the driver jar goes in spark.jars)."
            )
    elif uri is not None:
        problems.append(
            f"The {kind} catalog takes no catalog.uri; got {safe_url(uri)!r}. Accepted: no "
            "uri ("
            + ("Glue is found by region" if kind == "glue" else "metadata lives in the warehouse")
            + "); remove it, or choose catalog.type rest, nessie or jdbc."
        )
    # A catalog type only one kind's depots can hold (glue: S3's) is that kind's rule.
    for storage_kind in KINDS.values():
        storage_kind.check_catalog(draft, problems, storage_kind.storage_type == draft.storage_type)
    return CatalogSpec(kind, uri, draft.catalog_warehouse, dict(draft.properties))


def _raise(problems: list[str], name: str, source: str) -> NoReturn:
    label = {
        "inline": "the inline depot in the profile",
        "env": "the environment depot (DataOS variables)",
    }.get(name, f"depot '{name}' ({source})")
    if len(problems) == 1:
        raise DepotConfigError(f"{problems[0]}\nIn {label}.")
    bullets = "\n".join("- " + p.replace("\n", "\n  ") for p in problems)
    heading = f"{label[0].upper()}{label[1:]} has {len(problems)} problems:"
    raise DepotConfigError(f"{heading}\n{bullets}")
