"""A node's DESCRIBE results, kept while nothing it ran since could have changed them.

dbt's snapshot flow describes the same two relations seven times between its staging view and
its MERGE (the strategy's column check, the target's validation, the column expansion, the
missing-column check, the insert list), each a statement of its own. A materialization that
asks (`adapter.remember_descriptions`) has a relation's description answered from here until
one of its statements may have changed it:

- a statement that only reads (SELECT, DESCRIBE, SHOW, EXPLAIN) changes nothing;
- one that writes a relation forgets that relation and every view kept (a view's columns can
  follow the tables it reads);
- any other (a namespace, a procedure, a statement the cursor cannot name the object of)
  forgets everything, as does the end of the materialization.

It lives on the connection handle, which lives as long as the node: each node starts empty.
Writes that do not pass through the cursor (a dropped temporary view) forget their relation
through `forget`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dbt.adapters.lakehouse.engine.written import name_parts, written_object

if TYPE_CHECKING:
    from dbt.adapters.lakehouse.iceberg.describe import RelationDescription

# After any leading comments (dbt's query comment): a statement that only reads.
_READ_ONLY = re.compile(
    r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*(?:select|describe|desc|show|explain)\b",
    re.IGNORECASE | re.DOTALL,
)


class DescribeMemo:
    def __init__(self) -> None:
        self._on = False
        # (relation name's parts, lower case; relation type) -> its description
        self._kept: dict[tuple[tuple[str, ...], str], RelationDescription] = {}

    def start(self) -> None:
        self._on = True
        self._kept.clear()

    def stop(self) -> None:
        self._on = False
        self._kept.clear()

    @staticmethod
    def key(rendered: str, relation_type: object) -> tuple[tuple[str, ...], str]:
        return tuple(part.lower() for part in name_parts(rendered)), str(relation_type)

    def get(self, key: tuple[tuple[str, ...], str]) -> RelationDescription | None:
        return self._kept.get(key) if self._on else None

    def keep(self, key: tuple[tuple[str, ...], str], description: RelationDescription) -> None:
        if self._on:
            self._kept[key] = description

    def statement_ran(self, statement: str) -> None:
        """Called by the cursor before each statement runs (a failed one may have written)."""
        if not self._kept:
            return
        if _READ_ONLY.match(statement):
            return
        written = written_object(statement)
        if written is None or written.kind != "relation":
            self._kept.clear()
            return
        self.forget(written.last_part)

    def forget(self, relation_name: str) -> None:
        """Forget `relation_name` (its last name part) and every view."""
        name = relation_name.lower()
        for key, description in list(self._kept.items()):
            if key[0][-1:] == (name,) or _is_view(key, description):
                del self._kept[key]


def _is_view(key: tuple[tuple[str, ...], str], description: RelationDescription) -> bool:
    return key[1] == "view" or "View Text" in description.details
