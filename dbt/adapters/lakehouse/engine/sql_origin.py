"""Engine errors read back against where their SQL came from: the model config a column in an
unresolved-column error was written in, and Spark's logical plans kept off the console.

A materialization notes the SQL its configs contribute (`incremental_predicates`, `check_cols`,
...) for the node it runs; when a statement of that node then fails on a column Spark cannot
resolve, the message names the config holding that column, since Spark's own text names only
the column and shows the whole generated statement's plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# Spark 3.5: `[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name
# `t`.`c` cannot be resolved. Did you mean one of the following? [...]`; Spark 4 says
# "A column, variable, or function parameter".
_UNRESOLVED = re.compile(
    r"\[UNRESOLVED_COLUMN\.\w+\][^`]*?name (?P<name>(?:`(?:[^`]|``)*`\.?)+) cannot be resolved\."
    r"(?: Did you mean one of the following\? \[(?P<suggestions>[^\]]*)\])?"
)
_NAME_PART = re.compile(r"`((?:[^`]|``)*)`")
# A logical plan follows its error's first line (`...; line 7 pos 9;`) as lines of tree nodes:
# `'MergeIntoTable ...`, `:- SubqueryAlias ...`, `+- View ...`, indented children.
_PLAN_START = re.compile(r"^'?[A-Z][A-Za-z0-9]*(?: |\[|\(|$)")
_PLAN_LINE = re.compile(r"^(?:\s|:|\+-|'|[A-Z][A-Za-z0-9]*(?: |\[|\(|$))")


def config_sql(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The SQL fragments each config contributes, as the model's config gives them; unset
    ones left out."""
    noted: dict[str, list[str]] = {}
    for key, value in config.items():
        if value is None or value == "" or value == []:
            continue
        if isinstance(value, str):
            noted[key] = [value]
        elif isinstance(value, Mapping):
            noted[key] = [str(v) for v in value.values()]
        elif isinstance(value, Iterable):
            noted[key] = [str(v) for v in value]
        else:
            noted[key] = [str(value)]
    return noted


def unresolved_column(text: str) -> tuple[list[str], str | None] | None:
    """The name parts of the column in an unresolved-column error, and Spark's suggestions."""
    found = _UNRESOLVED.search(text)
    if found is None:
        return None
    parts = [p.replace("``", "`") for p in _NAME_PART.findall(found.group("name"))]
    return parts, found.group("suggestions")


def explain_config_column(text: str, noted: Mapping[str, list[str]]) -> str | None:
    """A first line naming the config a column Spark cannot resolve came from, else None."""
    column = unresolved_column(text)
    if column is None or not noted:
        return None
    parts, suggestions = column
    shown = ".".join(f"`{p}`" for p in parts)
    for key, fragments in noted.items():
        for fragment in fragments:
            if _mentions(fragment, parts):
                hint = f" Did you mean one of: {suggestions}?" if suggestions else ""
                return (
                    f"Column {shown} cannot be resolved; config `{key}` of this node names it "
                    f"({fragment!r}).{hint} Fix: correct the column in `{key}`."
                )
    return None


def without_plans(text: str) -> str:
    """`text` less the logical plans Spark appends to analysis errors (they belong in the debug
    log: a plan of a generated statement is dozens of lines a user did not write)."""
    lines = text.splitlines()
    kept: list[str] = []
    in_plan = False
    for index, line in enumerate(lines):
        if in_plan:
            if _PLAN_LINE.match(line) and not line.lstrip().startswith("caused by:"):
                continue
            in_plan = False
        kept.append(line)
        follows = lines[index + 1] if index + 1 < len(lines) else ""
        if line.rstrip().endswith(";") and _PLAN_START.match(follows):
            in_plan = True
    return "\n".join(kept)


def _mentions(fragment: str, parts: list[str]) -> bool:
    """Whether `fragment` names the column: its last part as a word, qualified by the other
    parts where Spark's name has them (a qualifier may be backticked or bare)."""
    column = re.escape(parts[-1])
    pattern = rf"(?<![\w`])`?{column}`?(?![\w`])"
    if len(parts) > 1:
        qualifier = re.escape(parts[-2])
        pattern = rf"(?<![\w`])`?{qualifier}`?\s*\.\s*`?{column}`?(?![\w`])"
    return re.search(pattern, fragment, flags=re.IGNORECASE) is not None
