"""What a node's query reads and the state of each input now: the tables its analysed plan
(in process, reuse/inputs.py) or its `EXPLAIN` text (under Spark Connect,
reuse/connect_inputs.py) names, each input's `main` snapshot and columns from its metadata, or
why they cannot tell whether its rows would be the same. A model's decision (reuse/adapter.py)
and a data test's (reuse/tests.py) start here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.exceptions import NamespaceMissingError, RelationMissingError
from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv import metadata, reading
from dbt.adapters.lakehouse.mv.state import UpstreamState
from dbt.adapters.lakehouse.reuse.connect_inputs import connect_inputs, inputs_and_metadata
from dbt.adapters.lakehouse.reuse.inputs import PlanInputs, node_inputs

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.impl import LakehouseAdapter


def tracked_inputs(
    adapter: LakehouseAdapter,
    spark: Any,
    read: metadata.Reader,
    query: str,
    target: TableName | None,
    reads_itself: bool = False,
    target_built: bool = False,
) -> tuple[PlanInputs, list[UpstreamState]] | str:
    """The query's plan inputs and each input's state now (a model's, a data test's), or why
    they cannot tell whether its rows would be the same (the refusal's words). `target_built`:
    the node's table is there, its record read next."""
    if runtime.is_connect(spark):
        catalogs = [mount.name for mount in adapter._resolved().spec.catalogs]
        if isinstance(read, metadata.SqlReader):  # the metadata tables of all, one statement
            own = [target] if target is not None and target_built else []
            inputs = inputs_and_metadata(spark, query, catalogs, read, own)
        else:
            inputs = connect_inputs(spark, query, catalogs)
    else:
        inputs = node_inputs(spark, query)
    if inputs.varying:
        return f"non-deterministic ({', '.join(inputs.varying)})"
    known = _known_first(read, inputs.metadata)
    states, untracked = _states(adapter, known, inputs, target, reads_itself)
    if [*inputs.untracked, *untracked]:
        return "; ".join([*inputs.untracked, *untracked])
    return inputs, states


def _known_first(read: metadata.Reader, known: Mapping[str, str]) -> metadata.Reader:
    """`read`, except for the tables whose metadata the analysis loaded (PlanInputs.metadata):
    that metadata, not a second load from the catalog."""
    if not known:
        return read

    def found(table: TableName) -> metadata.TableMetadata:
        text = known.get(str(table))
        return read(table) if text is None else metadata.parse_metadata_json(text)

    return found


def _states(
    adapter: LakehouseAdapter,
    read: metadata.Reader,
    inputs: PlanInputs,
    target: TableName | None,
    reads_itself: bool,
) -> tuple[list[UpstreamState], list[str]]:
    """Each input's state now, and why an input cannot be tracked. The node's own table is an
    input only of an incremental run, whose record on that table's `main` stands for it. An
    input the plan's scans told (PlanInputs.scanned) is not read."""
    states: list[UpstreamState] = []
    untracked: list[str] = []
    for table in inputs.tables:
        if str(table) == str(target):
            if not reads_itself:
                untracked.append(f"reads its own table {table}")
            continue
        scanned = inputs.scanned.get(str(table))
        if scanned is not None:
            states.append(UpstreamState(str(table), *scanned))
            continue
        try:
            states.append(reading.upstream_state(adapter._metadata_rows, read, table))
        except (RelationMissingError, NamespaceMissingError):
            untracked.append(f"cannot read the metadata of {table}")
    return states, untracked
