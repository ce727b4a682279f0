"""The SQLite file behind the embedded catalog: where it is, its tables, its creation, and where
each of its tables' and views' current metadata is.

The file is made whole before any JVM opens it: built under a private name, then linked into
place (link(2) fails when the name exists), so two processes starting on a new warehouse never
both create tables, and none sees a half-made catalog. Iceberg's JdbcCatalog would create them
itself, but its V1 upgrade (ALTER TABLE ... ADD COLUMN iceberg_type) races between processes
and fails in all but one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

CATALOG_DIR = "_catalog"
SQLITE_FILE = "iceberg.db"
# How long a process waits for another one's write lock before its statement fails. Commits
# are one short UPDATE each; a long wait only happens behind a stuck foreign writer.
BUSY_TIMEOUT_SECONDS = 120.0

# Iceberg's own DDL (JdbcUtil V0_CREATE_CATALOG_SQL + V1_UPDATE_CATALOG_SQL, and
# CREATE_NAMESPACE_PROPERTIES_TABLE_SQL), which pyiceberg's SqlCatalog declares the same way.
CATALOG_DDL = (
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255), property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))",
)


@dataclass(frozen=True)
class EmbeddedCatalog:
    """One warehouse's embedded catalog: `name` is the Spark catalog name (the `catalog_name`
    of its rows), `warehouse` the lakehouse folder."""

    name: str
    warehouse: Path

    @property
    def folder(self) -> Path:
        return self.warehouse / CATALOG_DIR

    @property
    def database_file(self) -> Path:
        return self.folder / SQLITE_FILE


def catalog_jdbc_url(warehouse: Path, busy_timeout_seconds: float = BUSY_TIMEOUT_SECONDS) -> str:
    """The JDBC URL every JVM opens the catalog with. The xerial driver reads its pragmas from
    the URL; busy_timeout makes a process wait for another one's write lock instead of failing
    with SQLITE_BUSY."""
    database = warehouse / CATALOG_DIR / SQLITE_FILE
    return f"jdbc:sqlite:{database.as_posix()}?busy_timeout={int(busy_timeout_seconds * 1000)}"


def connect(database: Path, timeout: float = BUSY_TIMEOUT_SECONDS) -> sqlite3.Connection:
    return sqlite3.connect(database, timeout=timeout)


def prepare_catalog(catalog: EmbeddedCatalog) -> bool:
    """Make the catalog file exist. True when this process created it; False when it existed or
    another process made it first."""
    target = catalog.database_file
    if target.exists():
        return False
    catalog.folder.mkdir(parents=True, exist_ok=True)
    partial = catalog.folder / f".{SQLITE_FILE}.{os.getpid()}.partial"
    partial.unlink(missing_ok=True)
    try:
        _build(partial)
        try:
            os.link(partial, target)
        except FileExistsError:
            return False  # another process made it first: the same empty catalog
        _sync_folder(catalog.folder)
        return True
    finally:
        partial.unlink(missing_ok=True)


def _build(database: Path) -> None:
    with contextlib.closing(connect(database)) as con:
        # WAL: readers (every loadTable) never wait for a writer, and a writer never for them.
        # The mode is kept in the file, so every later opener uses it.
        con.execute("PRAGMA journal_mode=WAL")
        with con:
            for ddl in CATALOG_DDL:
                con.execute(ddl)
    # Closing the last connection checkpointed the WAL into the file and removed it.


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_READERS = threading.local()


def _reader(database: Path) -> sqlite3.Connection:
    """This thread's connection to `database`, made anew when the file was replaced (a
    warehouse deleted and made again); sqlite3's connections are per thread."""
    readers: dict[Path, tuple[tuple[int, int], sqlite3.Connection]] = _READERS.__dict__.setdefault(
        "by_file", {}
    )
    found = os.stat(database)
    identity = (found.st_dev, found.st_ino)
    kept = readers.get(database)
    if kept is None or kept[0] != identity:
        if kept is not None:
            kept[1].close()
        kept = readers[database] = (identity, connect(database))
    return kept[1]


def namespace_names(database: Path, catalog_name: str) -> set[str]:
    """Every namespace the catalog holds (nested ones as `a.b`), as Iceberg's JdbcCatalog
    finds them: those with properties, and those its tables and views are in."""
    rows = _reader(database).execute(
        "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? "
        "UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?",
        (catalog_name, catalog_name),
    )
    return {str(ns) for (ns,) in rows}


def objects_in(database: Path, catalog_name: str, namespace: str) -> list[tuple[str, bool]]:
    """The tables and views directly in `namespace`: (name, is a view), by name."""
    rows = _reader(database).execute(
        "SELECT table_name, iceberg_type FROM iceberg_tables "
        "WHERE catalog_name = ? AND table_namespace = ? ORDER BY table_name",
        (catalog_name, namespace),
    )
    return [(str(name), str(kind or "").upper() == "VIEW") for name, kind in rows]


def metadata_locations(
    database: Path, catalog_name: str, namespaces: Collection[str] | None = None
) -> dict[tuple[str, str], str]:
    """(namespace, name) -> the current metadata file of each table and view the catalog holds
    (in `namespaces` only, when given), read from its row as the last commit left it. A commit
    writes a new metadata file under a new name, so an unchanged location is an unchanged table
    or view. WAL lets this read run beside a JVM's commit."""
    con = _reader(database)
    query = (
        "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables "
        "WHERE catalog_name = ?"
    )
    params: list[str] = [catalog_name]
    if namespaces is not None:
        if not namespaces:
            return {}
        query += f" AND table_namespace IN ({', '.join('?' * len(namespaces))})"
        params += sorted(namespaces)
    return {
        (str(ns), str(name)): str(location) for ns, name, location in con.execute(query, params)
    }
