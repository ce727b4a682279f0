"""The adapter's method for reused nodes (impl.py mixes it in), exposed to macros as
`adapter.reuse_plan` and delegating to reuse/adapter.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.lakehouse.reuse import adapter as reuse
from dbt.adapters.lakehouse.reuse import views

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


class ReuseMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    @available
    def reuse_plan(
        self: LakehouseAdapter,
        relation: Any,
        existing: Any,
        query: str,
        statement: str,
        model: Any,
        full_refresh: bool,
        has_hooks: bool,
        kind: str = "table",
    ) -> dict[str, Any]:
        """Whether the model is reused as its last build left it (reuse/adapter.py). `kind`:
        `table`; an incremental model's `full` build or `incremental` run; `snapshot`."""
        settings, mode = reuse.KINDS[kind]
        return reuse.reuse_plan(
            self, relation, existing, query, statement, model, full_refresh, has_hooks,
            settings, mode,
        )  # fmt: skip

    @available
    def reuse_view_plan(
        self: LakehouseAdapter,
        relation: Any,
        existing: Any,
        query: str,
        model: Any,
        full_refresh: bool,
        has_hooks: bool,
    ) -> dict[str, Any]:
        """Whether the view model's CREATE OR REPLACE VIEW is skipped (reuse/views.py)."""
        return views.view_plan(self, relation, existing, query, model, full_refresh, has_hooks)

    @available
    def reuse_view_record(self: LakehouseAdapter, node_id: str) -> str | None:
        """The definition digest the node's CREATE VIEW carries as a property, if any."""
        return views.pending_definition(node_id)

    @available
    def reuse_seed_plan(
        self: LakehouseAdapter,
        relation: Any,
        existing: Any,
        model: Any,
        full_refresh: bool,
        has_hooks: bool,
    ) -> dict[str, Any]:
        """Whether the seed is reused as its last load left it (reuse/adapter.py)."""
        return reuse.seed_plan(self, relation, existing, model, full_refresh, has_hooks)
