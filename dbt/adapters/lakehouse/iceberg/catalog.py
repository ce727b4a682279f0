"""The adapter's docs catalog (`dbt docs generate`): each relation's columns from DESCRIBE and,
for a table, its stats from Iceberg metadata (iceberg/catalog_stats.py). impl.py keeps dbt's
methods and delegates here."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.impl import catch_as_completed
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.contracts.relation import RelationConfig
from dbt_common.clients.agate_helper import build_type_tester
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, TableMetadata
from dbt_common.utils import executor

from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.catalog_stats import TEXT_COLUMNS, catalog_columns, stats_items
from dbt.adapters.lakehouse.iceberg.describe import RelationDescription
from dbt.adapters.lakehouse.iceberg.stats_reader import read_table_stats
from dbt.adapters.lakehouse.iceberg.table_stats import TableStats

if TYPE_CHECKING:
    import agate

    from dbt.adapters.lakehouse.impl import LakehouseAdapter

# The docs catalog's stats columns that must stay text (catalog_stats.TEXT_COLUMNS).
CATALOG_TYPES = build_type_tester(TEXT_COLUMNS)


def get_catalog(
    adapter: LakehouseAdapter,
    relation_configs: Iterable[RelationConfig],
    used_schemas: frozenset[tuple[str, str]],
) -> tuple[agate.Table, list[Exception]]:
    schema_map = adapter._get_catalog_schemas(relation_configs)
    with executor(adapter.config) as tpe:
        futures: list[Future[agate.Table]] = []
        for info, schemas in schema_map.items():
            for schema in schemas:
                futures.append(
                    tpe.submit_connected(
                        adapter,
                        f"{info.database}.{schema}",
                        adapter._get_one_catalog,
                        info,
                        {schema},
                        used_schemas,
                    )
                )
        catalogs, exceptions = catch_as_completed(futures)
    return catalogs, exceptions


def get_one_catalog(
    adapter: LakehouseAdapter, information_schema: InformationSchema, schemas: set[str]
) -> agate.Table:
    import agate

    rows: list[dict[str, Any]] = []
    for schema in schemas:
        for relation in adapter.list_relations(information_schema.database, schema):
            described = adapter.describe_relation(relation)
            if described is not None:  # None: dropped between listing and describing
                stats = adapter.table_stats(relation)
                rows.extend(catalog_rows(relation, described, stats))
    # An empty schema has no columns to force (agate would warn about each).
    return agate.Table.from_object(rows, column_types=CATALOG_TYPES if rows else None)


def catalog_rows(
    relation: BaseRelation, described: RelationDescription, stats: TableStats | None = None
) -> list[dict[str, Any]]:
    # dbt reads a table's stats from whichever of its rows comes first: every row has them.
    stats_columns = catalog_columns(stats)
    return [
        {
            "table_database": relation.database,
            "table_schema": relation.schema,
            "table_name": relation.identifier,
            "table_type": str(relation.type),
            "table_comment": described.details.get("Comment") or None,
            "table_owner": described.details.get("Owner") or None,
            "column_name": column.name,
            # 1-based, as information_schema.columns.ordinal_position is elsewhere.
            "column_index": (column.column_index or 0) + 1,
            "column_type": column.dtype,
            "column_comment": column.comment,
            **stats_columns,
        }
        for column in described.columns
    ]


def get_catalog_for_single_relation(
    adapter: LakehouseAdapter, relation: BaseRelation
) -> CatalogTable | None:
    described = adapter.describe_relation(relation)
    if described is None:
        return None
    rows = catalog_rows(relation, described)
    return CatalogTable(
        metadata=TableMetadata(
            type=str(relation.type),
            schema=relation.schema or "",
            name=relation.identifier or "",
            database=relation.database,
            comment=described.details.get("Comment") or None,
            owner=described.details.get("Owner") or None,
        ),
        columns={
            row["column_name"]: ColumnMetadata(
                type=row["column_type"],
                index=row["column_index"],
                name=row["column_name"],
                comment=row["column_comment"],
            )
            for row in rows
        },
        stats=stats_items(adapter.table_stats(relation)),
    )


def table_stats(adapter: LakehouseAdapter, relation: BaseRelation) -> TableStats | None:
    """A table's stats from its Iceberg metadata (no scan); None for a view, or a table
    dropped since it was listed."""
    if relation.is_view:
        return None
    table = relation.render()
    try:
        with adapter._spark_session(f"read the metadata of {table}") as spark:
            return read_table_stats(spark, table)
    except (RelationMissingError, NamespaceMissingError):
        return None  # a view of unknown type lands here too: it has no snapshots
