"""The adapter's methods for view checkpoints (impl.py mixes them in): `adapter.checkpoint_view`
for the view materialization, and the release at the invocation's end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta

from dbt.adapters.lakehouse.checkpoints import adapter as checkpoints
from dbt.adapters.lakehouse.checkpoints import registry

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


class CheckpointMethods(metaclass=AdapterMeta):
    """Mixed into LakehouseAdapter; AdapterMeta collects the `available` methods of each base."""

    @available
    def checkpoint_view(
        self: LakehouseAdapter,
        relation: Any,
        sql: str,
        model: Any,
        reused: bool = False,
        graph: Any = None,
        selected: Any = None,
    ) -> str:
        """After a view model is built or reused: checkpoint it for the run's later statements
        when its `checkpoint` config says so (checkpoints/adapter.py); `graph`, `selected`:
        dbt's, which say how many of the run's nodes read it."""
        checkpoints.after_view(self, relation, sql, model, reused, graph, selected)
        return ""

    def cleanup_connections(self) -> None:
        """The invocation's end: its checkpoints are released before the connections go."""
        try:
            registry.release(registry.current_invocation())
        finally:
            super().cleanup_connections()  # type: ignore[misc]
