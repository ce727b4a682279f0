"""The DAG model of the reuse property test (test_reuse_history.py): which nodes could have
been reused at a step, and the tally of reuse missed. Pure logic
(tests/unit/reuse/test_history_model.py).

A node could have been reused when nothing it reads or is defined by changed since its last
build: its own definition (SQL meaning, config, the vars it renders, a seed's CSV) and, for each
node it reads, that node's state. What a node reads is data (a source, seed, table, incremental
model or snapshot: its `main` snapshot id and its columns), except through a view, which holds no
rows: the view's own definition and, in turn, what the view reads. A view itself reads only the
definitions and columns of its inputs (reuse redefines a view when an upstream gains a column, not
when its rows move). Its own definition stands for the text its statement stores
(reuse/plan.py view_definition): the history's comment and blank-line edits are around the query,
which is not stored; an edit of spaces alone inside it is not seen by dbt's partial parse (the
model keeps its earlier SQL until its file is parsed again), so a view rebuilt after one is a
reuse missed, never a wrong one.

Each node's signature is computed after the step's build from the snapshot ids observed then, so
an upstream that was rebuilt (a new snapshot, even with the same rows) makes its readers "must
build", and an upstream whose reuse was missed is counted once, not once per reader.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

# Where the rows are: every node but views and tests.
DATA_KINDS = frozenset({"source", "seed", "table", "incremental", "snapshot"})
# The kinds dbt's --full-refresh rebuilds; snapshots and tests take it as any other run.
FULL_REFRESH_KINDS = frozenset({"seed", "view", "table", "incremental"})
# The kinds whose missed reuse counts against the 90% goal: those reuse covers (docs/reuse.md),
# now every kind of the DAG. A kind reuse stops covering is taken out here, in one place;
# LAKEHOUSE_HISTORY_COUNTED=table,seed,view (for one) overrides it for one run.
COUNTED_KINDS = frozenset({"table", "seed", "view", "incremental", "snapshot", "test"})


def counted_kinds(env: Mapping[str, str] = os.environ) -> frozenset[str]:
    named = env.get("LAKEHOUSE_HISTORY_COUNTED", "").strip()
    if not named:
        return COUNTED_KINDS
    kinds = frozenset(k.strip() for k in named.split(",") if k.strip())
    unknown = kinds - DATA_KINDS - {"view", "test"}
    if unknown or "source" in kinds:
        raise ValueError(f"LAKEHOUSE_HISTORY_COUNTED names unknown kinds {sorted(unknown)}")
    return kinds


@dataclass(frozen=True)
class Node:
    uid: str
    name: str
    kind: str  # source, seed, view, table, incremental, snapshot, test
    parents: tuple[str, ...] = ()
    deterministic: bool = True


@dataclass
class Tally:
    """Per kind: nodes that could have been reused, and of those, how many were."""

    could: dict[str, int] = field(default_factory=dict)
    reused: dict[str, int] = field(default_factory=dict)
    missed: list[tuple[int, str]] = field(default_factory=list)  # (step, node name)

    def add(self, step: int, node: Node, could: bool, reused: bool) -> None:
        if could:
            self.could[node.kind] = self.could.get(node.kind, 0) + 1
            if reused:
                self.reused[node.kind] = self.reused.get(node.kind, 0) + 1
            else:
                self.missed.append((step, node.name))

    def totals(self, kinds: frozenset[str]) -> tuple[int, int]:
        """(could, reused) over the kinds that count."""
        could = sum(n for k, n in self.could.items() if k in kinds)
        return could, sum(n for k, n in self.reused.items() if k in kinds)

    def ratio(self, kinds: frozenset[str]) -> float:
        could, reused = self.totals(kinds)
        return reused / could if could else 1.0


class History:
    """The DAG and each node's signature at its last build (None: never built yet)."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = {n.uid: n for n in nodes}
        for node in nodes:
            missing = [p for p in node.parents if p not in self.nodes]
            if missing:
                raise ValueError(f"{node.uid} reads unknown nodes {missing}")
        self.order = _topological(self.nodes)
        self.recorded: dict[str, Hashable] = {}

    def signatures(
        self, definitions: Mapping[str, Hashable], data: Mapping[str, Hashable]
    ) -> dict[str, Hashable]:
        """Each dbt node's signature now. `definitions`: a node's own definition (absent: a
        constant one); `data`: each data node's state after the build (snapshot id, columns)."""
        view_sig: dict[str, Hashable] = {}
        data_sig: dict[str, Hashable] = {}
        for uid in self.order:
            node = self.nodes[uid]
            own = definitions.get(uid)
            if node.kind == "view":
                view_sig[uid] = (
                    "view",
                    own,
                    tuple(self._shape(p, view_sig, data) for p in node.parents),
                )
                data_sig[uid] = (view_sig[uid], tuple(data_sig[p] for p in node.parents))
            else:
                data_sig[uid] = ("data", uid, data.get(uid)) if node.kind in DATA_KINDS else None
        return {
            uid: view_sig[uid]
            if node.kind == "view"
            else (node.kind, definitions.get(uid), tuple(data_sig[p] for p in node.parents))
            for uid, node in self.nodes.items()
            if node.kind != "source"
        }

    def _shape(
        self, uid: str, view_sig: Mapping[str, Hashable], data: Mapping[str, Hashable]
    ) -> Hashable:
        """What a view sees of an input: a view's definition, or a data node's columns."""
        if uid in view_sig:
            return view_sig[uid]
        state = data.get(uid)
        return ("columns", uid, state[1] if isinstance(state, tuple) else None)

    def could_reuse(
        self, signatures: Mapping[str, Hashable], full_refresh: bool
    ) -> dict[str, bool]:
        """Whether each node could have been reused at this step (a first build, a
        non-deterministic node, and --full-refresh on the kinds it rebuilds: never)."""
        out = {}
        for uid, sig in signatures.items():
            node = self.nodes[uid]
            out[uid] = (
                self.recorded.get(uid) is not None
                and self.recorded[uid] == sig
                and node.deterministic
                and not (full_refresh and node.kind in FULL_REFRESH_KINDS)
            )
        return out

    def commit(self, signatures: Mapping[str, Hashable]) -> None:
        """After a step every node holds what it was built from now (built or reused)."""
        self.recorded = dict(signatures)


def wrongly_reused(could: Mapping[str, bool], reused: Mapping[str, bool]) -> list[str]:
    """The nodes reused that had to be built: a correctness failure."""
    return sorted(uid for uid, was in reused.items() if was and not could.get(uid, False))


def _topological(nodes: Mapping[str, Node]) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(uid: str, path: tuple[str, ...]) -> None:
        if state.get(uid) == 2:
            return
        if state.get(uid) == 1:
            raise ValueError(f"cycle through {' -> '.join((*path, uid))}")
        state[uid] = 1
        for parent in nodes[uid].parents:
            visit(parent, (*path, uid))
        state[uid] = 2
        order.append(uid)

    for uid in sorted(nodes):
        visit(uid, ())
    return order
