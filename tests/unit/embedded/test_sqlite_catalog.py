"""The embedded catalog's SQLite file: made whole once, in Iceberg's schema, opened by pyiceberg."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.embedded import EmbeddedCatalog, catalog_jdbc_url, prepare_catalog
from dbt.adapters.lakehouse.embedded.h2_migration import _decoded, _encoded
from dbt.adapters.lakehouse.embedded.pyiceberg_catalog import pyiceberg_properties
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import resolve_depot


def columns(database: Path, table: str) -> list[str]:
    with sqlite3.connect(database) as con:
        return [row[1] for row in con.execute(f"PRAGMA table_info({table})")]


def test_made_once_in_icebergs_schema_and_wal_mode(tmp_path: Path) -> None:
    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    assert prepare_catalog(catalog) is None  # nothing moved over
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
    assert prepare_catalog(catalog, lambda folder: pytest.fail("must not migrate")) is None
    with sqlite3.connect(database) as con:
        assert con.execute("SELECT count(*) FROM iceberg_namespace_properties").fetchone() == (1,)
    assert not list(catalog.folder.glob(".*partial"))


def test_another_process_made_it_first(tmp_path: Path) -> None:
    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    rows = ([("lakehouse", "a", "t", "file:/m.json", None, "TABLE")], [])

    def other_process_wins(folder: Path) -> tuple[list, list]:  # type: ignore[type-arg]
        # The other process links its file between this one's look and its link.
        prepare_catalog(EmbeddedCatalog("lakehouse", folder.parent))
        return rows

    assert prepare_catalog(catalog, other_process_wins) is None
    with sqlite3.connect(catalog.database_file) as con:
        assert con.execute("SELECT count(*) FROM iceberg_tables").fetchone() == (0,)
    assert not list(catalog.folder.glob(".*partial"))


def test_rows_moved_over_keep_nulls_and_types(tmp_path: Path) -> None:
    catalog = EmbeddedCatalog("lakehouse", tmp_path / "wh")
    tables = [
        ("lakehouse", "a", "t", "file:/t2.json", "file:/t1.json", "TABLE"),
        ("lakehouse", "a", "v", "file:/v1.json", None, "VIEW"),
    ]
    namespaces = [("lakehouse", "a", "exists", "true"), ("lakehouse", "b", "owner", "")]
    assert prepare_catalog(catalog, lambda folder: (tables, namespaces)) == (tables, namespaces)
    with sqlite3.connect(catalog.database_file) as con:
        assert con.execute("SELECT * FROM iceberg_tables ORDER BY 3").fetchall() == tables
        assert (
            con.execute("SELECT * FROM iceberg_namespace_properties ORDER BY 2").fetchall()
            == namespaces
        )


def test_h2_values_are_prefixed_so_null_and_empty_stay_apart() -> None:
    assert _encoded(("a",)) == "COALESCE(''V'' || a, ''N'')"
    assert [_decoded(v) for v in ("N", "V", "Vx", "VN")] == [None, "", "x", "N"]


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

    def uri(env: dict[str, str]) -> str | None:
        depot = resolve_depot(
            depot=None,
            depots_file=None,
            warehouse=str(tmp_path),
            aws_region=None,
            aws_endpoint=None,
            env=env,
            cwd=tmp_path,
        )
        return depot.catalog.uri

    assert str(uri({"LAKEHOUSE_CATALOG_WAIT": "2.5"})).endswith("?busy_timeout=2500")
    with pytest.raises(DepotConfigError, match="LAKEHOUSE_CATALOG_WAIT"):
        uri({"LAKEHOUSE_CATALOG_WAIT": "soon"})
