"""The embedded catalog's SQLite file: made whole once, in Iceberg's schema, opened by pyiceberg."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.embedded import (
    EmbeddedCatalog,
    catalog_jdbc_url,
    prepare_catalog,
    sqlite_catalog,
)
from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import pyiceberg_properties
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import resolve_depot


def embedded_uri(cwd: Path, warehouse: Path, env: dict[str, str] | None = None) -> str | None:
    """The catalog URI of an embedded lakehouse in `warehouse`."""
    depot = resolve_depot(
        depot=None,
        depots_file=None,
        warehouse=str(warehouse),
        aws_region=None,
        aws_endpoint=None,
        env=env or {},
        cwd=cwd,
    )
    return depot.catalog.uri


def columns(database: Path, table: str) -> list[str]:
    with sqlite3.connect(database) as con:
        return [row[1] for row in con.execute(f"PRAGMA table_info({table})")]


def test_made_once_in_icebergs_schema_and_wal_mode(tmp_path: Path) -> None:
    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    assert prepare_catalog(catalog) is True
    database = catalog.database_file
    assert columns(database, "iceberg_tables") == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    assert columns(database, "iceberg_namespace_properties") == [
        "catalog_name",
        "namespace",
        "property_key",
        "property_value",
    ]
    with sqlite3.connect(database) as con:
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        con.execute("INSERT INTO iceberg_namespace_properties VALUES ('lakehouse', 'a', 'k', 'v')")
    # A second look finds it and changes nothing; no partial file is left behind.
    assert prepare_catalog(catalog) is False
    with sqlite3.connect(database) as con:
        assert con.execute("SELECT count(*) FROM iceberg_namespace_properties").fetchone() == (1,)
    assert not list(catalog.folder.glob(".*partial"))


def test_another_process_made_it_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    build = sqlite_catalog._build

    def other_process_wins(database: Path) -> None:
        # The other process links its own file between this one's look and its link.
        build(database)
        other = catalog.folder / ".iceberg.db.other.partial"
        build(other)
        os.link(other, catalog.database_file)
        other.unlink()
        with sqlite3.connect(catalog.database_file) as con:
            con.execute(
                "INSERT INTO iceberg_namespace_properties VALUES ('lakehouse', 'a', 'k', 'v')"
            )

    monkeypatch.setattr(sqlite_catalog, "_build", other_process_wins)
    assert prepare_catalog(catalog) is False
    # The other process's file stays, with what it wrote meanwhile.
    with sqlite3.connect(catalog.database_file) as con:
        assert con.execute("SELECT count(*) FROM iceberg_namespace_properties").fetchone() == (1,)
    assert not list(catalog.folder.glob(".*partial"))


def test_pyiceberg_opens_it_and_sees_what_jdbc_wrote(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    prepare_catalog(catalog)
    with sqlite3.connect(catalog.database_file) as con:
        con.execute(
            "INSERT INTO iceberg_namespace_properties VALUES ('lakehouse', 'a', 'exists', 'true')"
        )
        con.executemany(
            "INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, NULL, ?)",
            [("lakehouse", "a", "v", "file:/v.json", "VIEW"), ("other", "a", "t", "f", "TABLE")],
        )
    properties = pyiceberg_properties(catalog)
    assert properties["uri"].endswith("/wh/_catalog/iceberg.db?timeout=120")
    opened = SqlCatalog("lakehouse", **properties)
    assert opened.list_namespaces() == [("a",)]
    # A view is no table to pyiceberg, and another catalog's rows are not this one's.
    assert opened.list_tables("a") == []


def test_the_wait_is_the_drivers_busy_timeout(tmp_path: Path) -> None:
    assert catalog_jdbc_url(Path("/w")) == "jdbc:sqlite:/w/_catalog/iceberg.db?busy_timeout=120000"

    wait = {"LAKEHOUSE_CATALOG_WAIT": "2.5"}
    assert str(embedded_uri(tmp_path, tmp_path, wait)).endswith("?busy_timeout=2500")
    with pytest.raises(DepotConfigError, match="LAKEHOUSE_CATALOG_WAIT"):
        embedded_uri(tmp_path, tmp_path, {"LAKEHOUSE_CATALOG_WAIT": "soon"})


def test_a_question_mark_in_the_folder_is_refused_a_semicolon_is_not(tmp_path: Path) -> None:
    semicolon = tmp_path / "a;b"
    assert embedded_uri(tmp_path, semicolon) == catalog_jdbc_url(semicolon)
    with pytest.raises(DepotConfigError, match="cannot contain '\\?'"):
        embedded_uri(tmp_path, tmp_path / "a?b")
