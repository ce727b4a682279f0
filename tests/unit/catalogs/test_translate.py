"""A catalogs.yml write integration becomes a depot entry of the shapes the profile's `depots:`
takes, and resolves through the same path into the Depot a profile's entry would be; every
problem of an integration is reported at once, naming its key, never a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.adapters.catalogs import InvalidCatalogIntegrationConfigError

from dbt.adapters.lakehouse.catalogs.integrations import (
    CATALOG_INTEGRATIONS,
    LakehouseCatalogIntegration,
    V2IntegrationConfig,
)
from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    GcsStorage,
    LocalStorage,
    S3Storage,
)
from dbt.adapters.lakehouse.profile.mounts import resolve_mounted_depots
from unit.catalogs.integration_configs import S3_SECRETS, rest_on_s3, v1
from unit.profile.depots import SECRET_VALUES

CLASSES = {c.catalog_type: c for c in CATALOG_INTEGRATIONS}


def integration(config: Any) -> LakehouseCatalogIntegration:
    made = CLASSES[config.catalog_type](config)
    assert isinstance(made, LakehouseCatalogIntegration)
    return made


def problems_of(config: Any) -> str:
    with pytest.raises(InvalidCatalogIntegrationConfigError) as info:
        integration(config)
    text = str(info.value.msg)
    for value in SECRET_VALUES:
        assert value not in text
    return text


def test_a_rest_integration_on_s3_is_the_inline_depot_a_profile_would_mount(tmp_path: Path) -> None:
    made = integration(rest_on_s3(file_format="ORC"))
    entry = made.translation.entry(tmp_path)
    assert entry == {
        "depot": {
            "type": "lakehouse",
            "spec": {
                "storageType": "s3",
                "s3": {"bucket": "lake-bucket", "relativePath": "tables", "region": "eu-west-1"},
            },
            "catalog": {
                "type": "rest",
                "uri": "http://127.0.0.1:1/rest",
                "properties": {"table-default.write.format.default": "orc"},
            },
            "secrets": S3_SECRETS,
        },
        "read_only": False,
    }
    (mount,) = resolve_mounted_depots({"lake_rest": entry}, None)
    assert isinstance(mount.depot.storage, S3Storage)
    assert mount.depot.storage.warehouse_uri == "s3://lake-bucket/tables"
    assert mount.depot.catalog.type == "rest" and mount.depot.secrets.apikey
    assert (made.table_format, made.file_format, made.spark_catalog) == (
        "iceberg",
        "orc",
        "lake_rest",
    )


@pytest.mark.parametrize(
    ("catalog_type", "volume", "properties", "storage", "where"),
    [
        ("hadoop", "lake", {}, LocalStorage, "file:{project}/lake"),
        ("jdbc", "file:/tmp/jdbc-lake", {"uri": "jdbc:h2:file:/tmp/x"}, LocalStorage, None),
        (
            "nessie",
            "gs://gcs-bucket/wh",
            {"uri": "http://127.0.0.1:19120/api/v2", "project": "p1"},
            GcsStorage,
            "gs://gcs-bucket/wh",
        ),
        (
            "hadoop",
            "abfss://box@acct.dfs.core.windows.net/wh/",
            {"secrets": {"azure_account_key": "a2V5"}},
            AbfssStorage,
            "abfss://box@acct.dfs.core.windows.net/wh",
        ),
        (
            "glue",
            "s3a://glue-bucket",
            {"region": "us-east-2", "secrets": S3_SECRETS},
            S3Storage,
            "s3://glue-bucket",
        ),
    ],
)
def test_each_catalog_type_and_volume_resolves_as_a_depot(
    tmp_path: Path,
    catalog_type: str,
    volume: str,
    properties: dict[str, Any],
    storage: type,
    where: str | None,
) -> None:
    config = v1("lake", catalog_type, external_volume=volume, adapter_properties=properties)
    entry = integration(config).translation.entry(tmp_path)
    (mount,) = resolve_mounted_depots({"lake": entry}, None)
    assert isinstance(mount.depot.storage, storage)
    assert mount.depot.catalog.type == catalog_type
    if where is not None:
        assert mount.depot.storage.warehouse_uri == where.format(project=tmp_path)


def test_a_relative_or_home_volume_is_the_projects_or_homes(tmp_path: Path) -> None:
    relative = integration(v1("a", "hadoop", external_volume="../shared/lake"))
    spec = relative.translation.entry(tmp_path / "project")["depot"]["spec"]  # type: ignore[index]
    assert spec == {"storageType": "file", "file": {"path": str(tmp_path / "shared" / "lake")}}
    home = integration(v1("b", "hadoop", external_volume="~/lake"))
    spec = home.translation.entry(tmp_path)["depot"]["spec"]  # type: ignore[index]
    assert spec["file"]["path"] == str(Path("~/lake").expanduser())


def test_a_named_depot_leaves_storage_and_catalog_to_the_depot(tmp_path: Path) -> None:
    config = v1(
        "raw",
        "rest",
        adapter_properties={"depot": "dataos://raw-lake", "read_only": True, "region": "eu-1"},
    )
    assert integration(config).translation.entry(tmp_path) == {
        "depot": "dataos://raw-lake",
        "read_only": True,
        "aws_region": "eu-1",
    }
    both = v1(
        "raw",
        "rest",
        external_volume="s3://b/p",
        file_format="orc",
        adapter_properties={"depot": "dataos://raw-lake", "uri": "http://x", "secrets": {}},
    )
    text = problems_of(both)
    assert "external_volume cannot be set beside adapter_properties.depot" in text
    assert "file_format cannot be set beside adapter_properties.depot" in text
    assert "Unknown adapter_properties (catalog_type rest, with a depot) key 'secrets'" in text
    assert "key 'uri'" in text


@pytest.mark.parametrize("table_format", [None, "iceberg", "ICEBERG", " Iceberg "])
def test_iceberg_is_the_table_format(table_format: str | None) -> None:
    assert integration(rest_on_s3(table_format=table_format)).table_format == "iceberg"


def test_every_problem_at_once_naming_each_key_and_the_entry() -> None:
    config = v1(
        "lake",
        "rest",
        written="lake_w",
        table_format="delta",
        file_format="csv",
        external_volume="ftp://user:hunter2@host/x",
        adapter_properties={
            "urii": "http://x",
            "read_only": "yes",
            "secrets": {"aws_acess_key": "AKIAFAKEACCESS7Q2W"},
            "project": "p",
        },
    )
    text = problems_of(config)
    assert text.startswith(
        "Invalid catalog integration config: lake. catalogs.yml catalog 'lake' (write "
        "integration 'lake_w') (catalog_type rest):\n- "
    )
    expected = [
        "table_format 'delta' is not supported: this adapter writes Apache Iceberg tables only. "
        "Fix: table_format: iceberg, or leave it out.",
        "Unknown adapter_properties (catalog_type rest) key 'urii'. Did you mean 'uri'?",
        "adapter_properties.read_only must be true or false.",
        "Unknown adapter_properties.secrets key 'aws_acess_key'. Did you mean 'aws_access_key'?",
        "external_volume ftp://... is not a storage this adapter writes to. Accepted: s3://",
        "adapter_properties.uri is missing. Accepted: the catalog's base URL.",
        "file_format 'csv' is not a data file format of Iceberg tables. Accepted: parquet, orc, "
        "avro.",
    ]
    for line in expected:
        assert line in text
    assert "hunter2" not in text
    # One line per problem, each after the entry's heading.
    assert text.count("\n- ") == len(expected)


def test_v2_messages_name_v2_keys() -> None:
    config = V2IntegrationConfig(
        name="lake",
        catalog_type="jdbc",
        catalog_name="lake",
        table_format="hudi",
        adapter_properties={"warehouse": "w"},
    )
    text = problems_of(config)
    assert "catalogs.yml catalog 'lake' (type jdbc):\n- " in text
    assert "table_format 'hudi' is not supported" in text and "Fix: table_format: iceberg." in text
    assert "Unknown config.lakehouse (type jdbc) key 'warehouse'." in text
    assert "config.lakehouse.external_volume is missing" in text
    assert "config.lakehouse.uri is missing. Accepted: a JDBC URL." in text


def test_file_format_and_its_table_property_must_agree() -> None:
    conflicting = rest_on_s3(
        file_format="avro",
        adapter_properties={"properties": {"table-default.write.format.default": "orc"}},
    )
    text = problems_of(conflicting)
    assert "file_format and adapter_properties.properties.table-default." in text
    agreeing = rest_on_s3(
        file_format="orc",
        adapter_properties={"properties": {"table-default.write.format.default": "ORC"}},
    )
    assert integration(agreeing).file_format == "orc"


def test_the_embedded_lakehouse_takes_no_volume_format_or_properties() -> None:
    made = integration(v1("home", "embedded"))
    assert made.translation.entry(Path("/")) is None
    text = problems_of(
        v1(
            "home",
            "embedded",
            external_volume="/tmp/x",
            file_format="orc",
            adapter_properties={"read_only": True},
        )
    )
    assert "external_volume cannot be set for the embedded lakehouse" in text
    assert "file_format cannot be set for the embedded lakehouse" in text
    unknown = "Unknown adapter_properties (catalog_type embedded) key 'read_only'. Accepted: none."
    assert unknown in text


@pytest.mark.parametrize("name", ["spark_catalog", "1st", "has space", "a.b"])
def test_a_name_spark_cannot_take_is_refused(name: str) -> None:
    text = problems_of(rest_on_s3(name=name))
    assert f"name {name!r} cannot be a Spark catalog name." in text
    by_database = problems_of(rest_on_s3(catalog_database=name))
    assert f"catalog_database {name!r} cannot be a Spark catalog name." in by_database


def test_a_repr_shows_no_property_value() -> None:
    made = integration(rest_on_s3())
    shown = repr(made) + repr(made.build_relation(None))
    assert "lake_rest" in shown
    for value in SECRET_VALUES:
        assert value not in shown
