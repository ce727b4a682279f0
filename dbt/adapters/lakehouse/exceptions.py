"""The errors this adapter raises, as dbt error types so dbt reports them in its own way.

Every message says what is wrong, what was given, and what is accepted; none carries a secret.
"""

from __future__ import annotations

from dbt_common.exceptions import CompilationError, DbtDatabaseError, DbtRuntimeError


class DepotConfigError(DbtRuntimeError):
    """The profile or depot definition cannot be turned into a working lakehouse."""

    CODE = 10101
    MESSAGE = "Lakehouse profile error"


class EngineSetupError(DbtRuntimeError):
    """Spark could not be started: Java, jars, or the JVM itself."""

    CODE = 10102
    MESSAGE = "Lakehouse engine error"


class PreflightError(DbtRuntimeError):
    """`dbt debug` found the depot's storage or catalog unusable (before Spark starts)."""

    CODE = 10103
    MESSAGE = "Lakehouse preflight error"


class PartitionConfigError(CompilationError):
    """A model's `partition_by` cannot be rendered as an Iceberg partition spec."""


class LakehouseDatabaseError(DbtDatabaseError):
    """Spark or Iceberg refused a statement.

    `retryable` marks errors where running the same statement again may succeed (an Iceberg
    commit that lost a race with another writer).
    """

    def __init__(self, msg: str, retryable: bool = False) -> None:
        super().__init__(msg)
        self.retryable = retryable


class CommitConflictError(LakehouseDatabaseError):
    """Another writer committed to the same table first, and retries ran out."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg, retryable=True)


# Spark and Iceberg report these conditions only as text (class names, error classes).
_NAMESPACE_MISSING = ("[SCHEMA_NOT_FOUND]", "NoSuchNamespaceException", "Namespace does not exist")
_RELATION_MISSING = ("[TABLE_OR_VIEW_NOT_FOUND]", "NoSuchTableException", "NoSuchViewException")
_COMMIT_CONFLICT = (
    "CommitFailedException",
    "Found conflicting files",
    "Found new conflicting delete files",
    "Cannot commit, found new",
    "Requirement failed: branch main has changed",
    "Requirement failed: table metadata changed",
    "Commit failed: Requirement failed",
)


def engine_error_text(exc: BaseException) -> str:
    """The readable part of a Spark, Iceberg or Py4J error, without the JVM stack trace."""
    java_exception = getattr(exc, "java_exception", None)
    if java_exception is not None and type(exc).__name__ == "Py4JJavaError":
        messages = []
        current = java_exception
        while current is not None and len(messages) < 4:
            text = str(current.toString())
            if not messages or text not in messages[-1]:
                messages.append(text)
            current = current.getCause()
        return "\n  caused by: ".join(messages)
    text = str(exc).strip()
    # PySpark appends the JVM stack trace after this marker when it is enabled.
    return text.split("\n\nJVM stacktrace:")[0]


def is_namespace_missing(text: str) -> bool:
    return any(marker in text for marker in _NAMESPACE_MISSING)


def is_relation_missing(text: str) -> bool:
    return any(marker in text for marker in _RELATION_MISSING)


def is_views_unsupported(text: str) -> bool:
    return "MISSING_CATALOG_ABILITY" in text or "does not support views" in text.lower()


def is_commit_conflict(text: str) -> bool:
    return any(marker in text for marker in _COMMIT_CONFLICT)
