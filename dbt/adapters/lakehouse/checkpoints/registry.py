"""The views each running invocation built, with their plans' sizes, and the temporary views
standing in for them (checkpoints, and views over checkpoints): what the cursor rewrites
statements against, released when the invocation ends.

Keyed by invocation, since one process may run several (the test suite) and a warm engine's
session is the process's own: a checkpoint is a temporary view of that session.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
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
    # checkpoints it reads; made by the first statement that runs over it (`pending`)
    stand_ins: dict[str, str] = field(default_factory=dict)
    # view -> a temporary view of no rows with the view's columns, which analyses read (a
    # stand-in not made yet would be as large as the stack it stands for)
    shapes: dict[str, str] = field(default_factory=dict)
    # temporary view -> the session holding it
    held: dict[str, Any] = field(default_factory=dict)
    # node -> what its response says of its checkpoint
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # stand-in or shape -> what makes it (given the reading node and its session): the first
    # statement running over it, or analysis reading it, runs it
    pending: dict[str, Callable[[str | None, Any], Any]] = field(default_factory=dict)
    # stand-in -> held while it is made (making one makes those it reads first, each under
    # its own: acquired down the DAG, never in a circle)
    making: dict[str, threading.Lock] = field(default_factory=dict)
    # view -> what its query reads, as reuse decided it (reuse/stand_ins.py), for the readers
    # of its stand-in
    inputs: dict[str, Any] = field(default_factory=dict)
    # node -> how many of the run's nodes read it (plan.py run_readers), counted once a run
    readers: Counter[str] | None = None


_LOCK = threading.Lock()
_RUNS: dict[str, _Run] = {}


def current_invocation() -> str:
    from dbt_common.invocation import get_invocation_id

    return str(get_invocation_id())


def known_leaves(invocation_id: str) -> dict[str, Leaves]:
    with _LOCK:
        run = _RUNS.get(invocation_id)
        return dict(run.leaves) if run else {}


def run_readers(invocation_id: str, count: Callable[[], Counter[str]]) -> Counter[str]:
    """How many of the run's nodes read each node: `count`ed by the run's first view."""
    with _LOCK:
        run = _RUNS.setdefault(invocation_id, _Run())
        if run.readers is None:
            run.readers = count()
        return run.readers


def record_view(invocation_id: str, name: str, scanned: Leaves) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).leaves[normalized(name)] = scanned


def record_stand_in(
    invocation_id: str,
    name: str,
    stand_in: tuple[str, str],
    scanned: Leaves,
    make: Callable[[str | None, Any], Any],
    make_shape: Callable[[str | None, Any], Any] | None = None,
    spark: Any = None,
) -> None:
    """`stand_in`, (a temporary view, its shape), stands in for the view `name` in the run's
    later statements (the shape in analyses); `make` makes the temporary view when a statement
    first runs over it, `make_shape` the shape when an analysis first reads it (None: `spark`
    holds it already), each given the reading node and its session; a reader scans `scanned`
    through it."""
    key = normalized(name)
    temp, shape = stand_in
    with _LOCK:
        run = _RUNS.setdefault(invocation_id, _Run())
        run.leaves[key] = scanned
        run.stand_ins[key] = temp
        run.shapes[key] = shape
        run.pending[temp] = make
        if make_shape is not None:
            run.pending[shape] = make_shape
        else:
            run.held[shape] = spark


def compute_read(
    statement: str,
    spark: Any,
    invocation_id: str | None = None,
    node: str | None = None,
) -> None:
    """Make the stand-ins and shapes `statement` (read through them, or analysed over them)
    names that are not made yet, in `spark`, before it runs (timed as `node`'s statements). A
    checkpoint runs its query's stages when it is made (adaptive execution), so one that no
    statement runs over costs nothing: a run that reuses every reader of a view runs none of
    its jobs, and one that recalls every reader's decision (reuse/memo.py) makes no shape
    either. Each is made once; a reader waiting for it finds it made (a failed one is tried
    again by the next reader, which fails with its error)."""
    if not _RUNS:
        return
    with _LOCK:
        run = _RUNS.get(invocation_id or current_invocation())
        if run is None or not run.pending:
            return
        due = [temp for temp in run.pending if f"`{temp}`" in statement]
        locks = [run.making.setdefault(temp, threading.Lock()) for temp in due]
    for temp, lock in zip(due, locks, strict=True):
        with lock:
            with _LOCK:
                make = run.pending.get(temp)
            if make is not None:  # None: made while this reader waited
                make(node, spark)
                with _LOCK:  # only now: a reader finding it pending waits for it
                    run.pending.pop(temp, None)
                    run.held[temp] = spark


def record_inputs(invocation_id: str, name: str, inputs: Any) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).inputs[normalized(name)] = inputs


def stand_in_inputs(invocation_id: str) -> dict[str, tuple[str, Any]]:
    """Each stand-in's shape (what analyses read) -> (its view, what reuse recorded its query
    reads; None: nothing)."""
    with _LOCK:
        run = _RUNS.get(invocation_id)
        if run is None:
            return {}
        return {shape: (view, run.inputs.get(view)) for view, shape in run.shapes.items()}


def record_note(invocation_id: str, node: str, checkpoint: dict[str, Any]) -> None:
    with _LOCK:
        _RUNS.setdefault(invocation_id, _Run()).notes[node] = {"checkpoint": checkpoint}


def take_note(invocation_id: str, node: str) -> dict[str, Any]:
    """The node's `checkpoint` response field (empty: none was made)."""
    with _LOCK:
        run = _RUNS.get(invocation_id)
        return run.notes.pop(node, {}) if run else {}


def with_checkpoints(
    statement: str, invocation_id: str | None = None, *, shapes: bool = False
) -> str:
    """The statement reading the invocation's stand-ins instead of their views, where it may
    (plan.reads_checkpoints); the statement itself when nothing changes. `shapes`: their
    shapes, for a statement that is analysed and never run."""
    stand_ins = _stand_ins(invocation_id, shapes)
    if not stand_ins or not reads_checkpoints(statement):
        return statement
    return rewrite(statement, stand_ins)


def names_stand_ins(statement: str) -> bool:
    """Whether the statement names a view the invocation's statements read through a stand-in
    (whatever kind of statement it is: a stored view's definition too)."""
    stand_ins = _stand_ins(None)
    return bool(stand_ins) and rewrite(statement, stand_ins) is not statement


def _stand_ins(invocation_id: str | None, shapes: bool = False) -> dict[str, str]:
    if not _RUNS:  # no view built in a run of this process yet: no lock taken
        return {}
    with _LOCK:
        run = _RUNS.get(invocation_id or current_invocation())
        # None or empty: no view large enough, the common case
        if run is None or not run.stand_ins:
            return {}
        return dict(run.shapes if shapes else run.stand_ins)


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
