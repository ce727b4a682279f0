"""Moving a warehouse's catalog from H2 (earlier releases) to SQLite, once.

The H2 catalog held the same two tables Iceberg's JdbcCatalog keeps in any database; copying
their rows copies every namespace, table and view pointer, and no metadata file is touched. The
rows are read by H2's own Shell (the H2 jar stays in the jar sets for this, and for jdbc depots
on H2 files) into a CSV file, each value prefixed so that NULL and '' stay apart. The copy goes
into the new SQLite file before it is linked into place (sqlite_catalog.py), so a process killed
half-way leaves the H2 catalog as it was and the next command starts over. The H2 file is then
renamed to a backup that H2 still opens, and an older release no longer finds it.
"""

from __future__ import annotations

import csv
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.embedded.sqlite_catalog import (
    NAMESPACE_COLUMNS,
    TABLE_COLUMNS,
    EmbeddedCatalog,
    Rows,
    prepare_catalog,
)
from dbt.adapters.lakehouse.exceptions import EngineSetupError

H2_DATABASE = "iceberg"
H2_BACKUP = "iceberg-h2-backup"
H2_SUFFIX = ".mv.db"
SHELL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Migrated:
    """What one migration copied, and where the H2 file went."""

    namespaces: int
    tables: int
    views: int
    database: Path
    backup: Path

    def line(self) -> str:
        return (
            f"Moved the embedded catalog from H2 to SQLite: {self.namespaces} namespaces, "
            f"{self.tables} tables and {self.views} views copied into {self.database}; the H2 "
            f"catalog is kept as {self.backup}."
        )


def h2_file(folder: Path) -> Path:
    return folder / (H2_DATABASE + H2_SUFFIX)


def h2_url(folder: Path) -> str:
    """The URL earlier releases opened the catalog with. AUTO_SERVER: if a holder of an earlier
    release still has the file, the Shell reads through it; IFEXISTS: never create one."""
    return (
        f"jdbc:h2:file:{(folder / H2_DATABASE).as_posix()};AUTO_SERVER=TRUE;"
        "DATABASE_TO_LOWER=TRUE;IFEXISTS=TRUE"
    )


def _encoded(columns: tuple[str, ...]) -> str:
    # Inside CSVWRITE's quoted query, so quotes are doubled.
    return ", ".join(f"COALESCE(''V'' || {c}, ''N'')" for c in columns)


def _decoded(value: str) -> str | None:
    return None if value == "N" else value[1:]


def read_h2_rows(folder: Path, java: str, h2_jar: str) -> tuple[Rows, Rows]:
    """Every row of the H2 catalog's two tables, in the SQLite tables' column order."""
    found: list[Rows] = []
    with tempfile.TemporaryDirectory(prefix="h2-migration-") as scratch:
        for table, columns in (
            ("iceberg_tables", TABLE_COLUMNS),
            ("iceberg_namespace_properties", NAMESPACE_COLUMNS),
        ):
            out = Path(scratch) / f"{table}.csv"
            query = f"SELECT {_encoded(columns)} FROM {table}"
            sql = f"CALL CSVWRITE('{out.as_posix()}', '{query}', 'charset=UTF-8')"
            command = [java, "-Dh2.bindAddress=127.0.0.1", "-cp", h2_jar, "org.h2.tools.Shell"]
            command += ["-url", h2_url(folder), "-user", "", "-password", "", "-sql", sql]
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=SHELL_TIMEOUT_S, check=False
            )
            if done.returncode != 0 or not out.exists():
                said = (done.stdout + done.stderr).strip().splitlines()
                raise EngineSetupError(
                    f"The embedded catalog's H2 file {h2_file(folder)} could not be read to move "
                    f"it to SQLite ({said[-1] if said else f'exit {done.returncode}'}). Fix: stop "
                    "any older dbt-lakehouse or H2 tool using this warehouse and rerun; nothing "
                    "was changed."
                )
            with out.open(newline="", encoding="utf-8") as handle:
                lines = list(csv.reader(handle))[1:]  # the header row
            found.append([tuple(_decoded(v) for v in line) for line in lines])
    return found[0], found[1]


def migrate_if_needed(
    catalog: EmbeddedCatalog, java: str | None, env: Mapping[str, str] | None = None
) -> Migrated | None:
    """Create the SQLite catalog, from the H2 one when the folder has it and no SQLite file."""

    def from_h2(folder: Path) -> tuple[Rows, Rows] | None:
        if not h2_file(folder).exists():
            return None
        if java is None:
            raise EngineSetupError(
                f"The embedded catalog {h2_file(folder)} is an H2 file, and moving it to SQLite "
                "needs Java, which was not found. Fix: install Java 17 or set JAVA_HOME."
            )
        try:
            return read_h2_rows(folder, java, _h2_jar(env))
        except EngineSetupError:
            if catalog.database_file.exists():
                return None  # another process moved it meanwhile (and renamed the H2 file)
            raise

    rows = prepare_catalog(catalog, from_h2)
    if rows is None:
        return None
    tables, namespaces = rows
    backup = catalog.folder / (H2_BACKUP + H2_SUFFIX)
    h2_file(catalog.folder).replace(backup)
    names = {row[1] for row in tables} | {row[1] for row in namespaces}
    return Migrated(
        namespaces=len(names),
        tables=sum(row[5] in (None, "TABLE") for row in tables),
        views=sum(row[5] == "VIEW" for row in tables),
        database=catalog.database_file,
        backup=backup,
    )


def _h2_jar(env: Mapping[str, str] | None) -> str:
    from dbt.adapters.lakehouse.engine.jars import H2_JARS, resolve_jars

    located = H2_JARS.locate(env)
    if located:
        return str(located[0])
    # Fetched now, once: only a warehouse from an earlier release needs it.
    return str(resolve_jars([H2_JARS.need], env=env)[0])
