import os
from typing import Any

from dbt.adapters.base import AdapterPlugin

# First: its exit handler must be registered before the ones of the modules below.
from dbt.adapters.lakehouse import (
    garbage_collector,  # noqa: F401
    schema_cache,
)
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager  # noqa: F401
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.include import lakehouse

# Before dbt validates the profile's credentials, its first use of a schema.
schema_cache.install(os.environ)

Plugin = AdapterPlugin(
    adapter=LakehouseAdapter,  # type: ignore[arg-type]
    credentials=LakehouseCredentials,
    include_path=lakehouse.PACKAGE_PATH,
    # spark: dispatch falls back to spark__ macros; lakehouse_public: the `lakehouse.<macro>`
    # package model SQL calls (dbt/adapters/lakehouse_public says why it is a plugin).
    dependencies=["spark", "lakehouse_public"],
)


def __getattr__(name: str) -> Any:
    # `from dbt.adapters.lakehouse import open_catalog`: imported on first use, so loading the
    # adapter does not load pyiceberg and SQLAlchemy.
    if name == "open_catalog":
        from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import open_catalog

        return open_catalog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
