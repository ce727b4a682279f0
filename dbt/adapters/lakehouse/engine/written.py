"""What a SQL statement writes, read from its text: the cursor's read-only check and commit
messages, and the describe memo's invalidation (describe_memo.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlparse
from sqlparse import lexer
from sqlparse import tokens as T

_NAME = r"(?P<name>(?:`(?:[^`]|``)+`|[\w$]+)(?:\s*\.\s*(?:`(?:[^`]|``)+`|[\w$]+))*)"
# Statements that change a catalog, by what they name: a table or view (catalog.ns.name), a
# namespace (catalog.ns), or a procedure (catalog.system.proc).
_WRITES = (
    (
        "relation",
        re.compile(
            r"^\s*(?:merge\s+into|insert\s+(?:into|overwrite)(?:\s+table)?|delete\s+from|update"
            r"|(?:create\s+or\s+replace|replace|create)(?:\s+temporary)?\s+(?:table|view)"
            r"(?:\s+if\s+not\s+exists)?|alter\s+(?:table|view)|drop\s+(?:table|view)"
            r"(?:\s+if\s+exists)?|truncate\s+table|comment\s+on\s+(?:table|view))\s+" + _NAME,
            re.IGNORECASE,
        ),
    ),
    (
        "namespace",
        re.compile(
            r"^\s*(?:create|drop|alter)\s+(?:schema|namespace|database)"
            r"(?:\s+if\s+(?:not\s+)?exists)?\s+" + _NAME,
            re.IGNORECASE,
        ),
    ),
    ("procedure", re.compile(r"^\s*call\s+" + _NAME, re.IGNORECASE)),
)


@dataclass(frozen=True)
class WrittenObject:
    name: str  # as written, e.g. `raw`.`sales`.`orders`
    catalog: str | None  # None: the session's default catalog
    kind: str  # "relation", "namespace" or "procedure"

    @property
    def last_part(self) -> str:
        """The relation's own name (or the namespace's, the procedure's), lower case."""
        return name_parts(self.name)[-1].lower()


def name_parts(name: str) -> list[str]:
    return [
        part.strip("`").replace("``", "`") for part in re.findall(r"`(?:[^`]|``)+`|[\w$]+", name)
    ]


def lexed_without_comments(sql: str) -> Iterator[tuple[Any, str]]:
    """sqlparse's lexer tokens of `sql`, (kind, text), each comment as one space but an
    optimizer hint (`/*+ */`, `--+`), which can change the plan. The lexer alone: a `--` or
    `/*` inside a string literal or a quoted name stays part of it, and SQL of any length is
    read (sqlparse's formatter refuses a statement of over 10,000 tokens)."""
    for kind, value in lexer.tokenize(sql):
        if kind in T.Comment and not value.startswith(("/*+", "--+")):
            yield T.Whitespace, " "
        else:
            yield kind, value


def without_comments(sql: str) -> str:
    """`sql` with each comment one space (lexed_without_comments)."""
    return "".join(value for _, value in lexed_without_comments(sql))


_LEADING_WITH = re.compile(r"with\b", re.IGNORECASE)


def after_common_table_expressions(plain: str) -> str:
    """The statement a leading `WITH` introduces (`WITH a AS (...) INSERT INTO t ...`, which
    Spark runs as the INSERT), from its first word outside the expressions; `plain` itself when
    it does not start with `WITH`. Every statement the cursor runs passes here: only one that
    starts with `WITH` is lexed again, and only up to that word."""
    if _LEADING_WITH.match(plain) is None:
        return plain
    depth, offset = 0, 0
    for kind, value in lexer.tokenize(plain):
        if value == "(":
            depth += 1
        elif value == ")":
            depth -= 1
        elif depth == 0 and kind in T.Keyword.DML:
            return plain[offset:]
        offset += len(value)
    return plain


def written_object(statement: str) -> WrittenObject | None:
    """What a statement changes and in which catalog, or None for a read-only statement."""
    plain = after_common_table_expressions(without_comments(statement).strip())
    for kind, pattern in _WRITES:
        match = pattern.match(plain)
        if match is None:
            continue
        name = re.sub(r"\s+", "", match.group("name"))
        parts = name_parts(name)
        qualified = len(parts) >= (2 if kind == "namespace" else 3)
        return WrittenObject(name=name, catalog=parts[0] if qualified else None, kind=kind)
    return None


def write_target(statement: str) -> str | None:
    """The object a DML/DDL statement writes, as written (`cat`.`ns`.`t`), or None."""
    written = written_object(statement)
    return written.name if written else None


# A statement that only reads, by its first word after blanks and comments (dbt's query
# comment); one that starts with WITH, by what follows its common table expressions.
_READS = re.compile(
    r"(?:\s|--[^\n]*\n|/\*.*?\*/)*"
    r"(?:(select|values|table|from|show|describe|desc|explain)\b|\(|(with)\b)",
    re.I | re.S,
)


def only_reads(statement: str) -> bool:
    """Whether a statement only reads (a query, SHOW, DESCRIBE, EXPLAIN)."""
    found = _READS.match(statement)
    if found is None:
        return False
    return not found.group(2) or sqlparse.parse(statement)[0].get_type() == "SELECT"
