"""The dbt adapter: relation listing and metadata from the Iceberg catalog, and the Python
helpers the macros call (partition rendering, seed loading).

Built on dbt-spark's adapter for what is the same on any Spark (type conversion for seeds,
quoting, the rows-different SQL used by tests); everything that reads catalog metadata is ours,
because a failed lookup must never be mistaken for a missing table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import AdapterConfig, available
from dbt.adapters.base.impl import catch_as_completed
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.contracts.relation import RelationConfig, RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt.adapters.sql import SQLAdapter
from dbt_common.clients.agate_helper import DEFAULT_TYPE_TESTER
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, TableMetadata
from dbt_common.utils import executor

from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.config import LakehouseConfig
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager, LakehouseHandle
from dbt.adapters.lakehouse.exceptions import (
    NamespaceMissingError,
    PreflightError,
    RelationMissingError,
    ViewsUnsupportedError,
    check_failure_sql,
)
from dbt.adapters.lakehouse.incremental import (
    TypeChange,
    iceberg_type,
    plan_type_changes,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from dbt.adapters.lakehouse.partitioning import (
    parse_partition_by,
    render_partition_clause,
    validate_partition_columns,
)
from dbt.adapters.lakehouse.relation import LakehouseRelation, split_table_name
from dbt.adapters.lakehouse.seeds import SeedLoad, load_agate_rows, load_with_spark

if TYPE_CHECKING:
    import agate

logger = AdapterLogger("Lakehouse")

SHOW_RELATIONS_MACRO = "lakehouse__show_relations"
DESCRIBE_MACRO = "lakehouse__describe_relation"
LIST_SCHEMAS_MACRO = "list_schemas"


@dataclass
class RelationDescription:
    columns: list[LakehouseColumn]
    details: dict[str, str]
    # Iceberg partition fields as DESCRIBE prints them, e.g. ['days(ts)', 'bucket(16, id)'].
    partitioning: list[str]


class LakehouseAdapter(SparkAdapter):
    Relation = LakehouseRelation  # type: ignore[assignment]
    Column = LakehouseColumn  # type: ignore[assignment]
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = LakehouseConfig  # type: ignore[assignment]

    @classmethod
    def convert_time_type(cls, agate_table: agate.Table, col_idx: int) -> str:
        # Spark SQL has no TIME type; keep the text rather than fail the seed.
        return "string"

    def valid_incremental_strategies(self) -> list[str]:
        return ["append", "merge", "replace", "insert_overwrite", "delete+insert", "microbatch"]

    @available
    def resolve_incremental_strategy(
        self, raw_strategy: str | None, unique_key: Any, model_name: str, custom_macros: list[str]
    ) -> str:
        """The strategy a model runs with, or a compile error listing the accepted ones.

        Without a configured strategy: `merge` when a unique_key is set, else `append`. A name
        outside the built-in list is a custom strategy when its macro exists.
        """
        return resolve_incremental_strategy(
            raw_strategy,
            unique_key,
            model_name,
            valid=self.valid_incremental_strategies(),
            builtin=self.builtin_incremental_strategies(),
            custom_macros=custom_macros,
        )

    @available
    def validate_incremental_config(
        self, model_name: str, strategy: str, config: dict[str, Any]
    ) -> str:
        """Check the model's incremental configs against its strategy (all problems at once)."""
        validate_incremental_config(
            model_name, strategy, config, builtin=self.valid_incremental_strategies()
        )
        return ""

    @available
    def validate_incremental_columns(
        self, model_name: str, strategy: str, config: dict[str, Any], columns: list[Any]
    ) -> str:
        """Check that the configs naming columns name columns the model's query produces."""
        validate_model_columns(
            model_name,
            strategy,
            config,
            [getattr(column, "name", column) for column in columns],
            builtin=self.valid_incremental_strategies(),
        )
        return ""

    @available
    def plan_column_type_changes(
        self, model_name: str, changes: list[dict[str, str]]
    ) -> list[dict[str, str]]:
        """The type widenings Iceberg can apply in place; an error naming any other change."""
        planned = plan_type_changes(
            model_name,
            [TypeChange(c["column_name"], c["old_type"], c["new_type"]) for c in changes],
        )
        return [
            {"column_name": c.column, "old_type": c.old_type, "new_type": c.new_type}
            for c in planned
        ]

    @available
    def check_failure_sql(self, message_sql: str) -> str:
        """SQL failing its statement with `message_sql`, reported as that message alone."""
        return check_failure_sql(message_sql)

    @available
    def iceberg_type(self, spark_type: str) -> str:
        return iceberg_type(spark_type)

    @available
    def partition_transforms(self, relation: BaseRelation) -> list[str]:
        """The table's current Iceberg partition fields (e.g. ['days(ts)']); [] if unpartitioned."""
        described = self.describe_relation(relation)
        return [] if described is None else described.partitioning

    # ---- relations -------------------------------------------------------------------------

    def get_relation(self, database: str, schema: str, identifier: str) -> BaseRelation | None:
        # dbt-spark forgets the database; here it is the catalog and must take part.
        return SQLAdapter.get_relation(self, database, schema, identifier)

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        relations: list[BaseRelation] = []
        for kind, relation_type in (("tables", RelationType.Table), ("views", RelationType.View)):
            try:
                rows = self.execute_macro(
                    SHOW_RELATIONS_MACRO, kwargs={"schema_relation": schema_relation, "kind": kind}
                )
            except NamespaceMissingError:
                # Only a namespace that does not exist means "no relations"; any other failure
                # (catalog down, permission) must surface, or dbt would rebuild over history.
                return []
            except ViewsUnsupportedError:
                if kind == "views":
                    continue  # e.g. the hadoop catalog: it cannot hold views at all
                raise
            for row in rows:
                if len(row) > 2 and row[2] in (True, "true"):
                    continue  # a session-local temporary view, not part of the lakehouse
                relations.append(
                    self.Relation.create(
                        database=schema_relation.database,
                        schema=schema_relation.schema,
                        identifier=row[1],
                        type=relation_type,
                    )
                )
        return relations

    def drop_schema(self, relation: BaseRelation) -> None:
        # Views first, then tables: a namespace only drops once it is empty.
        contents = self.list_relations_without_caching(relation)
        for existing in sorted(contents, key=lambda r: r.type != RelationType.View):
            self.drop_relation(existing)
        super().drop_schema(relation)

    def check_schema_exists(self, database: str, schema: str) -> bool:
        results = self.execute_macro(LIST_SCHEMAS_MACRO, kwargs={"database": database})
        return schema.lower() in {str(row[0]).lower() for row in results}

    # ---- columns and metadata ----------------------------------------------------------------

    def describe_relation(self, relation: BaseRelation) -> RelationDescription | None:
        """Columns and table details from one DESCRIBE EXTENDED; None if it does not exist."""
        try:
            rows = self.execute_macro(DESCRIBE_MACRO, kwargs={"relation": relation})
        except (RelationMissingError, NamespaceMissingError):
            return None
        columns: list[LakehouseColumn] = []
        details: dict[str, str] = {}
        partitioning: list[str] = []
        in_columns = True
        in_partitioning = False
        in_details = False
        for row in rows:
            name, data_type, comment = (row[0] or "").strip(), row[1], row[2]
            if in_columns:
                if not name or name.startswith("#"):
                    in_columns = False
                else:
                    columns.append(
                        LakehouseColumn(
                            table_database=relation.database,
                            table_schema=relation.schema,
                            table_name=relation.identifier,
                            table_type=relation.type,
                            column=name,
                            dtype=str(data_type),
                            column_index=len(columns),
                            comment=comment or None,
                        )
                    )
                    continue
            if name == "# Partitioning":
                in_partitioning = True
                continue
            if in_partitioning:
                if name.startswith("Part "):
                    partitioning.append(str(data_type).strip())
                    continue
                in_partitioning = False
            if name.startswith("# Detailed") or name.startswith("# View Information"):
                in_details = True
                continue
            if in_details and name and not name.startswith("#"):
                details[name] = "" if data_type is None else str(data_type)
        return RelationDescription(columns=columns, details=details, partitioning=partitioning)

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        described = self.describe_relation(relation)
        return [] if described is None else [*described.columns]

    # ---- docs catalog ------------------------------------------------------------------------

    def get_catalog(
        self,
        relation_configs: Iterable[RelationConfig],
        used_schemas: frozenset[tuple[str, str]],
    ) -> tuple[agate.Table, list[Exception]]:
        schema_map = self._get_catalog_schemas(relation_configs)
        with executor(self.config) as tpe:
            futures: list[Future[agate.Table]] = []
            for info, schemas in schema_map.items():
                for schema in schemas:
                    futures.append(
                        tpe.submit_connected(
                            self,
                            f"{info.database}.{schema}",
                            self._get_one_catalog,
                            info,
                            {schema},
                            used_schemas,
                        )
                    )
            catalogs, exceptions = catch_as_completed(futures)
        return catalogs, exceptions

    def _get_one_catalog(
        self,
        information_schema: InformationSchema,
        schemas: set[str],
        used_schemas: frozenset[tuple[str, str]],
    ) -> agate.Table:
        import agate

        rows: list[dict[str, Any]] = []
        for schema in schemas:
            for relation in self.list_relations(information_schema.database, schema):
                described = self.describe_relation(relation)
                if described is not None:  # None: dropped between listing and describing
                    rows.extend(self._catalog_rows(relation, described))
        return agate.Table.from_object(rows, column_types=DEFAULT_TYPE_TESTER)

    @staticmethod
    def _catalog_rows(
        relation: BaseRelation, described: RelationDescription
    ) -> list[dict[str, Any]]:
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
            }
            for column in described.columns
        ]

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        described = self.describe_relation(relation)
        if described is None:
            return None
        rows = self._catalog_rows(relation, described)
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
            stats={},
        )

    # ---- helpers for macros ------------------------------------------------------------------

    @available
    def partition_clause(
        self, partition_by: Any, columns: list[str] | None, model_name: str
    ) -> str:
        """Validate `partition_by` (against the model's columns when known) and render it."""
        fields = parse_partition_by(partition_by, model_name)
        if fields and columns is not None:
            validate_partition_columns(fields, columns, model_name)
        return render_partition_clause(fields)

    @available
    def split_table_name(self, name: str) -> tuple[str, str]:
        return split_table_name(name)

    @available
    def load_seed_file(self, model: dict[str, Any], view_name: str) -> SeedLoad | None:
        """Register a seed's rows as a temporary view straight from its CSV file, or None when
        only dbt's agate table reads the file as dbt defines (then `load_seed_rows`)."""
        path = Path(model["root_path"]) / model["original_file_path"]
        if not path.is_file():
            return None
        config = model.get("config", {})
        with self._engine(f"load seed {model['name']}") as spark:
            return load_with_spark(
                spark,
                view_name,
                path,
                delimiter=config.get("delimiter") or ",",
                text_columns=set(config.get("column_types") or {}),
                convert_type=self.convert_type,
            )

    @available
    def load_seed_rows(self, view_name: str, agate_table: agate.Table) -> SeedLoad:
        """Register the rows of dbt's agate table as a temporary view."""
        with self._engine(f"load seed rows into {view_name}") as spark:
            return load_agate_rows(spark, view_name, agate_table, self.convert_type)

    @contextmanager
    def _engine(self, action: str) -> Iterator[Any]:
        """The thread's Spark session for work outside SQL statements: cancellable with the
        node, and its failures mapped like a statement's."""
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        with self.connections.exception_handler(action):
            handle.spark.sparkContext.setJobGroup(
                handle.job_group, "dbt-lakehouse", interruptOnCancel=True
            )
            yield handle.spark

    @available
    def drop_temp_view(self, view_name: str) -> None:
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        handle.spark.catalog.dropTempView(view_name)

    @available
    def materialize_temp_view(self, view_name: str) -> str:
        """Compute a temporary view's rows once and point the view at them.

        A local checkpoint, not CACHE TABLE: it is computed eagerly in this session and cuts the
        lineage, so the key check and the MERGE read the same rows without the model's query
        running again; CACHE TABLE would plan in a cloned session that reloads the catalogs and
        re-caches after every write to the tables it reads. The rows stay with the executors
        until the view is dropped and Spark's cleaner frees them.
        """
        logger.debug(f"Lakehouse: materializing temporary view {view_name}")
        with self._engine(f"materialize temporary view {view_name}") as spark:
            rows = spark.table(view_name).localCheckpoint(eager=True)
            rows.createOrReplaceTempView(view_name)
        return ""

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {"adapter_type": "lakehouse", "table_format": "iceberg"}

    def debug_query(self) -> None:
        """`dbt debug`: every depot's storage and catalog checks first, then Spark itself.

        The preflight needs no Spark, so a missing bucket or a rejected token is reported in
        seconds, with its fix, before a JVM starts. Problems of all depots come together.
        """
        from dbt.adapters.lakehouse.preflight import run_preflight
        from dbt.adapters.lakehouse.resolved import resolve_profile

        credentials = self.config.credentials
        resolved = resolve_profile(credentials)  # type: ignore[arg-type]
        problems: list[PreflightError] = []
        checks = [(credentials.depot_label, resolved.depot)]  # type: ignore[attr-defined]
        checks += [(f"`depots: {m.catalog}` {m.label}", m.depot) for m in resolved.mounted]
        for label, depot in checks:
            report = run_preflight(depot)
            for line in report.passed:
                logger.info(f"preflight ({label}): {line}")
            try:
                report.raise_for_problems(label)
            except PreflightError as exc:
                problems.append(exc)
        if problems:
            raise PreflightError("\n".join(p.msg for p in problems))
        self.execute("select 1 as id")
        # Spark's own view of each catalog: it loads and answers a listing.
        for catalog in [credentials.database, *(m.catalog for m in resolved.mounted)]:
            self.execute(f"show namespaces in {self.quote(catalog)}")


__all__ = ["LakehouseAdapter", "LakehouseConfig", "AdapterConfig"]
