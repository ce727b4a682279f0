"""Source freshness from metadata (`dbt source freshness` without `loaded_at_field`): the
commit time of each table's current snapshot. impl.py keeps dbt's methods and delegates here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dbt.adapters.base.impl import FreshnessResponse
from dbt.adapters.base.relation import BaseRelation
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.stats_reader import read_last_commit

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


class MetadataFreshnessError(DbtRuntimeError):
    """A source's freshness cannot come from metadata: its table is missing, or a view."""

    CODE = 10107
    MESSAGE = "Lakehouse freshness error"


def freshness_batch(
    adapter: LakehouseAdapter, sources: list[BaseRelation]
) -> tuple[list[Any], dict[BaseRelation, FreshnessResponse]]:
    """`dbt source freshness` for sources without `loaded_at_field`: the commit time of
    each table's current snapshot, from its metadata. A source that is a view or missing
    is left out; dbt then asks `calculate_freshness_from_metadata`, which says why."""
    freshness: dict[BaseRelation, FreshnessResponse] = {}
    with metadata_connection(adapter):
        for source in sources:
            try:
                freshness[source] = metadata_freshness(adapter, source)
            except MetadataFreshnessError:
                continue
    return [], freshness


def freshness(adapter: LakehouseAdapter, source: BaseRelation) -> tuple[Any, FreshnessResponse]:
    with metadata_connection(adapter):
        return None, metadata_freshness(adapter, source)


def metadata_freshness(adapter: LakehouseAdapter, source: BaseRelation) -> FreshnessResponse:
    table = source.render()
    try:
        with adapter._spark_session(f"read the last commit of {table}") as spark:
            last_commit = read_last_commit(spark, table)
    except (RelationMissingError, NamespaceMissingError) as exc:
        raise MetadataFreshnessError(
            f"Cannot take the freshness of source table {table} from its metadata: it does "
            "not exist, or it is a view (views have no snapshots). Fix: build or load the "
            "table, or give the source a `loaded_at_field`."
        ) from exc
    # No snapshot yet: never loaded, which dbt counts as infinitely old.
    return adapter._create_freshness_response(last_commit, datetime.now(timezone.utc))


@contextmanager
def metadata_connection(adapter: LakehouseAdapter) -> Iterator[None]:
    """The thread's connection, opened if dbt released it (it asks for the batch after
    its `master` connection is released), or one of our own when the thread has none."""
    if adapter.connections.get_if_exists() is None:
        with adapter.connection_named("lakehouse_freshness"):
            yield
        return
    adapter.connections.open(adapter.connections.get_thread_connection())
    yield
