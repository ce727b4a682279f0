"""The dbt adapter: relation listing and metadata from the Iceberg catalog, and the Python
helpers the macros call (partition rendering, seed loading).

Built on dbt-spark's adapter for what is the same on any Spark (type conversion for seeds,
quoting, the rows-different SQL used by tests); everything that reads catalog metadata is ours,
because a failed lookup must never be mistaken for a missing table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import AdapterConfig, available
from dbt.adapters.base.impl import FreshnessResponse, catch_as_completed
from dbt.adapters.base.relation import BaseRelation, InformationSchema
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.contracts.relation import RelationConfig, RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt.adapters.sql import SQLAdapter
from dbt_common.clients.agate_helper import build_type_tester
from dbt_common.contracts.metadata import CatalogTable, ColumnMetadata, TableMetadata
from dbt_common.utils import executor

from dbt.adapters.lakehouse.audit import run as audit
from dbt.adapters.lakehouse.column import LakehouseColumn
from dbt.adapters.lakehouse.config import LakehouseConfig
from dbt.adapters.lakehouse.connections import (
    LakehouseAdapterResponse,
    LakehouseConnectionManager,
    LakehouseHandle,
)
from dbt.adapters.lakehouse.delta_mirror import log as deltalog
from dbt.adapters.lakehouse.delta_mirror import sync as deltasync
from dbt.adapters.lakehouse.engine import runtime as engine
from dbt.adapters.lakehouse.engine.sql_origin import config_sql
from dbt.adapters.lakehouse.exceptions import (
    NamespaceMissingError,
    PreflightError,
    RelationMissingError,
    ViewsUnsupportedError,
    check_failure_sql,
)
from dbt.adapters.lakehouse.iceberg.lineage import commit_properties, last_committed_snapshot
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.iceberg.table_stats import (
    TEXT_COLUMNS,
    MetadataFreshnessError,
    TableStats,
    catalog_columns,
    read_last_commit,
    read_table_stats,
    stats_items,
)
from dbt.adapters.lakehouse.models.incremental import (
    TypeChange,
    iceberg_type,
    plan_type_changes,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from dbt.adapters.lakehouse.models.partitioning import (
    parse_partition_by,
    render_partition_clause,
    validate_partition_columns,
)
from dbt.adapters.lakehouse.models.seeds import SeedLoad, load_agate_rows, load_with_spark
from dbt.adapters.lakehouse.relation import LakehouseRelation, split_table_name
from dbt.adapters.lakehouse.time_travel.as_of import (
    AsOf,
    TimeTravelError,
    check_as_of,
    checks_now,
    parse_as_of,
    parse_rollback_target,
    parse_table_name,
    plan_rollback,
    read_history,
    rollback_report,
    rollback_sql,
    timestamp_millis,
)

if TYPE_CHECKING:
    import agate

logger = AdapterLogger("Lakehouse")

SHOW_RELATIONS_MACRO = "lakehouse__show_relations"
DESCRIBE_MACRO = "lakehouse__describe_relation"
LIST_SCHEMAS_MACRO = "list_schemas"
# The docs catalog's stats columns that must stay text (tablestats.TEXT_COLUMNS).
CATALOG_TYPES = build_type_tester(TEXT_COLUMNS)


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
    # Iceberg's maintenance procedures (maintenance/operations.py): a model's `maintenance` config,
    # run
    # after its build, and `dbt run-operation lakehouse_maintain` over many tables.

    @available
    def maintenance_plan(self, config: Any, model_name: str, write_order_by: Any) -> list[str]:
        """Check a model's `maintenance` config before anything is written (a compile error
        listing what is accepted); the operations to run after its build, in the safe order."""
        from dbt.adapters.lakehouse.maintenance import operations as maintenance

        owner = f"model '{model_name}'"
        plan = maintenance.parse_config(config, owner)
        if maintenance.COMPACTION in plan.operations:
            compaction = plan.options[maintenance.COMPACTION]
            maintenance.sort_order(str(compaction["strategy"]), write_order_by, owner)
        return list(plan.operations)

    @available
    def maintain_after_run(
        self, relation: BaseRelation, config: Any, model_name: str, write_order_by: Any
    ) -> str:
        """A model's `maintenance.after_run`, after its write and post-hooks. A table an
        audited run writes holds the run's rows on its branch until the run publishes, so
        nothing runs on it then (run lakehouse_maintain after the publish)."""
        from dbt.adapters.lakehouse.maintenance import operations as maintenance

        plan = maintenance.parse_config(config, f"model '{model_name}'")
        if not plan.operations:
            return ""
        run = audit.current_run()
        if run is not None and TableName.of(relation) in run.tables:
            logger.info(
                f"{relation} maintenance after_run skipped: this audited run's rows are on "
                f"branch {run.branch} until the run publishes, and compaction or manifest "
                "rewrites on main would stop that publish. Run `dbt run-operation "
                "lakehouse_maintain` after the publish."
            )
            return ""
        from dbt_common.invocation import get_invocation_id

        with self._engine(f"maintain {relation}") as spark:
            # compaction `scope: run`: the partitions this invocation wrote. Under Spark
            # Connect commits do not name their run (no lineage): the whole table, saying so.
            invocation = None if engine.is_connect(spark) else get_invocation_id()
            target = self._maintenance_target(relation, config, write_order_by, invocation)
            _, failed = maintenance.maintain(
                self._metadata_rows,
                maintenance.hadoop_file_sizes(spark),
                [target],
                plan.operations,
                dry_run=False,
                report=logger.info,
                delta=self._delta_log(spark),
            )
        if failed:
            raise maintenance.MaintenanceError(
                f"Model '{model_name}' was built and its rows are committed, but its "
                "maintenance after_run failed:\n"
                + "\n".join(f"  - {op}: {reason}" for _, op, reason in failed)
                + "\nFix the cause, then run `dbt run-operation lakehouse_maintain` for it, "
                "or remove the operation from after_run."
            )
        return ""

    @available
    def maintain_tables(self, tables: list[dict[str, Any]], operations: Any, dry_run: Any) -> str:
        """`lakehouse_maintain`: the operations on each table (each a dict of `relation`,
        `config` (its maintenance config) and `write_order_by`), one line per table and
        operation; a failure does not stop the others, and raises at the end."""
        from dbt.adapters.lakehouse.maintenance import operations as maintenance

        names = maintenance.parse_operations(operations)
        if not isinstance(dry_run, bool):
            raise maintenance.MaintenanceConfigError(
                f"lakehouse_maintain: dry_run must be true or false, got {dry_run!r}. Nothing "
                "was changed."
            )
        targets, failed = maintenance.select_targets(
            tables,
            lambda t: str(TableName.of(t["relation"])),
            lambda t: self._maintenance_target(
                t["relation"], t.get("config"), t.get("write_order_by")
            ),
            logger.info,
        )
        if targets:
            with self._engine("lakehouse_maintain") as spark:
                _, operations_failed = maintenance.maintain(
                    self._metadata_rows,
                    maintenance.hadoop_file_sizes(spark),
                    targets,
                    names,
                    dry_run=dry_run,
                    report=logger.info,
                    delta=self._delta_log(spark),
                )
            failed += operations_failed
        if failed:
            raise maintenance.MaintenanceError(maintenance.failure_summary(failed, len(tables)))
        return ""

    @staticmethod
    def _maintenance_target(
        relation: BaseRelation, config: Any, write_order_by: Any, run_invocation: str | None = None
    ) -> Any:
        from dbt.adapters.lakehouse.maintenance import operations as maintenance

        plan = maintenance.parse_config(config, f"table {relation}")
        return maintenance.Target(
            str(relation.database),
            str(relation.schema),
            str(relation.identifier),
            plan.options,
            write_order_by,
            run_invocation,
        )

    # ---- one write, two formats (delta_mirror/log.py, delta_mirror/sync.py) ----------------------

    @available
    def table_formats(self, value: Any, owner: str) -> list[str]:
        """A node's `table_formats` checked; without one, its depot's default, else iceberg."""
        if value is None:
            value = self._resolved().depot.table_formats
        return list(deltalog.parse_table_formats(value, f"'{owner}'"))

    @available
    def delta_table_properties(self, configured: dict[str, Any], model_name: str) -> dict[str, str]:
        """The properties a dual-format table is created with; merge-on-read refused."""
        with self._engine(f"create the dual-format table of {model_name}") as spark:
            engine.driver_jvm(spark, audit.JAVA_TABLE_FEATURES, audit.WITHOUT_CONNECT)
        keys = deltalog.merge_on_read_keys(configured)
        if keys:
            raise deltalog.DeltaConfigError(
                deltalog.merge_on_read_refusal(
                    f"Model '{model_name}'", keys, "its table_properties config"
                )
            )
        return dict(deltalog.COPY_ON_WRITE)

    @available
    def check_delta_table(self, relation: BaseRelation, model_name: str) -> None:
        """Before writing to an existing dual-format table: it must be copy-on-write, and its
        schema one the Delta log can follow (no column renamed outside dbt)."""
        table = TableName.of(relation)
        with self._engine(f"check {relation} for its Delta log") as spark:
            loaded = audit.load_table(spark, table)
            if loaded is None:
                return
            properties = dict(loaded.properties())
            hazards = deltasync.pending_hazards(spark, table, self._delta_options(table))
        if hazards:
            raise deltalog.DeltaConfigError(
                f"Model '{model_name}' is a dual-format table (table_formats [iceberg, delta]) "
                f"whose schema changed in a way its Delta log cannot follow: "
                + "; ".join(h.reason for h in hazards)
                + ". Nothing was written. Fix: rebuild it with --full-refresh (every file is "
                "then written anew), or undo the change."
            )
        keys = deltalog.merge_on_read_keys(properties)
        if keys:
            raise deltalog.DeltaConfigError(
                deltalog.merge_on_read_refusal(
                    f"Model '{model_name}'", keys, f"the existing table {relation}"
                )
                + f" (ALTER TABLE {relation} SET TBLPROPERTIES for each to copy-on-write, "
                "or --full-refresh)"
            )

    @available
    def check_delta_schema_change(
        self, relation: BaseRelation, added: list[str], retyped: list[str], model_name: str
    ) -> None:
        """Before an in-place schema change of a dual-format table: a type change, or a name
        added again while files written with the dropped column are live, is refused."""
        owner = f"Model '{model_name}'"
        if retyped:
            raise deltalog.DeltaConfigError(deltalog.type_change_refusal(owner, retyped))
        if not added:
            return
        table = TableName.of(relation)
        with self._engine(f"check schema change of {relation}") as spark:
            loaded = audit.load_table(spark, table)
            snapshot = None if loaded is None else loaded.currentSnapshot()
            if snapshot is None:
                return
            writing = deltasync.writing_schemas(spark, table, loaded, int(snapshot.snapshotId()))
        held = {name for schema in writing for name in schema.values()}
        again = [name for name in added if name in held]
        if again:
            raise deltalog.DeltaConfigError(deltalog.readd_refusal(owner, again))

    @available
    def mirror_delta(self, relation: BaseRelation, model_name: str) -> str:
        """After a node's commits: the Delta log follows `main`. An audited run's writes are
        on its branch until the publish, which mirrors them then."""
        table = TableName.of(relation)
        run = audit.current_run()
        if run is not None and table in run.tables:
            self._delta_after_publish.add(table)
            return ""
        with self._engine(f"mirror {relation} to its Delta log") as spark:
            self._mirror(spark, table, model_name)
        return ""

    @available
    def sync_delta(self, relations: list[BaseRelation]) -> str:
        """`lakehouse_sync_delta`: each table's Delta log brought to its current snapshot,
        one line per table; tables not built yet are skipped, failures raise at the end."""
        failed: list[str] = []
        with self._engine("lakehouse_sync_delta") as spark:
            for relation in relations:
                table = TableName.of(relation)
                if audit.load_table(spark, table) is None:
                    logger.info(f"{table}: skipped: the table does not exist yet (build it first)")
                    continue
                try:
                    self._report_mirror(deltasync.mirror(spark, table, self._delta_options(table)))
                except Exception as exc:
                    reason = (str(getattr(exc, "msg", "") or exc).strip().splitlines() or ["?"])[0]
                    logger.info(f"{table}: FAILED: {self._scrubbed(reason)}")
                    failed.append(str(table))
        if failed:
            raise deltalog.DeltaMirrorError(
                f"lakehouse_sync_delta: {len(failed)} of {len(relations)} table(s) failed: "
                f"{', '.join(failed)}. The others are in sync."
            )
        return ""

    def _mirror(self, spark: Any, table: TableName, owner: str) -> None:
        result = deltasync.mirror_or_warn(
            spark,
            table,
            self._delta_options(table),
            lambda message: logger.warning(self._scrubbed(message)),
            f"`dbt run-operation lakehouse_sync_delta --args '{{select: [{owner}]}}'`",
        )
        if result is not None:
            self._report_mirror(result)

    @staticmethod
    def _report_mirror(result: deltasync.MirrorResult) -> None:
        if result.kind == "noop":
            logger.info(
                f"{result.table}: Delta log already at Iceberg snapshot {result.snapshot_id}"
            )
            return
        logger.info(
            f"{result.table}: Delta log version {result.version} ({result.kind}) mirrors Iceberg "
            f"snapshot {result.snapshot_id}: {result.adds} file(s) added, {result.removes} "
            f"removed, {result.seconds:.2f}s"
        )

    def _delta_options(self, table: TableName) -> dict[str, str]:
        resolved = self._resolved()
        if table.catalog == self.config.credentials.database:
            return deltasync.storage_options(resolved.depot)
        for mounted in resolved.mounted:
            if mounted.catalog == table.catalog:
                return deltasync.storage_options(mounted.depot)
        return {}

    def _resolved(self) -> Any:
        from dbt.adapters.lakehouse.profile.resolved import resolve_profile

        return resolve_profile(self.config.credentials)  # type: ignore[arg-type]

    def _scrubbed(self, text: str) -> str:
        from dbt.adapters.lakehouse.profile.secrets import scrub

        return scrub(text, self._resolved().secret_values())

    # ---- audited runs (write-audit-publish, audit/run.py) ----------------------------------------

    @available
    def prepare_audited_write(
        self, relation: BaseRelation, model_config: Any, node_id: str, resource_type: str
    ) -> str | None:
        """Before a node's first write to a table: the run's audit branch when the write goes
        there (the table then takes branch writes), else None (the table takes none).

        Outside an audited run nothing is done. Tests never audit: their failure tables are
        the audit's output. A model opts out with config `write_audit_publish: false`.
        """
        if model_config is not None and not isinstance(model_config, bool):
            raise audit.AuditError(
                f"Config write_audit_publish of {node_id} must be true or false; got "
                f"{model_config!r}. Fix: write_audit_publish=false (no quotes) to keep the "
                "table out of audited runs, or remove the config."
            )
        run = audit.current_run()
        if run is None:
            return None
        audited = model_config is not False and resource_type != "test"
        table = TableName.of(relation)
        if audited and not run.record(table, node_id):
            return run.branch  # prepared earlier in this run
        with self._engine(f"prepare {table} for an audited run") as spark:
            exists, enabled = audit.table_property(spark, table, audit.WAP_ENABLED)
        wanted = "true" if audited else "false"
        if exists and (enabled or "false").lower() != wanted:
            self.execute(
                f"alter table {table.sql_name} set tblproperties "
                f"('{audit.WAP_ENABLED}' = '{wanted}')"
            )
        return run.branch if audited else None

    @available
    def plan_branch_replace(
        self, relation: BaseRelation, columns: list[Any], partition_by: Any, model_name: str
    ) -> dict[str, list[Any]]:
        """The schema and partition changes an audited replace of `relation` makes first."""
        described = self.describe_relation(relation)
        if described is None:
            raise audit.AuditError(f"Table {relation} disappeared during the run.")
        new_columns = [(c.name, c.dtype) for c in columns]
        fields = parse_partition_by(partition_by, model_name)
        validate_partition_columns(fields, [name for name, _ in new_columns], model_name)
        plan = audit.plan_branch_replace(
            model_name,
            str(relation),
            new_columns,
            [(c.name, c.dtype) for c in described.columns],
            [f.render() for f in fields],
            described.partitioning,
        )
        return {
            "add": [{"name": n, "data_type": t} for n, t in plan.add],
            "drop": plan.drop,
            "widen": [{"column_name": n, "new_type": t} for n, t in plan.widen],
            "partition_drop": plan.partition_drop,
            "partition_add": plan.partition_add,
        }

    @available
    def publish_audit_branch(
        self,
        branch: str,
        relations: list[BaseRelation],
        dual_format: list[BaseRelation] | None = None,
    ) -> str:
        """`lakehouse_publish`: fast-forward `main` of every given table holding the branch;
        the Delta logs of the `dual_format` ones follow."""
        dual = {TableName.of(r) for r in dual_format or []}

        def publish(spark: Any, states: list[audit.BranchState], name: str) -> list[str]:
            published = audit.publish(spark, audit.ordered_by_branch_time(states), name)
            for state in states:
                if state.table in dual:
                    self._mirror(spark, state.table, state.table.name)
            return published

        branch, published = self._end_branch(branch, relations, "publish", publish)
        message = f"Published {branch}: main of {', '.join(published)} moved; branch dropped."
        logger.info(message)
        return message

    @available
    def discard_audit_branch(self, branch: str, relations: list[BaseRelation]) -> str:
        """`lakehouse_discard`: drop the branch (and its rows) from every given table."""
        branch, dropped = self._end_branch(branch, relations, "discard", audit.discard)
        message = f"Discarded {branch}; main unchanged on: {', '.join(dropped)}."
        logger.info(message)
        return message

    def _end_branch(
        self,
        branch: str,
        relations: list[BaseRelation],
        action: str,
        end: Callable[[Any, list[audit.BranchState], str], list[str]],
    ) -> tuple[str, list[str]]:
        """Publish or discard: the branch checked, the given tables holding it found (on main's
        session, outside any audited run's branch), then `end` applied to them."""
        branch = audit.checked_branch(branch)
        with self._engine(f"{action} {branch}") as spark:
            audit.point_session(spark, None)
            tables = [TableName.of(r) for r in relations]
            states = audit.states_with_branch(spark, tables, branch)
            if not states:
                raise audit.AuditError(self._no_branch_message(branch, tables))
            return branch, end(spark, states, branch)

    @staticmethod
    def _no_branch_message(branch: str, tables: list[TableName]) -> str:
        return (
            f"No table of this project holds branch {branch} ({len(tables)} tables looked at). "
            "It was published or discarded already, or the name is not the one the run printed."
        )

    def cleanup_connections(self) -> None:
        """The end of a dbt invocation: an audited run publishes here, after its last test."""
        try:
            self._finish_audited_run()
        finally:
            super().cleanup_connections()

    def _finish_audited_run(self) -> None:
        run = audit.end_run()
        if run is None:
            return
        with self.connection_named("lakehouse_audit_publish"):
            with self._engine(f"publish {run.branch}") as spark:
                audit.point_session(spark, None)
                if not run.tables:
                    return
                problems = run.problems()
                if problems:
                    logger.warning(audit.unpublished_message(run.branch, problems, run.tables))
                    return
                states = audit.states_with_branch(spark, list(run.tables), run.branch)
                published = audit.publish(spark, states, run.branch)
                for table in sorted(self._delta_after_publish & set(run.tables), key=str):
                    self._mirror(spark, table, table.name)
        logger.info(
            f"Audited run published: main of {len(published)} table(s) moved to branch "
            f"{run.branch} ({', '.join(published)}); the branch is dropped."
        )

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
        from dbt.adapters.lakehouse.maintenance.compaction_scope import parse_describe

        columns: list[LakehouseColumn] = []
        details: dict[str, str] = {}
        # Spark prints an identity-only spec under `# Partition Information`, others under
        # `# Partitioning`; parse_describe reads both.
        partitioning = [spec_field.text for spec_field in parse_describe(rows)[1]]
        in_columns = True
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
            if name.startswith("# Detailed") or name.startswith("# View Information"):
                in_details = True
                continue
            if in_details and name and not name.startswith("#"):
                details[name] = "" if data_type is None else str(data_type)
        return RelationDescription(columns=columns, details=details, partitioning=partitioning)

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
        from dbt_common.invocation import get_invocation_id

        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        properties = commit_properties(get_invocation_id(), handle.name)
        return LakehouseAdapterResponse(
            _message=message,
            code=code,
            rows_affected=rows_affected,
            snapshot_id=last_committed_snapshot(handle.spark, relation.render(), properties),
        )

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
                    stats = self.table_stats(relation)
                    rows.extend(self._catalog_rows(relation, described, stats))
        # An empty schema has no columns to force (agate would warn about each).
        return agate.Table.from_object(rows, column_types=CATALOG_TYPES if rows else None)

    @staticmethod
    def _catalog_rows(
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
            stats=stats_items(self.table_stats(relation)),
        )

    # ---- table stats and source freshness from metadata (iceberg/table_stats.py) -----------------

    def table_stats(self, relation: BaseRelation) -> TableStats | None:
        """A table's stats from its Iceberg metadata (no scan); None for a view, or a table
        dropped since it was listed."""
        if relation.is_view:
            return None
        table = relation.render()
        try:
            with self._engine(f"read the metadata of {table}") as spark:
                return read_table_stats(spark, table)
        except (RelationMissingError, NamespaceMissingError):
            return None  # a view of unknown type lands here too: it has no snapshots

    def calculate_freshness_from_metadata_batch(
        self, sources: list[BaseRelation], macro_resolver: Any = None
    ) -> tuple[list[Any], dict[BaseRelation, FreshnessResponse]]:
        """`dbt source freshness` for sources without `loaded_at_field`: the commit time of
        each table's current snapshot, from its metadata. A source that is a view or missing
        is left out; dbt then asks `calculate_freshness_from_metadata`, which says why."""
        freshness: dict[BaseRelation, FreshnessResponse] = {}
        with self._metadata_connection():
            for source in sources:
                try:
                    freshness[source] = self._metadata_freshness(source)
                except MetadataFreshnessError:
                    continue
        return [], freshness

    def calculate_freshness_from_metadata(
        self, source: BaseRelation, macro_resolver: Any = None
    ) -> tuple[Any, FreshnessResponse]:
        with self._metadata_connection():
            return None, self._metadata_freshness(source)

    def _metadata_freshness(self, source: BaseRelation) -> FreshnessResponse:
        table = source.render()
        try:
            with self._engine(f"read the last commit of {table}") as spark:
                last_commit = read_last_commit(spark, table)
        except (RelationMissingError, NamespaceMissingError) as exc:
            raise MetadataFreshnessError(
                f"Cannot take the freshness of source table {table} from its metadata: it does "
                "not exist, or it is a view (views have no snapshots). Fix: build or load the "
                "table, or give the source a `loaded_at_field`."
            ) from exc
        # No snapshot yet: never loaded, which dbt counts as infinitely old.
        return self._create_freshness_response(last_commit, datetime.now(UTC))

    @contextmanager
    def _metadata_connection(self) -> Iterator[None]:
        """The thread's connection, opened if dbt released it (it asks for the batch after
        its `master` connection is released), or one of our own when the thread has none."""
        if self.connections.get_if_exists() is None:
            with self.connection_named("lakehouse_freshness"):
                yield
            return
        self.connections.open(self.connections.get_thread_connection())
        yield

    # ---- time travel (time_travel/as_of.py) ------------------------------------------------------

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
        target = self._time_travel_table(relation)
        if not execute:
            return target
        spec = parse_as_of(as_of, f"lakehouse.as_of({target.render()})")
        if target.is_cte:
            return target  # an ephemeral model or a unit test's fixture rows: no history
        if checks_now():
            self.check_time_travel(target, spec)
        return target.with_time_travel(spec)

    def check_time_travel(self, relation: LakehouseRelation, as_of: AsOf) -> None:
        """Fail, naming the table, unless it has the point `as_of` reads (also for sources)."""
        table = relation.render()
        try:
            check_as_of(self._metadata_rows, table, as_of)
        except (RelationMissingError, NamespaceMissingError) as exc:
            raise TimeTravelError(
                f"Table {table} does not exist (or is a view, which has no snapshots), so it "
                f"cannot be read as of {as_of.describe()}. Fix: check the name, or build the "
                "table before the node that reads it."
            ) from exc

    @available
    def rollback_table(self, relation: Any, to: Any) -> list[str]:
        """Move `main` of a table back to a snapshot id or the state at a timestamp
        (`lakehouse_rollback`); the lines to print, main before and after.

        Refused, with nothing changed, when the target is not an ancestor of main's current
        snapshot, or when no ancestor is older than the timestamp.
        """
        target = self._time_travel_table(relation)
        catalog, namespace, name = target.database, target.schema, target.identifier
        assert catalog and namespace and name
        table = target.render()
        point = parse_rollback_target(to)
        try:
            history = read_history(self._metadata_rows, table)
        except (RelationMissingError, NamespaceMissingError) as exc:
            raise TimeTravelError(
                f"lakehouse_rollback: table {table} does not exist (or is a view). Nothing was "
                "changed. Fix: pass `relation: <schema>.<table>` (the target's catalog) or "
                "`<catalog>.<schema>.<table>`."
            ) from exc
        at_ms = None
        if point.key == "timestamp":
            at_ms = timestamp_millis(self._metadata_rows, str(point.value))
        plan = plan_rollback(history, point, at_ms)
        after = plan.before
        if plan.changes:
            self.execute(rollback_sql(catalog, namespace, name, plan, point))
            after = read_history(self._metadata_rows, table).main or plan.target
            self._mirror_if_dual(TableName.of(target))
        return rollback_report(plan, after)

    def _mirror_if_dual(self, table: TableName) -> None:
        """A table whose root holds a Delta log gets it moved along with `main`."""
        with self._engine(f"mirror {table} to its Delta log") as spark:
            if self._logged_delta_uri(spark, table) is not None:
                self._mirror(spark, table, table.name)

    def _logged_delta_uri(self, spark: Any, table: TableName) -> str | None:
        """The table's root as Delta readers address it, if a Delta log is there."""
        location = audit.table_location(spark, table)
        if location is None:
            return None
        uri = deltasync.delta_uri(location)
        return uri if deltasync.has_log(uri, self._delta_options(table)) else None

    def _delta_log(self, spark: Any) -> Any:
        """Maintenance's view of dual-format tables' Delta logs on this session."""
        from dbt.adapters.lakehouse.maintenance import operations as maintenance

        def checkpoint(table: TableName) -> int:
            uri = self._logged_delta_uri(spark, table)
            if uri is None:
                raise deltalog.DeltaMirrorError(f"{table} has no Delta log to checkpoint")
            version, _ = deltasync.checkpoint(uri, self._delta_options(table))
            return version

        return maintenance.DeltaLog(
            exists=lambda table: self._logged_delta_uri(spark, table) is not None,
            follow=lambda table: self._mirror(spark, table, table.name),
            checkpoint=checkpoint,
        )

    def _time_travel_table(self, relation: Any) -> LakehouseRelation:
        """A relation, or a `schema.table` / `catalog.schema.table` name (the target's catalog
        when it has two parts), as a table relation."""
        if isinstance(relation, LakehouseRelation):
            return relation
        catalog, namespace, name = parse_table_name(relation, self.config.credentials.database)
        return self.Relation.create(database=catalog, schema=namespace, identifier=name)

    def _metadata_rows(self, sql: str) -> list[tuple[Any, ...]]:
        """A metadata query's rows as Spark returns them (agate would guess the types)."""
        with self.connections.exception_handler(sql):
            _, cursor = self.connections.add_query(sql, auto_begin=False)
            return list(cursor.fetchall())

    # ---- Python models (models/python_models.py) -------------------------------------------------

    @available
    def python_model_view(self, compiled_code: str, model_name: str, model_path: str) -> str:
        """Run a Python model's code in this session; its DataFrame as a temporary view, which
        the materialization writes like a SQL model's `select * from <view>`."""
        from dbt.adapters.lakehouse.models import python_models as pymodels

        with self._engine(f"python model {model_name}") as spark:
            model_file = str(Path(self.config.project_root) / model_path)
            try:
                frame = pymodels.run_model(spark, compiled_code, model_name, model_file, model_path)
            except pymodels.PythonModelError as exc:
                raise pymodels.PythonModelError(self._scrubbed(str(exc.msg))) from None
            view = pymodels.view_name(model_name)
            frame.createOrReplaceTempView(view)
        return view

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
            engine.tag_thread(handle.spark, handle.job_group)
            yield handle.spark

    @available
    def drop_temp_view(self, view_name: str) -> None:
        handle: LakehouseHandle = self.connections.get_thread_connection().handle
        handle.spark.catalog.dropTempView(view_name)
        handle.computed_views.discard(view_name)

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
        with self._engine(f"materialize temporary view {view_name}") as spark:
            handle.computed_views.add(view_name)
            engine.compute_once(spark, view_name)
        return ""

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> dict[str, Any]:
        return {"adapter_type": "lakehouse", "table_format": "iceberg"}

    def debug_query(self) -> None:
        """`dbt debug`: every depot's storage and catalog checks first, then Spark itself.

        The preflight needs no Spark, so a missing bucket or a rejected token is reported in
        seconds, with its fix, before a JVM starts. Problems of all depots come together.
        """
        from dbt.adapters.lakehouse.profile.preflight import run_preflight
        from dbt.adapters.lakehouse.profile.resolved import resolve_profile

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
