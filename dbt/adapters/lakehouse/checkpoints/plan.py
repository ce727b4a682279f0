"""Pure rules of view checkpoints: how large a view's inlined plan is, which statements may read
a checkpoint instead of the view, and the rewrite that makes them.

Spark inlines a view into every statement that reads it, so a view reading another view twice
(a union of two branches, a self-join) carries two copies of it, and a stack of such views
doubles with each level: one statement then plans, ships and runs 2^depth scans, most of them
the same few relations (bench/RESULTS.md: stacked views). That is counted where dbt wrote it, in
the view's compiled SQL: the relations its inlined plan scans, with how often, a view built
earlier in the run standing for its own, a view already checkpointed for itself once.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

# A view is checkpointed when its inlined plan scans this many relations or more, one of them
# this many times or more: a plan that only names many tables copies nothing.
CHECKPOINT_SCANS = 16
CHECKPOINT_REPEATS = 4
# A smaller plan copied into several readers: a view whose inlined plan scans this many
# relations or more, one of them this many times or more, read by this many of the run's nodes
# or more, each of which would run its plan again (bench/stacked_views.py: the seven `w_` views,
# 8 scans each, each read by two `d_` views, whose readers inlined each of them twice).
SHARED_SCANS = 8
SHARED_REPEATS = 2
SHARED_READERS = 2

Leaves = Counter[str]

# A relation as the adapter renders it, `catalog`.`schema`.`name`, and not part of a longer
# dotted name (a metadata table, a column).
_PART = r"`(?:[^`]|``)+`"
RELATION_NAME = re.compile(rf"(?<![.`\w]){_PART}\s*\.\s*{_PART}\s*\.\s*{_PART}(?!\s*\.)")
_LEADING_COMMENTS = re.compile(r"^(?:\s*/\*.*?\*/|\s*--[^\n]*(?:\n|$))*\s*", re.S)
# Statements that must keep naming the view itself: a stored view's definition (which cannot
# name a temporary view and outlives the run), and statements about the view rather than its
# rows.
_NAMES_THE_VIEW = re.compile(
    r"(?:create\s+(?:or\s+replace\s+)?view|alter|drop|describe|desc|show|comment|refresh"
    r"|analyze|msck|cache|uncache)\b",
    re.I,
)


def normalized(name: str) -> str:
    """A rendered relation name as a key: lower case, no blanks around its dots."""
    return re.sub(r"\s*\.\s*", ".", name.strip()).lower()


def leaves(sql: str, known: Mapping[str, Leaves]) -> Leaves:
    """The relations the query's inlined plan scans, with how often: each relation it names
    stands for what `known` holds of it (views built earlier in the run), else for itself."""
    found: Leaves = Counter()
    for match in RELATION_NAME.finditer(sql):
        name = normalized(match.group(0))
        found.update(known.get(name) or {name: 1})
    return found


def setting_problem(setting: object) -> str | None:
    """What is wrong with a `checkpoint` config value, naming the fix (None: nothing)."""
    if setting is None or isinstance(setting, bool) or str(setting).lower() == "auto":
        return None
    return (
        f"config `checkpoint: {setting!r}` is not one of true, false or 'auto'. Fix: set "
        "`checkpoint: auto` (checkpoint the view when its inlined plan is large), true "
        "(always) or false (never), or leave it unset (auto)."
    )


def should_checkpoint(scanned: Leaves, setting: object, readers: int = 0) -> bool:
    """The model's `checkpoint` config (valid: setting_problem): true always, false never;
    `auto`, the default, when its inlined plan scans CHECKPOINT_SCANS relations or more, one of
    them CHECKPOINT_REPEATS times or more; or SHARED_SCANS, one of them SHARED_REPEATS times,
    when `readers` (the run's nodes that read the view) are SHARED_READERS or more."""
    if isinstance(setting, bool):
        return setting
    total = sum(scanned.values())
    most = max(scanned.values(), default=0)
    if total >= CHECKPOINT_SCANS and most >= CHECKPOINT_REPEATS:
        return True
    return readers >= SHARED_READERS and total >= SHARED_SCANS and most >= SHARED_REPEATS


def run_readers(nodes: Mapping[str, Any], selected: Iterable[str]) -> Counter[str]:
    """unique id -> how many of the run's nodes (`selected`, dbt's selected_resources) read it,
    from dbt's graph (`nodes`: its flat graph's nodes, each with `depends_on.nodes`)."""
    readers: Counter[str] = Counter()
    for unique_id in selected:
        node = nodes.get(unique_id) or {}
        readers.update(set((node.get("depends_on") or {}).get("nodes") or ()))
    return readers


def temp_view_name(relation_name: str, invocation_id: str, kind: str = "checkpoint") -> str:
    """The temporary view standing in for a view (`kind`: its checkpoint, or its `view` over
    checkpoints): the view's own name, for the logs and plans, made unique to the relation and
    the run."""
    key = normalized(relation_name)
    short = hashlib.sha256(f"{invocation_id}\n{key}".encode()).hexdigest()[:10]
    parts = re.findall(r"`((?:[^`]|``)+)`", key)
    name = re.sub(r"[^0-9a-z_]", "_", parts[-1] if parts else key)
    return f"lakehouse_{kind}__{name}__{short}"


def reads_checkpoints(statement: str) -> bool:
    """Whether the statement may read checkpoints instead of the views they hold: a query, a
    table's or temporary view's CREATE ... AS, an INSERT, a MERGE; not a stored view's
    definition nor a statement about a view."""
    body = _LEADING_COMMENTS.sub("", statement, count=1)
    return _NAMES_THE_VIEW.match(body) is None


def rewrite(statement: str, stand_ins: Mapping[str, str]) -> str:
    """The statement with each view's name that `stand_ins` holds replaced by its temporary
    view's; the statement object itself when none is named (callers test identity)."""

    def swap(match: re.Match[str]) -> str:
        temp = stand_ins.get(normalized(match.group(0)))
        return match.group(0) if temp is None else f"`{temp}`"

    rewritten = RELATION_NAME.sub(swap, statement)
    return statement if rewritten == statement else rewritten
