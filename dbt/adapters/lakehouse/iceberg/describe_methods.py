"""The adapter's DESCRIBE methods (impl.py mixes them in): a relation's description and columns,
answered from the node's describe memo (describe_memo.py) while a materialization keeps one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.column import SparkColumn

from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.describe import RelationDescription, read_description
from dbt.adapters.lakehouse.iceberg.describe_memo import DescribeMemo

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter

DESCRIBE_MACRO = "lakehouse__describe_relation"


class DescribeMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    def describe_relation(self, relation: BaseRelation) -> RelationDescription | None:
        """Columns and table details from one DESCRIBE EXTENDED; None if it does not exist."""
        adapter = cast("LakehouseAdapter", self)
        memo = _memo(adapter)
        key = DescribeMemo.key(relation.render(), relation.type)
        kept = memo.get(key) if memo is not None else None
        if kept is not None:
            return kept
        try:
            rows = adapter.execute_macro(DESCRIBE_MACRO, kwargs={"relation": relation})
        except (RelationMissingError, NamespaceMissingError):
            return None
        described = read_description(rows, relation)
        if memo is not None:
            memo.keep(key, described)
        return described

    def get_columns_in_relation(self, relation: BaseRelation) -> list[SparkColumn]:
        described = self.describe_relation(relation)
        return [] if described is None else [*described.columns]

    @available
    def remember_descriptions(self: LakehouseAdapter, on: bool) -> str:
        """A materialization's describes answered from the node's memo while `on` (the snapshot
        materialization, around dbt's flow); off forgets them."""
        memo = _memo(self)
        if memo is not None:
            memo.start() if on else memo.stop()
        return ""


def _memo(adapter: Any) -> DescribeMemo | None:
    connection = adapter.connections.get_if_exists()
    handle = getattr(connection, "handle", None)
    return getattr(handle, "describe_memo", None)
