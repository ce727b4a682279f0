"""The views each running invocation built, with their plans' sizes, and the temporary views
standing in for them (checkpoints, and views over checkpoints): what the cursor rewrites
statements against, released when the invocation ends.

Keyed by invocation, since one process may run several (the test suite) and a warm engine's
session is the process's own: a checkpoint is a temporary view of that session.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.checkpoints.plan import Leaves, normalized, reads_checkpoints, rewrite

logger = AdapterLogger("Lakehouse")


@dataclass
class _Run:
    # every view built in the run -> the relations its inlined plan scans, with how often (a
    # checkpointed view: itself, once)
    leaves: dict[str, Leaves] = field(default_factory=dict)
    # view -> the temporary view standing in for it: its checkpoint, or its query over the
    # checkpoints it reads
    stand_ins: dict[str, str] = field(default_factory=dict)
    # temporary view -> the session holding it
    held: dict[str, Any] = field(default_factory=dict)
    # node -> what its response says of its checkpoint
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # view -> what its query reads, as reuse decided it (reuse/stand_ins.py), for the readers
    # of its stand-in
    inputs: dict[str, Any] = field(default_factory=dict)


_LOCK = threading.Lock()
_RUNS: dict[str, _Run] = {}


def current_invocation() -> str:
    from dbt_common.invocation import get_invocation_id

    return str(get_invocation_id())


def known_leaves(invocation_id: str) -> dict[str, Leaves]:
    with _LOCK:
        run = _RUNS.get(invocation_id)
        return dict(run.leaves) if run else {}


def record_view(invocation_id: str, name: str, scanned: Leaves) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).leaves[normalized(name)] = scanned


def record_stand_in(invocation_id: str, name: str, temp: str, spark: Any, scanned: Leaves) -> None:
    """`temp`, a temporary view of `spark`, stands in for the view `name` in the run's later
    statements; a reader scans `scanned` through it."""
    key = normalized(name)
    with _LOCK:
        run = _RUNS.setdefault(invocation_id, _Run())
        run.leaves[key] = scanned
        run.stand_ins[key] = temp
        run.held[temp] = spark


def record_inputs(invocation_id: str, name: str, inputs: Any) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).inputs[normalized(name)] = inputs


def stand_in_inputs(invocation_id: str) -> dict[str, tuple[str, Any]]:
    """Each stand-in of the run -> (its view, what reuse recorded its query reads; None:
    nothing)."""
    with _LOCK:
        run = _RUNS.get(invocation_id)
        if run is None:
            return {}
        return {temp: (view, run.inputs.get(view)) for view, temp in run.stand_ins.items()}


def record_note(invocation_id: str, node: str, checkpoint: dict[str, Any]) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).notes[node] = {"checkpoint": checkpoint}


def take_note(invocation_id: str, node: str) -> dict[str, Any]:
    """The node's `checkpoint` response field (empty: none was made)."""
    with _LOCK:
        run = _RUNS.get(invocation_id)
        return run.notes.pop(node, {}) if run else {}


def with_checkpoints(statement: str, invocation_id: str | None = None) -> str:
    """The statement reading the invocation's stand-ins instead of their views, where it may
    (plan.reads_checkpoints); the statement itself when nothing changes."""
    stand_ins = _stand_ins(invocation_id)
    if not stand_ins or not reads_checkpoints(statement):
        return statement
    return rewrite(statement, stand_ins)


def names_stand_ins(statement: str) -> bool:
    """Whether the statement names a view the invocation's statements read through a stand-in
    (whatever kind of statement it is: a stored view's definition too)."""
    stand_ins = _stand_ins(None)
    return bool(stand_ins) and rewrite(statement, stand_ins) is not statement


def _stand_ins(invocation_id: str | None) -> dict[str, str]:
    if not _RUNS:  # no view built in a run of this process yet: no lock taken
        return {}
    with _LOCK:
        run = _RUNS.get(invocation_id or current_invocation())
        # None or empty: no view large enough, the common case
        return dict(run.stand_ins) if run is not None and run.stand_ins else {}


def release(invocation_id: str) -> None:
    """The invocation's end: its stand-ins dropped, the checkpoints' rows freed by Spark's
    cleaner."""
    with _LOCK:
        run = _RUNS.pop(invocation_id, None)
    for temp, spark in (run.held if run else {}).items():
        try:
            spark.catalog.dropTempView(temp)
        except Exception as exc:  # the session is gone: nothing is held any more
            logger.debug(f"checkpoint {temp} not dropped: {exc}")
