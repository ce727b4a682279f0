"""What the catalogs.yml unit tests share: integration configs as dbt hands them over, and an
adapter built on a profile without a project around it."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from dbt.adapters.catalogs import CatalogWriteIntegrationConfig

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from unit.profile.depots import ACCESS_KEY, APIKEY, SECRET_KEY

S3_SECRETS = {"aws_access_key": ACCESS_KEY, "aws_secret_key": SECRET_KEY, "apikey": APIKEY}


def v1(
    name: str, catalog_type: str, *, written: str | None = None, **fields: Any
) -> CatalogWriteIntegrationConfig:
    """A v1 active write integration as dbt-core hands it over: the catalog's name as `name`,
    its write integration's as `catalog_name` (dbt/config/catalogs.py)."""
    return CatalogWriteIntegrationConfig(
        name=name,
        catalog_type=catalog_type,
        catalog_name=written or f"{name}_integration",
        **fields,
    )


def rest_on_s3(name: str = "lake_rest", **fields: Any) -> CatalogWriteIntegrationConfig:
    properties = {"uri": "http://127.0.0.1:1/rest", "region": "eu-west-1", "secrets": S3_SECRETS}
    fields.setdefault("external_volume", "s3://lake-bucket/tables")
    fields["adapter_properties"] = {**properties, **fields.get("adapter_properties", {})}
    return v1(name, "rest", **fields)


def adapter(tmp_path: Path, **profile: Any) -> LakehouseAdapter:
    """The adapter dbt would register for a profile (its engine is not started)."""
    credentials = LakehouseCredentials(
        **{"schema": "s", "depots_file": str(tmp_path / "none.yml"), **profile}
    )
    config = SimpleNamespace(
        credentials=credentials, log_cache_events=False, project_root=str(tmp_path), flags={}
    )
    return LakehouseAdapter(config, multiprocessing.get_context("spawn"))
