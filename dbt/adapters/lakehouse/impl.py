"""The dbt adapter: dbt's overrides (relations and metadata from the Iceberg catalog) and the
methods macros call, each delegating to the feature package that owns it.

Built on dbt-spark's adapter for what is the same on any Spark (type conversion for seeds,
quoting, the rows-different SQL used by tests); everything that reads catalog metadata is ours,
because a failed lookup must never be mistaken for a missing table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.impl import FreshnessResponse
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig
from dbt.adapters.contracts.relation import RelationConfig, RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter
from dbt.adapters.sql import SQLAdapter
from dbt_common.contracts.metadata import CatalogTable

from dbt.adapters.lakehouse.audit import adapter as audit
from dbt.adapters.lakehouse.behavior_flags import behavior_of
from dbt.adapters.lakehouse.catalogs import adapter as catalogs
from dbt.adapters.lakehouse.catalogs.integrations import CATALOG_INTEGRATIONS
from dbt.adapters.lakehouse.checkpoints.methods import CheckpointMethods
from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.config import LakehouseConfig
from dbt.adapters.lakehouse.connections import (
    LakehouseConnectionManager,
    LakehouseHandle,
)
from dbt.adapters.lakehouse.delta_mirror import adapter as delta_mirror
from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.sql_errors import check_failure_sql
from dbt.adapters.lakehouse.engine.sql_origin import config_sql
from dbt.adapters.lakehouse.iceberg import catalog, freshness
from dbt.adapters.lakehouse.iceberg.describe_methods import DescribeMethods
from dbt.adapters.lakehouse.iceberg.listing import list_relations, list_schema_names
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.table_stats import TableStats
from dbt.adapters.lakehouse.maintenance import adapter as maintenance
from dbt.adapters.lakehouse.models import adapter as models
from dbt.adapters.lakehouse.models import contracts
from dbt.adapters.lakehouse.models.python_models import run_as_view
from dbt.adapters.lakehouse.models.seeds import SeedLoad, load_agate_rows, load_seed_file
from dbt.adapters.lakehouse.mv.adapter import mark_materialized_views
from dbt.adapters.lakehouse.mv.methods import MaterializedViewMethods
from dbt.adapters.lakehouse.profile import debug
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from dbt.adapters.lakehouse.profile.secrets import scrub
from dbt.adapters.lakehouse.relation import LakehouseRelation, split_table_name
from dbt.adapters.lakehouse.report.response import LakehouseAdapterResponse
from dbt.adapters.lakehouse.reuse.memo import start_engine_unless_covered
from dbt.adapters.lakehouse.reuse.methods import ReuseMethods
from dbt.adapters.lakehouse.reuse.test_methods import TestReuseMethods
from dbt.adapters.lakehouse.time_travel import adapter as time_travel
from dbt.adapters.lakehouse.time_travel.as_of import AsOf

if TYPE_CHECKING:
    import agate
    from dbt.adapters.catalogs import CatalogV2

logger = AdapterLogger("Lakehouse")


class LakehouseAdapter(
    models.ModelMethods,
    MaterializedViewMethods,
    ReuseMethods,
    TestReuseMethods,
    CheckpointMethods,
    DescribeMethods,
    SparkAdapter,
):
    Relation = LakehouseRelation  # type: ignore[assignment]
    Column = LakehouseColumn  # type: ignore[assignment]
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = LakehouseConfig  # type: ignore[assignment]
    CONSTRAINT_SUPPORT = contracts.CONSTRAINT_SUPPORT
    # catalogs.yml write integrations, one class per catalog type (catalogs/integrations.py).
    CATALOG_INTEGRATIONS = CATALOG_INTEGRATIONS
    # Source freshness without loaded_at_field: the last commit, from the table's metadata.
    # CatalogsV2: catalogs.yml v2 (`use_catalogs_v2`), bridged by bridge_v2_catalog.
    _capabilities = CapabilityDict(
        {
            Capability.TableLastModifiedMetadata: CapabilitySupport(support=Support.Full),
            Capability.TableLastModifiedMetadataBatch: CapabilitySupport(support=Support.Full),
            **catalogs.CATALOGS_V2_CAPABILITY,
        }
    )

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # Dual-format tables an audited run wrote on its branch: mirrored after the publish.
        self._delta_after_publish: set[TableName] = set()

    @SparkAdapter.behavior.setter  # type: ignore[attr-defined,untyped-decorator,misc]
    def behavior(self, flags: list[Any]) -> None:
        # dbt-adapters' setter, with flags built without a walk of the call stack each.
        flags = [*flags, *self._behavior_flags]
        self._behavior = behavior_of(flags, getattr(self.config, "flags", {}))  # type: ignore[has-type]

    @classmethod
    def convert_time_type(cls, agate_table: agate.Table, col_idx: int) -> str:
        # Spark SQL has no TIME type; keep the text rather than fail the seed.
        return "string"

    @available
    def check_failure_sql(self, message_sql: str) -> str:
        """SQL failing its statement with `message_sql`, reported as that message alone."""
        return check_failure_sql(message_sql)

    @available
    def note_config_sql(self, config: dict[str, Any]) -> None:
        """The SQL the node's configs contribute: an engine error there names the config."""
        self.connections.note_config_sql(config_sql(config))  # type: ignore[attr-defined]

    # ---- catalogs.yml (catalogs/adapter.py) ------------------------------------------------------

    def add_catalog_integration(self, catalog_integration: CatalogIntegrationConfig) -> Any:
        """A catalogs.yml write integration checked and mounted as a Spark catalog, as a depot
        of the profile's `depots:` is; dbt adds each before it parses the project."""
        return catalogs.add_integration(self, catalog_integration, super().add_catalog_integration)

    @available
    def get_catalog_integration(self, name: str) -> CatalogIntegration:
        return catalogs.get_integration(self, name)  # type: ignore[no-any-return]

    def bridge_v2_catalog(self, catalog: CatalogV2) -> CatalogIntegrationConfig:
        return catalogs.V2Bridge().bridge_v2_catalog(catalog)

    @available
    def catalog_database_of(self, node: Any, custom_database_name: str | None = None) -> Any:
        """generate_database_name: the Spark catalog of a node's `catalog_name` (None without
        one); an unknown name fails the parse, naming the catalogs.yml catalogs."""
        return catalogs.catalog_database_of(self, node, custom_database_name)

    # ---- maintenance (maintenance/adapter.py) ----------------------------------------------------

    @available
    def maintenance_plan(self, config: Any, model_name: str, write_order_by: Any) -> list[str]:
        return maintenance.maintenance_plan(config, model_name, write_order_by)

    @available
    def maintain_after_run(
        self, relation: BaseRelation, config: Any, model_name: str, write_order_by: Any
    ) -> str:
        """A model's `maintenance.after_run`, after its write and post-hooks."""
        return maintenance.maintain_after_run(self, relation, config, model_name, write_order_by)

    @available
    def maintain_tables(
        self, tables: list[dict[str, Any]], operations: Any, dry_run: Any, overrides: Any = None
    ) -> str:
        return maintenance.maintain_tables(self, tables, operations, dry_run, overrides)

    # ---- one write, two formats (delta_mirror/adapter.py) ----------------------------------------

    @available
    def table_formats(self, value: Any, owner: str, database: str | None = None) -> list[str]:
        """A node's `table_formats` checked; without one, the default of the depot its table is
        in (`database`, the catalog), else iceberg."""
        return delta_mirror.table_formats(self, value, owner, database)

    @available
    def delta_table_properties(self, configured: dict[str, Any], model_name: str) -> dict[str, str]:
        """The properties a dual-format table is created with; merge-on-read refused."""
        return delta_mirror.delta_table_properties(self, configured, model_name)

    @available
    def check_delta_table(self, relation: BaseRelation, model_name: str) -> None:
        delta_mirror.check_delta_table(self, relation, model_name)

    @available
    def check_delta_schema_change(
        self, relation: BaseRelation, added: list[str], retyped: list[str], model_name: str
    ) -> None:
        delta_mirror.check_delta_schema_change(self, relation, added, retyped, model_name)

    @available
    def mirror_delta(self, relation: BaseRelation, model_name: str) -> str:
        """After a node's commits: the Delta log follows `main`."""
        return delta_mirror.mirror_delta(self, relation, model_name)

    @available
    def sync_delta(self, relations: list[BaseRelation]) -> str:
        return delta_mirror.sync_delta(self, relations)

    def _resolved(self) -> Any:
        return resolve_profile(self.config.credentials)  # type: ignore[arg-type]

    def _scrubbed(self, text: str) -> str:
        return scrub(text, self._resolved().secret_values())

    # ---- audited runs (write-audit-publish, audit/adapter.py) ------------------------------------

    @available
    def prepare_audited_write(
        self, relation: BaseRelation, model_config: Any, node_id: str, resource_type: str
    ) -> str | None:
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
        return audit.publish_audit_branch(self, branch, relations, dual_format)

    @available
    def discard_audit_branch(self, branch: str, relations: list[BaseRelation]) -> str:
        """`lakehouse_discard`: drop the branch (and its rows) from every given table."""
        return audit.discard_audit_branch(self, branch, relations)

    def cleanup_connections(self) -> None:
        """The end of a dbt invocation: an audited run publishes here, after its last test."""
        try:
            audit.finish_audited_run(self)
        finally:
            super().cleanup_connections()

    # ---- relations, columns and metadata from the catalog -----------------------------------

    def get_relation(self, database: str, schema: str, identifier: str) -> BaseRelation | None:
        # dbt-spark forgets the database; here it is the catalog and must take part.
        return SQLAdapter.get_relation(self, database, schema, identifier)

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        # dbt lists before the first node, the run's nodes selected (`dbt test` lists no
        # schemas): whether they need the engine (reuse/memo.py).
        start_engine_unless_covered(self, str(schema_relation.database))
        # Tables a materialized_view model names are typed so by their properties (mv/).
        return mark_materialized_views(self, list_relations(self, schema_relation))

    def drop_schema(self, relation: BaseRelation) -> None:
        # Views first, then tables: a namespace only drops once it is empty.
        contents = self.list_relations_without_caching(relation)
        for existing in sorted(contents, key=lambda r: r.type != RelationType.View):
            self.drop_relation(existing)
        super().drop_schema(relation)

    def list_schemas(self, database: str) -> list[str]:
        # the run's nodes are selected now: whether they need the engine (reuse/memo.py)
        start_engine_unless_covered(self, database)
        return list_schema_names(self, database)

    def check_schema_exists(self, database: str, schema: str) -> bool:
        return schema.lower() in {name.lower() for name in list_schema_names(self, database)}

    @available
    def node_response(
        self,
        code: str,
        rows_given: int | None = None,
        main: Any = None,
        message: str | None = None,
    ) -> LakehouseAdapterResponse:
        """What the running node did and cost, for run_results.json (report/)."""
        return self.connections.node_response(  # type: ignore[attr-defined, no-any-return]
            code, rows_given, main, message
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

    def get_catalog_for_single_relation(self, relation: BaseRelation) -> CatalogTable | None:
        return catalog.get_catalog_for_single_relation(self, relation)

    # ---- table stats and source freshness from metadata (iceberg/freshness.py) ---------------

    def table_stats(self, relation: BaseRelation) -> TableStats | None:
        return catalog.table_stats(self, relation)

    def calculate_freshness_from_metadata_batch(
        self, sources: list[BaseRelation], macro_resolver: Any = None
    ) -> tuple[list[Any], dict[BaseRelation, FreshnessResponse]]:
        return freshness.freshness_batch(self, sources)

    def calculate_freshness_from_metadata(
        self, source: BaseRelation, macro_resolver: Any = None
    ) -> tuple[Any, FreshnessResponse]:
        return freshness.freshness(self, source)

    # ---- time travel (time_travel/adapter.py) ---------------------------------------------------

    @available
    def time_travel_relation(
        self, relation: Any, as_of: dict[str, Any], execute: bool
    ) -> LakehouseRelation:
        """`relation` read as of a point of its history (`lakehouse.as_of`)."""
        return time_travel.time_travel_relation(self, relation, as_of, execute)

    def check_time_travel(self, relation: LakehouseRelation, as_of: AsOf) -> None:
        """Fail, naming the table, unless it has the point `as_of` reads (also for sources)."""
        time_travel.check_time_travel(self, relation, as_of)

    @available
    def rollback_table(self, relation: Any, to: Any) -> list[str]:
        return time_travel.rollback_table(self, relation, to)

    def _metadata_rows(self, sql: str) -> list[tuple[Any, ...]]:
        """A metadata query's rows as Spark returns them (agate would guess the types)."""
        return time_travel.metadata_rows(self, sql)

    # ---- Python models (models/python_models.py) -------------------------------------------------

    @available
    def python_model_view(self, compiled_code: str, model_name: str, model_path: str) -> str:
        """Run a Python model's code in this session; its DataFrame as a temporary view, which
        the materialization writes like a SQL model's `select * from <view>`."""
        model_file = str(Path(self.config.project_root) / model_path)
        with self._spark_session(f"python model {model_name}") as spark:
            return run_as_view(
                spark, compiled_code, model_name, model_file, model_path, self._scrubbed
            )

    # ---- helpers for macros ------------------------------------------------------------------

    @available
    def split_table_name(self, name: str) -> tuple[str, str]:
        return split_table_name(name)

    @available
    def load_seed_file(self, model: dict[str, Any], view_name: str) -> SeedLoad | None:
        """Register a seed's rows as a temporary view straight from its CSV file, or None when
        only dbt's agate table reads the file as dbt defines (then `load_seed_rows`)."""
        with self._spark_session(f"load seed {model['name']}") as spark:
            return load_seed_file(spark, model, view_name, self.convert_type)

    @available
    def load_seed_rows(self, view_name: str, agate_table: agate.Table) -> SeedLoad:
        """Register the rows of dbt's agate table as a temporary view."""
        with self._spark_session(f"load seed rows into {view_name}") as spark:
            return load_agate_rows(spark, view_name, agate_table, self.convert_type)

    @contextmanager
    def _spark_session(self, action: str) -> Iterator[Any]:
        """The thread's Spark session for work outside SQL statements: cancellable with the
        node, and its failures mapped like a statement's."""
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        with self.connections.exception_handler(action):
            runtime.tag_thread(handle.spark, handle.job_group, handle.job_description)
            yield handle.spark

    @available
    def drop_temp_view(self, view_name: str) -> None:
        self.connections.get_thread_connection().handle.drop_view(view_name)

    @available
    def materialize_temp_view(self, view_name: str) -> str:
        """Compute a temporary view's rows once (the connection handle's compute_view)."""
        with self._spark_session(f"materialize temporary view {view_name}"):
            self.connections.get_thread_connection().handle.compute_view(view_name)
        return ""

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {"adapter_type": "lakehouse", "table_format": "iceberg"}

    def debug_query(self) -> None:
        """`dbt debug`: every depot's storage and catalog checks first, then Spark itself."""
        debug.debug_query(self)
