"""One catalogs.yml write integration checked and turned into a depot entry.

The entry is one of the shapes the profile's `depots:` takes (profile/mounts.py): an inline
depot (`{type: lakehouse, spec, catalog, secrets}`, from `external_volume` and
`adapter_properties`) or a named one (`{depot: dataos://name, ...}`), in the long form
`{depot: ..., read_only: ...}`. Every problem of an integration is collected and reported
together, each naming its key as the user wrote it (v1 `adapter_properties.x`, v2
`config.lakehouse.x`). No value is echoed: `secrets` and `properties` may hold credentials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.catalogs.volume import ACCEPTED_VOLUMES, volume_spec
from dbt.adapters.lakehouse.profile.depot.aws_role import ROLE_KEYS
from dbt.adapters.lakehouse.profile.depot.keys import unknown_key_problems
from dbt.adapters.lakehouse.profile.depot.model import _SECRET_KEYS

EMBEDDED = "embedded"
# The catalog types a write integration may have: each depot catalog type, and the embedded
# lakehouse (the profile's own catalog, integrations.py).
NEEDS_URI = ("rest", "nessie", "jdbc")
TABLE_FORMAT = "iceberg"
# file_format: the default data file format of the catalog's new tables (Iceberg's table
# property write.format.default, given to every table through the catalog's table-default.*).
FILE_FORMATS = ("parquet", "orc", "avro")
FILE_FORMAT_PROPERTY = "table-default.write.format.default"
# Keys a named depot leaves to the integration; everything else comes from the depot.
DEPOT_OPTIONS = ("depot", "read_only", "region", "endpoint")
_STORAGE_KEYS = ("region", "endpoint", "project", "secrets", "properties", "read_only", "depot")
ACCEPTED_KEYS: dict[str, tuple[str, ...]] = {
    "rest": ("uri", "warehouse", *_STORAGE_KEYS),
    "nessie": ("uri", *_STORAGE_KEYS),
    "jdbc": ("uri", *_STORAGE_KEYS),
    "hadoop": _STORAGE_KEYS,
    "glue": _STORAGE_KEYS,
    EMBEDDED: (),
}
# The pattern engine/sparkconf.py accepts: the name becomes the conf key spark.sql.catalog.<name>.
_CATALOG_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Keys:
    """How the user spelled each key: catalogs.yml v1 or v2."""

    v2: bool = False

    @property
    def type(self) -> str:
        return "type" if self.v2 else "catalog_type"

    @property
    def properties(self) -> str:
        return "config.lakehouse" if self.v2 else "adapter_properties"

    def prop(self, key: str) -> str:
        return f"{self.properties}.{key}"

    def top(self, key: str) -> str:
        """external_volume, file_format, catalog_database: v2 has them in config.lakehouse."""
        return self.prop(key) if self.v2 else key


@dataclass
class Translation:
    """An integration's checked parts; `entry(project_dir)` is its depot entry."""

    catalog_type: str
    spark_catalog: str
    properties: dict[str, Any] = field(default_factory=dict)
    volume: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def depot(self) -> str | None:
        depot = self.properties.get("depot")
        return None if depot is None else str(depot)

    def entry(self, project_dir: Path) -> dict[str, Any] | None:
        """The `depots:` entry this integration mounts; None for the embedded lakehouse."""
        props = self.properties
        options = {"read_only": bool(props.get("read_only", False))}
        if self.catalog_type == EMBEDDED:
            return None
        if self.depot is not None:
            for key, option in (("region", "aws_region"), ("endpoint", "aws_endpoint")):
                if props.get(key) is not None:
                    options[option] = props[key]
            return {"depot": self.depot, **options}
        assert self.volume is not None  # translate() refuses an integration without one
        spec = volume_spec(self.volume, props, project_dir, "external_volume", [])
        catalog: dict[str, Any] = {"type": self.catalog_type}
        for key in ("uri", "warehouse", "properties"):
            if props.get(key) is not None:
                catalog[key] = props[key]
        inline: dict[str, Any] = {"type": "lakehouse", "spec": spec, "catalog": catalog}
        if props.get("secrets") is not None:
            inline["secrets"] = props["secrets"]
        return {"depot": inline, **options}


def translate(config: Any, catalog_type: str, keys: Keys) -> Translation:
    """`config` (dbt's CatalogIntegrationConfig) checked against `catalog_type`'s keys."""
    problems: list[str] = []
    # catalog_database is dbt-core 1.12's (1.11's integrations have no such field).
    catalog_database = getattr(config, "catalog_database", None)
    spark_catalog = str(catalog_database or config.name)
    given = config.adapter_properties
    properties: dict[str, Any] = {}
    if given is not None and not isinstance(given, Mapping):
        problems.append(f"{keys.properties} must be a mapping.")
    elif given:
        properties = dict(given)
    result = Translation(catalog_type, spark_catalog, properties, config.external_volume, problems)
    _check_table_format(config.table_format, keys, problems)
    if not _CATALOG_NAME_RE.match(spark_catalog) or spark_catalog == "spark_catalog":
        key = keys.top("catalog_database") if catalog_database else "name"
        problems.append(
            f"{key} {spark_catalog!r} cannot be a Spark catalog name. Fix: a letter or '_' "
            "followed by letters, digits, '_' or '-' (not spark_catalog)."
        )
    accepted = ACCEPTED_KEYS[catalog_type]
    if result.depot is not None:
        accepted = tuple(k for k in accepted if k in DEPOT_OPTIONS)
    where = f"{keys.properties} ({keys.type} {catalog_type}" + (
        ", with a depot)" if result.depot is not None else ")"
    )
    problems += unknown_key_problems(properties, accepted or ("none",), where)
    _check_values(properties, keys, problems)
    if catalog_type == EMBEDDED:
        _check_embedded(config, keys, problems)
    elif result.depot is not None:
        for key in ("external_volume", "file_format"):
            if getattr(config, key) is not None:
                problems.append(
                    f"{keys.top(key)} cannot be set beside {keys.prop('depot')}: the depot says "
                    f"where its tables live and how. Fix: drop {keys.top(key)}, or the depot and "
                    "describe the catalog here."
                )
    else:
        _check_own_catalog(config, catalog_type, keys, result)
    return result


def _check_table_format(table_format: Any, keys: Keys, problems: list[str]) -> None:
    if table_format is None or str(table_format).strip().lower() == TABLE_FORMAT:
        return
    problems.append(
        f"table_format {str(table_format)!r} is not supported: this adapter writes Apache "
        f"Iceberg tables only. Fix: table_format: {TABLE_FORMAT}"
        + ("." if keys.v2 else ", or leave it out.")
    )


def _check_values(properties: Mapping[str, Any], keys: Keys, problems: list[str]) -> None:
    read_only = properties.get("read_only")
    if read_only is not None and not isinstance(read_only, bool):
        problems.append(f"{keys.prop('read_only')} must be true or false.")
    for key in ("secrets", "properties"):
        value = properties.get(key)
        if value is not None and not isinstance(value, Mapping):
            problems.append(f"{keys.prop(key)} must be a mapping.")
    secrets = properties.get("secrets")
    if isinstance(secrets, Mapping):
        # The keys only: a value may be a credential.
        problems += unknown_key_problems(secrets, _SECRET_KEYS + ROLE_KEYS, keys.prop("secrets"))
    for key in ("uri", "warehouse", "region", "endpoint", "project", "depot"):
        value = properties.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str)):
            problems.append(f"{keys.prop(key)} must be a string.")


def _check_embedded(config: Any, keys: Keys, problems: list[str]) -> None:
    for key, why in (
        ("external_volume", "its folder is the profile's `warehouse`"),
        ("file_format", "its tables take their format from the model (Parquet by default)"),
    ):
        if getattr(config, key) is not None:
            problems.append(
                f"{keys.top(key)} cannot be set for the embedded lakehouse: {why}. Fix: drop "
                f"{keys.top(key)}."
            )


def _check_own_catalog(config: Any, catalog_type: str, keys: Keys, result: Translation) -> None:
    problems, props = result.problems, result.properties
    if not (config.external_volume or "").strip():
        problems.append(
            f"{keys.top('external_volume')} is missing: it says where the catalog's tables "
            f"live. Accepted: {ACCEPTED_VOLUMES}; or {keys.prop('depot')}: dataos://<name>."
        )
        result.volume = None
    else:
        result.volume = str(config.external_volume)
        volume_spec(result.volume, props, Path.cwd(), keys.top("external_volume"), problems)
    if catalog_type in NEEDS_URI and not props.get("uri"):
        what = "a JDBC URL" if catalog_type == "jdbc" else "the catalog's base URL"
        problems.append(f"{keys.prop('uri')} is missing. Accepted: {what}.")
    if config.file_format is None:
        return
    file_format = str(config.file_format).strip().lower()
    if file_format not in FILE_FORMATS:
        problems.append(
            f"{keys.top('file_format')} {str(config.file_format)!r} is not a data file format "
            f"of Iceberg tables. Accepted: {', '.join(FILE_FORMATS)}."
        )
        return
    if not isinstance(props.get("properties") or {}, Mapping):
        return  # reported by _check_values
    table_props = dict(props.get("properties") or {})
    if str(table_props.get(FILE_FORMAT_PROPERTY, file_format)).lower() != file_format:
        problems.append(
            f"{keys.top('file_format')} and {keys.prop('properties')}.{FILE_FORMAT_PROPERTY} "
            "differ. Fix: keep one of them."
        )
        return
    table_props[FILE_FORMAT_PROPERTY] = file_format
    props["properties"] = table_props
