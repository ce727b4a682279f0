"""The adapter's methods for what models declare (impl.py mixes them in): the incremental
strategy a model runs with and its config checks, the upstream changes it reads, partitioning,
contracts, grants and `dbt clone`. Each is exposed to macros (`adapter.<name>`) and delegates to
its feature's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.base.relation import BaseRelation

from dbt.adapters.lakehouse.changes import adapter as changes
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.models import clone, contracts, format_version, grants
from dbt.adapters.lakehouse.models.incremental import (
    iceberg_type,
    plan_type_change_rows,
    resolve_incremental_strategy,
    validate_incremental_config,
    validate_model_columns,
)
from dbt.adapters.lakehouse.models.partitioning import partition_clause

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


class ModelMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    # ---- incremental models ------------------------------------------------------------------

    def valid_incremental_strategies(self) -> list[str]:
        return ["append", "merge", "replace", "insert_overwrite", "delete+insert", "microbatch"]

    @available
    def resolve_incremental_strategy(
        self: LakehouseAdapter,
        raw_strategy: str | None,
        unique_key: Any,
        model_name: str,
        custom_macros: list[str],
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
        self: LakehouseAdapter, model_name: str, strategy: str, config: dict[str, Any]
    ) -> str:
        """Check the model's incremental configs against its strategy (all problems at once)."""
        validate_incremental_config(
            model_name, strategy, config, builtin=self.valid_incremental_strategies()
        )
        return ""

    @available
    def validate_incremental_columns(
        self: LakehouseAdapter,
        model_name: str,
        strategy: str,
        config: dict[str, Any],
        columns: list[Any],
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
    def iceberg_type(self, spark_type: str) -> str:
        return iceberg_type(spark_type)

    # ---- partitioning ------------------------------------------------------------------------

    @available
    def partition_transforms(self: LakehouseAdapter, relation: BaseRelation) -> list[str]:
        """The table's current Iceberg partition fields (e.g. ['days(ts)']); [] if unpartitioned."""
        described = self.describe_relation(relation)
        return [] if described is None else described.partitioning

    @available
    def partition_clause(
        self, partition_by: Any, columns: list[str] | None, model_name: str
    ) -> str:
        """Validate `partition_by` (against the model's columns when known) and render it."""
        return partition_clause(partition_by, columns, model_name)

    # ---- format version ------------------------------------------------------------------

    @available
    def format_version_properties(
        self: LakehouseAdapter,
        configured: Any,
        properties: dict[str, Any],
        model_name: str,
        database: str | None = None,
    ) -> dict[str, str]:
        """{'format-version': 'N'} for the version the model asks for (config, its
        table_properties, or the default of the depot its table is in: `database`, the catalog),
        {} when none; checked before any SQL."""
        depot_default = self._resolved().depot_of(database).format_version
        version = format_version.requested_format_version(
            configured, properties, depot_default, model_name
        )
        format_version.check_write_modes(version, properties or {}, model_name)
        return {} if version is None else {format_version.PROPERTY: str(version)}

    @available
    def format_version_upgrade(
        self: LakehouseAdapter,
        relation: BaseRelation,
        configured: Any,
        properties: dict[str, Any],
        model_name: str,
    ) -> int | None:
        """The version an existing table must be upgraded to before a write, None when it
        is at the asked version (or none is asked); a downgrade is refused here, before
        anything is written."""
        wanted = self.format_version_properties(
            configured, properties, model_name, relation.database
        )
        if not wanted:
            return None
        requested = int(wanted[format_version.PROPERTY])
        table = TableName.of(relation)
        # SHOW TBLPROPERTIES rather than the Java table: it works under Spark Connect too.
        with self._spark_session(f"read the format version of {relation}") as spark:
            found = spark.sql(
                f"show tblproperties {table.sql_name} ('{format_version.PROPERTY}')"
            ).collect()
        value = str(found[0][1]).strip() if found else ""
        if not value.isdigit():
            return None  # not an Iceberg table's answer; the write reports what is wrong
        existing = int(value)
        if format_version.version_change(existing, requested, str(relation), model_name):
            return requested
        return None

    # ---- contracts, grants, clone ------------------------------------------------------------

    @available
    def contract_table(
        self: LakehouseAdapter, columns: dict[str, Any], constraints: list[Any]
    ) -> Any:
        return contracts.contract_table(columns, constraints, self)

    @available
    def contract_primary_key(
        self, columns: dict[str, Any], constraints: list[Any] | None
    ) -> list[str]:
        return contracts.primary_key_columns(columns, constraints)

    @available
    def contract_fits(
        self: LakehouseAdapter,
        relation: BaseRelation,
        columns: dict[str, Any],
        contract: contracts.ContractTable,
        partition_by: Any,
        model_name: str,
    ) -> bool:
        """Whether the table already has the contract's shape (its rows can then be replaced in
        one commit)."""
        return contracts.contract_fits(self, relation, columns, contract, partition_by, model_name)

    @available
    def report_grants(
        self: LakehouseAdapter, relation: BaseRelation, grant_config: Any, invocation_id: str
    ) -> str:
        return grants.report(self._resolved().spec.catalogs, relation, grant_config, invocation_id)

    @available
    def clone_mode(
        self: LakehouseAdapter, relation: BaseRelation, source: BaseRelation
    ) -> dict[str, str]:
        return clone.plan_clone(self._resolved(), relation, source)

    @available
    def clone_location(self, relation: BaseRelation) -> str:
        return clone.table_location(self, relation)

    @available
    def clone_sql(self, relation: Any, source: Any, rows: Any, location: str) -> list[str]:
        return clone.zero_copy_sql(relation, source, rows, location)

    # ---- upstream changes (changes/) ---------------------------------------------------------

    @available
    def changes_relation(
        self: LakehouseAdapter,
        relation: Any,
        this: Any,
        node_id: str | None,
        incremental: bool,
        on_lost_changes: str | None,
        execute: bool,
    ) -> str:
        """`lakehouse.changes(relation)`: what changed upstream since the model `this` consumed
        it last, as a relation to select from."""
        return changes.changes_sql(
            self, relation, this, node_id, incremental, on_lost_changes, execute
        )

    @available
    def changes_rebuild(self, node_id: str) -> bool:
        """Whether the model's upstream changes were lost, so its table is rebuilt this run."""
        return changes.rebuilds(node_id)

    @available
    def changes_read(self, node_id: str) -> bool:
        """Whether the model read upstream changes when it compiled on this run."""
        return changes.reads_changes(node_id)

    @available
    def changes_columns(self, node_id: str, columns: list[Any]) -> list[str]:
        """The changelog columns among the model's, when it reads changes: the materialization
        applies them (deletes, the latest change per key) and writes the other columns."""
        names = [str(getattr(column, "name", column)) for column in columns]
        return changes.applied_columns(node_id, names)

    @available
    def changes_merge_default(self, node_id: str, name: str) -> Any:
        return changes.merge_default(node_id, name)
