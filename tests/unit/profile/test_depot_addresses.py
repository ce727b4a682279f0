"""Where a depot points: storage URIs, the embedded lakehouse, `dataos://` addresses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    CatalogSpec,
    DepotSecrets,
    LocalStorage,
    S3Storage,
    parse_depot_address,
)
from unit.profile.depots import (
    SECRET_KEY,
    error_of,
    resolve,
)

# --- storage types ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative_path", "uri"),
    [
        ("warehouse/", "s3://b/warehouse"),
        ("/a//b/", "s3://b/a/b"),
        ("", "s3://b"),
        ("/", "s3://b"),
        ("x", "s3://b/x"),
    ],
)
def test_s3_storage_warehouse_uri(relative_path: str, uri: str) -> None:
    storage = S3Storage("b", relative_path, "us-east-1", None)
    assert storage.warehouse_uri == uri
    assert not storage.relative_path.startswith("/")
    assert not storage.relative_path.endswith("/")


def test_local_storage_uri_and_absolute_path() -> None:
    assert LocalStorage(Path("/data/my wh")).warehouse_uri == "file:/data/my wh"
    with pytest.raises(ValueError):
        LocalStorage(Path("relative/wh"))


# --- embedded --------------------------------------------------------------------------------


def test_embedded_default(cwd: Path) -> None:
    depot = resolve(None, cwd)
    path = cwd / "lakehouse_warehouse"
    assert depot.embedded is True
    assert depot.name == "embedded"
    assert depot.source == "embedded"
    assert depot.storage == LocalStorage(path)
    assert depot.storage.warehouse_uri == f"file:{path}"
    assert depot.catalog == CatalogSpec(
        type="jdbc",
        uri=f"jdbc:sqlite:{path}/_catalog/iceberg.db?busy_timeout=120000",
        warehouse=f"file:{path}",
        properties={},
    )
    assert depot.secrets == DepotSecrets()


def test_embedded_default_follows_dbt_project_dir(cwd: Path, tmp_path: Path) -> None:
    project = tmp_path / "elsewhere"
    depot = resolve(None, cwd, env={"DBT_PROJECT_DIR": str(project)})
    assert depot.storage == LocalStorage(project / "lakehouse_warehouse")


def test_dbt_project_dir_does_not_move_an_explicit_relative_warehouse(
    cwd: Path, tmp_path: Path
) -> None:
    env = {"DBT_PROJECT_DIR": str(tmp_path / "elsewhere")}
    depot = resolve(None, cwd, env=env, warehouse="data/wh")
    assert depot.storage == LocalStorage(cwd / "data" / "wh")


@pytest.mark.parametrize(
    ("warehouse", "env_warehouse", "expected"),
    [
        ("/abs/wh", None, "/abs/wh"),
        ("rel/wh", None, "{cwd}/rel/wh"),
        ("../up", None, "{cwd}/../up"),
        (None, "/from/env", "/from/env"),
        (None, "env-rel", "{cwd}/env-rel"),
        ("/profile/wins", "/from/env", "/profile/wins"),
        ("file:///uri/wh", None, "/uri/wh"),
        ("~/wh", None, "{home}/wh"),
    ],
)
def test_embedded_warehouse_override(
    cwd: Path, home: Path, warehouse: str | None, env_warehouse: str | None, expected: str
) -> None:
    env = {"LAKEHOUSE_WAREHOUSE": env_warehouse} if env_warehouse else {}
    depot = resolve(None, cwd, home, env=env, warehouse=warehouse)
    want = Path(os.path.normpath(expected.format(cwd=cwd, home=home)))
    assert depot.storage == LocalStorage(want)
    assert depot.catalog.uri == f"jdbc:sqlite:{want}/_catalog/iceberg.db?busy_timeout=120000"
    assert depot.catalog.warehouse == f"file:{want}"


def test_embedded_warehouse_must_be_local(cwd: Path) -> None:
    msg = error_of(None, cwd, warehouse="s3://bucket/wh")
    assert "must be a local folder" in msg
    assert "s3://" in msg
    assert "dataos://<depot-name>" in msg


# --- addresses -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "name"),
    [
        ("dataos://aws-lakehouse-depot", "aws-lakehouse-depot"),
        ("  dataos://x_1.y/ ", "x_1.y"),
        ("DATAOS://Upper", "Upper"),
    ],
)
def test_parse_depot_address(address: str, name: str) -> None:
    assert parse_depot_address(address) == name


def test_unsupported_scheme_is_verbatim(cwd: Path) -> None:
    msg = error_of("s3://x", cwd)
    assert msg.splitlines()[0] == "Unsupported scheme: s3. Expected 'dataos://'"
    assert "Use depot: dataos://<depot-name>, an inline depot mapping, or env." in msg


def test_address_without_scheme(cwd: Path) -> None:
    msg = error_of("aws-lakehouse-depot", cwd)
    assert msg.splitlines()[0] == "Unsupported scheme: aws-lakehouse-depot. Expected 'dataos://'"
    assert "Use depot: dataos://<depot-name>, an inline depot mapping, or env." in msg
    assert "Did you mean dataos://aws-lakehouse-depot?" in msg


def test_env_is_case_sensitive(cwd: Path) -> None:
    msg = error_of("ENV", cwd)
    assert msg.startswith("Unsupported scheme: ENV. Expected 'dataos://'")
    assert "`env` is lower case" in msg


def test_scheme_error_does_not_echo_url_credentials() -> None:
    with pytest.raises(DepotConfigError) as info:
        parse_depot_address(f"https://user:{SECRET_KEY}@host/x")
    assert info.value.msg.splitlines()[0] == "Unsupported scheme: https. Expected 'dataos://'"
    assert SECRET_KEY not in str(info.value)


@pytest.mark.parametrize("address", ["dataos://", "dataos://a/b", "dataos://a b"])
def test_invalid_depot_name(address: str) -> None:
    with pytest.raises(DepotConfigError, match="Invalid depot address"):
        parse_depot_address(address)


@pytest.mark.parametrize(("depot", "phrase"), [("", "is empty"), ("  ", "is empty")])
def test_empty_depot_is_an_error_not_embedded(cwd: Path, depot: str, phrase: str) -> None:
    assert phrase in error_of(depot, cwd)


def test_depot_of_wrong_type(cwd: Path) -> None:
    msg = error_of(42, cwd)
    assert "must be a string or a mapping" in msg
    assert "got a int" in msg
