"""A statement's own errors, as both engine lines word them (docs/engine-lines.md).

Spark 4 names each error by its condition (`[NOT_NULL_ASSERT_VIOLATION] NULL value appeared
...`) and ends its first line with the SQL state (`SQLSTATE: 42000`); Spark 3.5 words some of the
same errors differently and gives no state. What the adapter reads in them is read here, for
both: the failure of one of its own data checks (check_failure_sql), and a NULL a required
column (a contract's not_null or primary_key) refused, explained with the fix.
"""

from __future__ import annotations

import re

# A check in the adapter's SQL fails with raise_error(<tag><message>); Spark wraps the message
# in a task failure and a stack trace, and the tag finds it again there. Spark 4 puts the error's
# SQL state after the message on the same line: it is not part of the check's message.
_CHECK_TAG = "[dbt-lakehouse check] "
_CHECK_FAILED = re.compile(
    re.escape(_CHECK_TAG) + r"(?P<message>[^\n]+?)(?:\s+SQLSTATE: \w+)?\s*(?:\n|$)"
)

# Writing a NULL into a required field: Spark 3.5 `Null value appeared in non-nullable field:`,
# Spark 4 `[NOT_NULL_ASSERT_VIOLATION] NULL value appeared in non-nullable field:`, each followed
# by the field's path (one name per line) and advice about Scala and Java classes that does not
# apply to SQL.
_REQUIRED_NULL = re.compile(
    r"(?i)null value appeared in non-nullable field:[ \t]*\n(?P<path>(?:[ \t]*[^\n]*\n)*?)"
    r"[ \t]*If the schema is inferred"
)


def check_failure_sql(message_sql: str) -> str:
    """A SQL expression that fails its statement with `message_sql` (a SQL string expression).

    The tag is split in the SQL text: an error that quotes the statement (a parse error)
    must not read as a failed check.
    """
    head, tail = _CHECK_TAG[:3], _CHECK_TAG[3:]
    return f"raise_error(concat('{head}', '{tail}', {message_sql}))"


def failed_check_message(text: str) -> str | None:
    """The message of a failed check_failure_sql in an engine error's text, else None."""
    found = _CHECK_FAILED.search(text)
    return found.group("message").strip() if found else None


def explain_sql_error(text: str) -> str | None:
    """A first line with the fix for a statement's error the user can act on, else None."""
    found = _REQUIRED_NULL.search(text)
    if found is None and "NOT_NULL_ASSERT_VIOLATION" not in text:
        return None
    lines = (found.group("path") if found else "").split("\n")
    column = ".".join(part for part in (line.strip().lstrip("- ") for line in lines) if part)
    return (
        f"A NULL reached the required column {column or '(unnamed)'}: the table holds it as NOT "
        "NULL (a contract's not_null or primary_key constraint: an Iceberg required field), so "
        "the write failed and wrote nothing. Fix: keep NULLs out of that column in the model's "
        "SQL (a filter or a coalesce), or drop the constraint."
    )
