"""The adapter's methods for materialized views (impl.py mixes them in), exposed to macros as
`adapter.<name>` and delegating to mv/adapter.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.lakehouse.mv import adapter as mv

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


class MaterializedViewMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    @available
    def mv_refresh_plan(
        self: LakehouseAdapter,
        relation: Any,
        existing: Any,
        upstreams: list[Any],
        untracked: list[str],
        sql: str,
        config: dict[str, Any],
        full_refresh: bool,
        on_change: str | None,
        node_id: str,
    ) -> dict[str, Any]:
        """What a run does to a materialized view: create, rebuild, overwrite, noop or skip."""
        return mv.refresh_plan(
            self,
            relation,
            existing,
            upstreams,
            untracked,
            sql,
            config,
            full_refresh,
            on_change,
            node_id,
        )

    @available
    def mv_status_sql(self: LakehouseAdapter, relation: Any, execute: bool) -> str:
        """`lakehouse.mv_status(ref(...))`: the view's freshness per upstream, as a subquery."""
        return mv.status_sql(self, relation, execute)

    @available
    def mv_check_freshness(self: LakehouseAdapter, value: Any, model: str) -> str:
        """Fail the node when its `mv_freshness` is malformed (mv/freshness.py)."""
        return mv.check_freshness(value, model)
