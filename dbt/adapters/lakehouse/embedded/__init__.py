"""The embedded lakehouse's catalog: one SQLite file in the warehouse folder.

`<warehouse>/_catalog/iceberg.db` holds the two tables of Iceberg's JDBC catalog
(`iceberg_tables`, with the V1 `iceberg_type` column that tells views from tables, and
`iceberg_namespace_properties`). Every dbt process's JVM opens it directly through Iceberg's
JdbcCatalog and the xerial SQLite driver; pyiceberg's SqlCatalog opens the same file without a
JVM (pyiceberg_catalog.py). SQLite's own file locks serialise the writers, so no process owns the
file and none has to outlive a dbt command.

Before a session starts, `prepare_catalog` makes sure the file exists, created with its tables.
"""

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    BUSY_TIMEOUT_SECONDS,
    EmbeddedCatalog,
    catalog_jdbc_url,
    prepare_catalog,
)

__all__ = ["BUSY_TIMEOUT_SECONDS", "EmbeddedCatalog", "catalog_jdbc_url", "prepare_catalog"]
