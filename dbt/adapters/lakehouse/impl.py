"""The dbt adapter: relation listing and metadata from the Iceberg catalog, and the Python
helpers the macros call (partition rendering, seed loading).

Built on dbt-spark's adapter for what is the same on any Spark (type conversion for seeds,
quoting, the rows-different SQL used by tests); everything that reads catalog metadata is ours,
because a failed lookup must never be mistaken for a missing table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import AdapterConfig, available
from dbt.adapters.base.impl import FreshnessResponse
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.contracts.relation import RelationConfig, RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt.adapters.sql import SQLAdapter
from dbt_common.contracts.metadata import CatalogTable

from dbt.adapters.lakehouse.audit import adapter as audit
from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.config import LakehouseConfig
from dbt.adapters.lakehouse.connections import (
    LakehouseAdapterResponse,
    LakehouseConnectionManager,
    LakehouseHandle,
)
from dbt.adapters.lakehouse.delta_mirror import adapter as delta_mirror
from dbt.adapters.lakehouse.delta_mirror.sync import MirrorResult
from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.engine.diagnosis import check_failure_sql
from dbt.adapters.lakehouse.engine.sql_origin import config_sql
from dbt.adapters.lakehouse.exceptions import (
    NamespaceMissingError,
    RelationMissingError,
    ViewsUnsupportedError,
)
from dbt.adapters.lakehouse.iceberg import catalog, freshness
from dbt.adapters.lakehouse.iceberg.describe import RelationDescription, read_description
from dbt.adapters.lakehouse.iceberg.lineage import node_snapshot
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.table_stats import TableStats
from dbt.adapters.lakehouse.maintenance import adapter as maintenance
from dbt.adapters.lakehouse.models.incremental import (
    iceberg_type,
    plan_type_change_rows,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from dbt.adapters.lakehouse.models.partitioning import partition_clause
from dbt.adapters.lakehouse.models.seeds import SeedLoad, load_agate_rows, load_seed_file
from dbt.adapters.lakehouse.profile import debug
from dbt.adapters.lakehouse.relation import LakehouseRelation, split_table_name
from dbt.adapters.lakehouse.time_travel import adapter as time_travel
from dbt.adapters.lakehouse.time_travel.as_of import AsOf

if TYPE_CHECKING:
    import agate

logger = AdapterLogger("Lakehouse")

SHOW_RELATIONS_MACRO = "lakehouse__show_relations"
DESCRIBE_MACRO = "lakehouse__describe_relation"
LIST_SCHEMAS_MACRO = "list_schemas"


class LakehouseAdapter(SparkAdapter):
    Relation = LakehouseRelation  # type: ignore[assignment]
    Column = LakehouseColumn  # type: ignore[assignment]
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = LakehouseConfig  # type: ignore[assignment]
    # Source freshness without loaded_at_field: the last commit, from the table's metadata.
    _capabilities = CapabilityDict(
        {
            Capability.TableLastModifiedMetadata: CapabilitySupport(support=Support.Full),
            Capability.TableLastModifiedMetadataBatch: CapabilitySupport(support=Support.Full),
        }
    )

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # Dual-format tables an audited run wrote on its branch: mirrored after the publish.
        self._delta_after_publish: set[TableName] = set()

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
        return plan_type_change_rows(model_name, changes)

    @available
    def check_failure_sql(self, message_sql: str) -> str:
        """SQL failing its statement with `message_sql`, reported as that message alone."""
        return check_failure_sql(message_sql)

    @available
    def note_config_sql(self, config: dict[str, Any]) -> None:
        """The SQL the running node's configs contribute, so an engine error on a column written
        there names the config (engine/sql_origin.py)."""
        self.connections.note_config_sql(config_sql(config))  # type: ignore[attr-defined]

    @available
    def iceberg_type(self, spark_type: str) -> str:
        return iceberg_type(spark_type)

    @available
    def partition_transforms(self, relation: BaseRelation) -> list[str]:
        """The table's current Iceberg partition fields (e.g. ['days(ts)']); [] if unpartitioned."""
        described = self.describe_relation(relation)
        return [] if described is None else described.partitioning

    # ---- maintenance ----
    # Iceberg's maintenance procedures (maintenance/adapter.py): a model's `maintenance` config,
    # run after its build, and `dbt run-operation lakehouse_maintain` over many tables.

    @available
    def maintenance_plan(self, config: Any, model_name: str, write_order_by: Any) -> list[str]:
        """Check a model's `maintenance` config before anything is written (a compile error
        listing what is accepted); the operations to run after its build, in the safe order."""
        return maintenance.maintenance_plan(config, model_name, write_order_by)

    @available
    def maintain_after_run(
        self, relation: BaseRelation, config: Any, model_name: str, write_order_by: Any
    ) -> str:
        """A model's `maintenance.after_run`, after its write and post-hooks. A table an
        audited run writes holds the run's rows on its branch until the run publishes, so
        nothing runs on it then (run lakehouse_maintain after the publish)."""
        return maintenance.maintain_after_run(self, relation, config, model_name, write_order_by)

    @available
    def maintain_tables(self, tables: list[dict[str, Any]], operations: Any, dry_run: Any) -> str:
        """`lakehouse_maintain`: the operations on each table (each a dict of `relation`,
        `config` (its maintenance config) and `write_order_by`), one line per table and
        operation; a failure does not stop the others, and raises at the end."""
        return maintenance.maintain_tables(self, tables, operations, dry_run)

    @staticmethod
    def _maintenance_target(
        relation: BaseRelation, config: Any, write_order_by: Any, run_invocation: str | None = None
    ) -> Any:
        return maintenance.maintenance_target(relation, config, write_order_by, run_invocation)

    # ---- one write, two formats (delta_mirror/adapter.py) ----------------------------------------

    @available
    def table_formats(self, value: Any, owner: str) -> list[str]:
        """A node's `table_formats` checked; without one, its depot's default, else iceberg."""
        return delta_mirror.table_formats(self, value, owner)

    @available
    def delta_table_properties(self, configured: dict[str, Any], model_name: str) -> dict[str, str]:
        """The properties a dual-format table is created with; merge-on-read refused."""
        return delta_mirror.delta_table_properties(self, configured, model_name)

    @available
    def check_delta_table(self, relation: BaseRelation, model_name: str) -> None:
        """Before writing to an existing dual-format table: it must be copy-on-write, and its
        schema one the Delta log can follow (no column renamed outside dbt)."""
        delta_mirror.check_delta_table(self, relation, model_name)

    @available
    def check_delta_schema_change(
        self, relation: BaseRelation, added: list[str], retyped: list[str], model_name: str
    ) -> None:
        """Before an in-place schema change of a dual-format table: a type change, or a name
        added again while files written with the dropped column are live, is refused."""
        delta_mirror.check_delta_schema_change(self, relation, added, retyped, model_name)

    @available
    def mirror_delta(self, relation: BaseRelation, model_name: str) -> str:
        """After a node's commits: the Delta log follows `main`. An audited run's writes are
        on its branch until the publish, which mirrors them then."""
        return delta_mirror.mirror_delta(self, relation, model_name)

    @available
    def sync_delta(self, relations: list[BaseRelation]) -> str:
        """`lakehouse_sync_delta`: each table's Delta log brought to its current snapshot,
        one line per table; tables not built yet are skipped, failures raise at the end."""
        return delta_mirror.sync_delta(self, relations)

    def _mirror(self, spark: Any, table: TableName, owner: str) -> None:
        delta_mirror.mirror(self, spark, table, owner)

    @staticmethod
    def _report_mirror(result: MirrorResult) -> None:
        delta_mirror.report_mirror(result)

    def _delta_options(self, table: TableName) -> dict[str, str]:
        return delta_mirror.delta_options(self, table)

    def _resolved(self) -> Any:
        from dbt.adapters.lakehouse.profile.resolved import resolve_profile

        return resolve_profile(self.config.credentials)  # type: ignore[arg-type]

    def _scrubbed(self, text: str) -> str:
        from dbt.adapters.lakehouse.profile.secrets import scrub

        return scrub(text, self._resolved().secret_values())

    # ---- audited runs (write-audit-publish, audit/adapter.py) ------------------------------------

    @available
    def prepare_audited_write(
        self, relation: BaseRelation, model_config: Any, node_id: str, resource_type: str
    ) -> str | None:
        """Before a node's first write to a table: the run's audit branch when the write goes
        there (the table then takes branch writes), else None (the table takes none).

        Outside an audited run nothing is done. Tests never audit: their failure tables are
        the audit's output. A model opts out with config `write_audit_publish: false`.
        """
        return audit.prepare_audited_write(self, relation, model_config, node_id, resource_type)

    @available
    def plan_branch_replace(
        self, relation: BaseRelation, columns: list[Any], partition_by: Any, model_name: str
    ) -> dict[str, list[Any]]:
        """The schema and partition changes an audited replace of `relation` makes first."""
        return audit.plan_branch_replace(self, relation, columns, partition_by, model_name)

    @available
    def publish_audit_branch(
        self,
        branch: str,
        relations: list[BaseRelation],
        dual_format: list[BaseRelation] | None = None,
    ) -> str:
        """`lakehouse_publish`: fast-forward `main` of every given table holding the branch;
        the Delta logs of the `dual_format` ones follow."""
        return audit.publish_audit_branch(self, branch, relations, dual_format)

    @available
    def discard_audit_branch(self, branch: str, relations: list[BaseRelation]) -> str:
        """`lakehouse_discard`: drop the branch (and its rows) from every given table."""
        return audit.discard_audit_branch(self, branch, relations)

    def _end_branch(
        self, branch: str, relations: list[BaseRelation], action: str, end: audit.End
    ) -> tuple[str, list[str]]:
        return audit.end_branch(self, branch, relations, action, end)

    @staticmethod
    def _no_branch_message(branch: str, tables: list[TableName]) -> str:
        return audit.no_branch_message(branch, tables)

    def cleanup_connections(self) -> None:
        """The end of a dbt invocation: an audited run publishes here, after its last test."""
        try:
            self._finish_audited_run()
        finally:
            super().cleanup_connections()

    def _finish_audited_run(self) -> None:
        audit.finish_audited_run(self)

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
        return read_description(rows, relation)

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        described = self.describe_relation(relation)
        return [] if described is None else [*described.columns]

    # ---- commit lineage ----------------------------------------------------------------------

    @available
    def write_response(
        self, relation: BaseRelation, message: str, code: str, rows_affected: int | None
    ) -> LakehouseAdapterResponse:
        """The response of a write a materialization reports without `statement('main')`
        (seeds), with the snapshot this node's last commit to `relation` in this run made
        (iceberg/lineage.py); None when it committed none."""
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        return LakehouseAdapterResponse(
            _message=message,
            code=code,
            rows_affected=rows_affected,
            snapshot_id=node_snapshot(handle.spark, handle.name, relation.render()),
        )

    # ---- docs catalog (iceberg/catalog.py) ---------------------------------------------------

    def get_catalog(
        self,
        relation_configs: Iterable[RelationConfig],
        used_schemas: frozenset[tuple[str, str]],
    ) -> tuple[agate.Table, list[Exception]]:
        return catalog.get_catalog(self, relation_configs, used_schemas)

    def _get_one_catalog(
        self,
        information_schema: InformationSchema,
        schemas: set[str],
        used_schemas: frozenset[tuple[str, str]],
    ) -> agate.Table:
        return catalog.get_one_catalog(self, information_schema, schemas)

    @staticmethod
    def _catalog_rows(
        relation: BaseRelation, described: RelationDescription, stats: TableStats | None = None
    ) -> list[dict[str, Any]]:
        return catalog.catalog_rows(relation, described, stats)

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        return catalog.get_catalog_for_single_relation(self, relation)

    # ---- table stats and source freshness from metadata (iceberg/freshness.py) ---------------

    def table_stats(self, relation: BaseRelation) -> TableStats | None:
        """A table's stats from its Iceberg metadata (no scan); None for a view, or a table
        dropped since it was listed."""
        return catalog.table_stats(self, relation)

    def calculate_freshness_from_metadata_batch(
        self, sources: list[BaseRelation], macro_resolver: Any = None
    ) -> tuple[list[Any], dict[BaseRelation, FreshnessResponse]]:
        """`dbt source freshness` for sources without `loaded_at_field`: the commit time of
        each table's current snapshot, from its metadata. A source that is a view or missing
        is left out; dbt then asks `calculate_freshness_from_metadata`, which says why."""
        return freshness.freshness_batch(self, sources)

    def calculate_freshness_from_metadata(
        self, source: BaseRelation, macro_resolver: Any = None
    ) -> tuple[Any, FreshnessResponse]:
        return freshness.freshness(self, source)

    def _metadata_freshness(self, source: BaseRelation) -> FreshnessResponse:
        return freshness.metadata_freshness(self, source)

    def _metadata_connection(self) -> AbstractContextManager[None]:
        return freshness.metadata_connection(self)

    # ---- time travel (time_travel/adapter.py) ---------------------------------------------------

    @available
    def time_travel_relation(
        self, relation: Any, as_of: dict[str, Any], execute: bool
    ) -> LakehouseRelation:
        """`relation` read as of a point of its history (`lakehouse.as_of`).

        When the node runs (not under parse, compile or docs generate), the point is checked
        against the table's history first, so a point it lacks fails naming the table.
        The arguments are checked once the relation is real: while dbt parses, `ref()` gives
        the calling model, and a message would name it instead of the table read.
        """
        return time_travel.time_travel_relation(self, relation, as_of, execute)

    def check_time_travel(self, relation: LakehouseRelation, as_of: AsOf) -> None:
        """Fail, naming the table, unless it has the point `as_of` reads (also for sources)."""
        time_travel.check_time_travel(self, relation, as_of)

    @available
    def rollback_table(self, relation: Any, to: Any) -> list[str]:
        """Move `main` of a table back to a snapshot id or the state at a timestamp
        (`lakehouse_rollback`); the lines to print, main before and after.

        Refused, with nothing changed, when the target is not an ancestor of main's current
        snapshot, or when no ancestor is older than the timestamp.
        """
        return time_travel.rollback_table(self, relation, to)

    def _mirror_if_dual(self, table: TableName) -> None:
        """A table whose root holds a Delta log gets it moved along with `main`."""
        time_travel.mirror_if_dual(self, table)

    def _logged_delta_uri(self, spark: Any, table: TableName) -> str | None:
        """The table's root as Delta readers address it, if a Delta log is there."""
        return time_travel.logged_delta_uri(self, spark, table)

    def _delta_log(self, spark: Any) -> Any:
        """Maintenance's view of dual-format tables' Delta logs on this session."""
        return maintenance.delta_log(self, spark)

    def _time_travel_table(self, relation: Any) -> LakehouseRelation:
        """A relation, or a `schema.table` / `catalog.schema.table` name (the target's catalog
        when it has two parts), as a table relation."""
        return time_travel.time_travel_table(self, relation)

    def _metadata_rows(self, sql: str) -> list[tuple[Any, ...]]:
        """A metadata query's rows as Spark returns them (agate would guess the types)."""
        return time_travel.metadata_rows(self, sql)

    # ---- Python models (models/python_models.py) -------------------------------------------------

    @available
    def python_model_view(self, compiled_code: str, model_name: str, model_path: str) -> str:
        """Run a Python model's code in this session; its DataFrame as a temporary view, which
        the materialization writes like a SQL model's `select * from <view>`."""
        from dbt.adapters.lakehouse.models.python_models import run_as_view

        model_file = str(Path(self.config.project_root) / model_path)
        with self._engine(f"python model {model_name}") as spark:
            return run_as_view(
                spark, compiled_code, model_name, model_file, model_path, self._scrubbed
            )

    # ---- helpers for macros ------------------------------------------------------------------

    @available
    def partition_clause(
        self, partition_by: Any, columns: list[str] | None, model_name: str
    ) -> str:
        """Validate `partition_by` (against the model's columns when known) and render it."""
        return partition_clause(partition_by, columns, model_name)

    @available
    def split_table_name(self, name: str) -> tuple[str, str]:
        return split_table_name(name)

    @available
    def load_seed_file(self, model: dict[str, Any], view_name: str) -> SeedLoad | None:
        """Register a seed's rows as a temporary view straight from its CSV file, or None when
        only dbt's agate table reads the file as dbt defines (then `load_seed_rows`)."""
        with self._engine(f"load seed {model['name']}") as spark:
            return load_seed_file(spark, model, view_name, self.convert_type)

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
            engine.tag_thread(handle.spark, handle.job_group)
            yield handle.spark

    @available
    def drop_temp_view(self, view_name: str) -> None:
        self.connections.get_thread_connection().handle.drop_view(view_name)

    @available
    def materialize_temp_view(self, view_name: str) -> str:
        """Compute a temporary view's rows once and point the view at them.

        A local checkpoint, not CACHE TABLE: it is computed eagerly in this session and cuts the
        lineage, so the key check and the MERGE read the same rows without the model's query
        running again; CACHE TABLE would plan in a cloned session that reloads the catalogs and
        re-caches after every write to the tables it reads. The rows stay with the executors
        until the view is dropped and Spark's cleaner frees them.
        """
        logger.debug(f"materializing temporary view {view_name}")
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        with self._engine(f"materialize temporary view {view_name}"):
            handle.compute_view(view_name)
        return ""

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {"adapter_type": "lakehouse", "table_format": "iceberg"}

    def debug_query(self) -> None:
        """`dbt debug`: every depot's storage and catalog checks first, then Spark itself.

        The preflight needs no Spark, so a missing bucket or a rejected token is reported in
        seconds, with its fix, before a JVM starts. Problems of all depots come together.
        """
        debug.debug_query(self)


__all__ = ["LakehouseAdapter", "LakehouseConfig", "AdapterConfig"]
