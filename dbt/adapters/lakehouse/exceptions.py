"""The errors this adapter raises, as dbt error types so dbt reports them in its own way.

Every message says what is wrong, what was given, and what is accepted; none carries a secret.
Which type an engine error's text maps to, and what it means for the user, is decided beside
the engine (engine/diagnosis.py).
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


class ConnectUnsupportedError(DbtRuntimeError):
    """A feature that needs the Spark driver in dbt's process, asked for under Spark Connect."""

    CODE = 10111
    MESSAGE = "Lakehouse Spark Connect error"


class PreflightError(DbtRuntimeError):
    """`dbt debug` found the depot's storage or catalog unusable (before Spark starts)."""

    CODE = 10103
    MESSAGE = "Lakehouse preflight error"


class ReadOnlyDepotError(DbtRuntimeError):
    """A statement would write into a catalog whose depot is mounted read-only."""

    CODE = 10104
    MESSAGE = "Lakehouse read-only depot"


class PartitionConfigError(CompilationError):
    """A model's `partition_by` cannot be rendered as an Iceberg partition spec."""


class LakehouseDatabaseError(DbtDatabaseError):
    """Spark or Iceberg refused a statement. The connection layer raises the subclass that
    names what went wrong (engine_error_type), so callers check types, never message text."""


class NamespaceMissingError(LakehouseDatabaseError):
    """The namespace (schema) does not exist in the catalog."""


class RelationMissingError(LakehouseDatabaseError):
    """The table or view does not exist."""


class ViewsUnsupportedError(LakehouseDatabaseError):
    """The catalog cannot hold views (the hadoop catalog)."""


class AccessDeniedError(LakehouseDatabaseError):
    """The storage or the catalog refused the credentials or the operation."""


class CatalogUnreachableError(LakehouseDatabaseError):
    """The catalog service could not be reached."""


class DataCheckError(LakehouseDatabaseError):
    """A check the adapter's own SQL makes on the rows a statement writes failed (a repeated
    merge key, a microbatch row outside its window); the statement committed nothing."""


class CommitConflictError(LakehouseDatabaseError):
    """Another writer committed to the same table first (and, when raised by the cursor,
    retries ran out)."""

    def __init__(self, msg: str, engine_text: str = "") -> None:
        super().__init__(msg)
        # What Iceberg said, for the log only: a failed validation lists every conflicting
        # data file, which would bury the message and its fix on the console.
        self.engine_text = engine_text
