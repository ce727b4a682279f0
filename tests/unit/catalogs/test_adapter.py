"""The adapter's catalogs.yml surface as dbt-core calls it: add_catalog_integration (twice is
fine, a second catalog of one name is not), the v2 bridge, build_catalog_relation, a node's
catalog_name at parse, and catalogs.yml read with dbt-core's own loader."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from dbt.adapters.capability import Capability
from dbt.adapters.catalogs import (
    DbtCatalogIntegrationAlreadyExistsError,
    DbtCatalogIntegrationNotFoundError,
)
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.catalogs import early, project
from dbt.adapters.lakehouse.catalogs.integrations import LakehouseCatalogIntegration
from dbt.adapters.lakehouse.catalogs.register import registered
from unit.catalogs.integration_configs import adapter, rest_on_s3, v1
from unit.profile.depots import APIKEY

# catalogs.yml v2 is dbt-core 1.12's; the unit tests also run with 1.11 (docs/dbt-versions.md).
try:
    from dbt.artifacts.resources import CatalogV2, V2TableFormat
except ImportError:  # dbt-core 1.11
    CatalogV2 = V2TableFormat = None  # type: ignore[assignment,misc]
needs_v2 = pytest.mark.skipif(CatalogV2 is None, reason="catalogs.yml v2 is dbt-core 1.12's")


def node(catalog_name: str | None = None, **config: Any) -> SimpleNamespace:
    """A parsed node as generate_database_name gets it."""
    if catalog_name is not None:
        config["catalog_name"] = catalog_name
    return SimpleNamespace(
        config=config, resource_type="model", name="orders", unique_id="model.p.orders"
    )


def test_the_adapter_declares_catalogs_v2_and_each_catalog_type(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    assert made.capabilities()[Capability.CatalogsV2].support.value == "Full"
    types = {c.catalog_type for c in made.CATALOG_INTEGRATIONS}
    assert types == {"rest", "glue", "nessie", "jdbc", "hadoop", "embedded"}


def test_dbt_adding_an_integration_twice_gets_the_same_one(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    first = made.add_catalog_integration(rest_on_s3())
    depots = made.config.credentials.depots
    assert made.add_catalog_integration(rest_on_s3()) is first
    assert made.config.credentials.depots is depots
    # A second adapter on the same config (dbt registers the adapter again): no clash either.
    again = adapter(tmp_path)
    again.config = made.config
    assert again.add_catalog_integration(rest_on_s3()).name == "lake_rest"
    with pytest.raises(DbtCatalogIntegrationAlreadyExistsError) as info:
        made.add_catalog_integration(rest_on_s3(external_volume="s3://other/x"))
    assert str(info.value.msg) == (
        "catalogs.yml names two catalogs 'lake_rest'. Fix: give each catalog its own name."
    )


def test_build_catalog_relation_names_the_spark_catalog(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    made.add_catalog_integration(rest_on_s3(catalog_database="lake_db", file_format="parquet"))
    relation = made.build_catalog_relation(node("lake_rest"))  # type: ignore[arg-type]
    assert relation is not None
    assert (relation.catalog_name, relation.table_format, relation.file_format) == (
        "lake_rest",
        "iceberg",
        "parquet",
    )
    assert relation.external_volume == "s3://lake-bucket/tables"
    assert relation.catalog_database == "lake_db"  # type: ignore[attr-defined]
    assert made.build_catalog_relation(node()) is None  # type: ignore[arg-type]


def test_a_nodes_catalog_name_is_its_database_at_parse(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    made.add_catalog_integration(rest_on_s3())
    made.add_catalog_integration(v1("home", "embedded"))
    assert made.catalog_database_of(node("lake_rest")) == "lake_rest"
    assert made.catalog_database_of(node("home"), "lakehouse") == "lakehouse"
    assert made.catalog_database_of(node(), "custom") is None
    # dbt's older spelling of the key, as dbt-adapters reads it.
    assert made.catalog_database_of(node(catalog="lake_rest")) == "lake_rest"
    as_dict = {"config": {"catalog_name": "home"}, "resource_type": "seed", "name": "s"}
    assert made.catalog_database_of(as_dict) == "lakehouse"
    with pytest.raises(CompilationError) as contradiction:
        made.catalog_database_of(node("lake_rest"), "other")
    assert str(contradiction.value.msg) == (
        "model 'orders' (model.p.orders) sets catalog_name 'lake_rest' (Spark catalog "
        "'lake_rest') and database 'other', which contradict each other. Fix: keep one of them."
    )


def test_an_unknown_catalog_name_lists_the_known_ones(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    with pytest.raises(DbtCatalogIntegrationNotFoundError) as none_defined:
        made.catalog_database_of(node("lake"))
    assert "(it defines none)" in str(none_defined.value.msg)
    made.add_catalog_integration(rest_on_s3())
    made.add_catalog_integration(v1("home", "embedded"))
    with pytest.raises(DbtCatalogIntegrationNotFoundError) as info:
        made.catalog_database_of(node("lake"))
    assert str(info.value.msg) == (
        "model 'orders' (model.p.orders) sets catalog_name 'lake', which is not a catalog of "
        "the project's catalogs.yml (defined: home, lake_rest). Fix: one of those names, or a "
        "catalog named 'lake' in catalogs.yml."
    )
    # dbt's own lookup (run tracking catches its type) gets the same help, without a node.
    with pytest.raises(DbtCatalogIntegrationNotFoundError) as lookup:
        made.get_catalog_integration("lake")
    assert str(lookup.value.msg).startswith("catalog_name 'lake', which is not a catalog of")


@needs_v2
def test_the_v2_bridge_reads_config_lakehouse(tmp_path: Path) -> None:
    made = adapter(tmp_path)
    catalog = CatalogV2(
        name="lake",
        catalog_type="rest",
        table_format=V2TableFormat.DEFAULT,
        config={
            "lakehouse": {
                "external_volume": "s3://lake-bucket/v2",
                "file_format": "avro",
                "catalog_database": "lake_v2",
                "uri": "http://127.0.0.1:1/rest",
                "region": "eu-west-1",
                "secrets": {"apikey": APIKEY},
            },
            "snowflake": {"external_volume": "not ours"},
        },
    )
    config = made.bridge_v2_catalog(catalog)
    # v2's `default` format is this adapter's, Iceberg; catalog_database is the config's own.
    assert (config.table_format, config.catalog_database) == ("iceberg", "lake_v2")
    assert "catalog_database" not in config.adapter_properties
    integration = made.add_catalog_integration(config)
    assert isinstance(integration, LakehouseCatalogIntegration)
    assert integration.keys.v2 and integration.label == "catalogs.yml catalog 'lake'"
    assert integration.file_format == "avro" and integration.spark_catalog == "lake_v2"
    assert registered(made.config.credentials)["lake"].spark_catalog == "lake_v2"


def write(path: Path, content: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(content))
    return path


V1_FILE = {
    "catalogs": [
        {
            "name": "files",
            "active_write_integration": "files_b",
            "write_integrations": [
                {"name": "files_a", "catalog_type": "hadoop", "external_volume": "a"},
                {"name": "files_b", "catalog_type": "hadoop", "external_volume": "b"},
            ],
        },
        {"name": "home", "write_integrations": [{"name": "h", "catalog_type": "embedded"}]},
    ]
}
V2_FILE = {
    "catalogs": [
        {
            "name": "files",
            "type": "HADOOP",
            "table_format": "iceberg",
            "config": {"lakehouse": {"external_volume": "b"}},
        },
        {"name": "home", "type": "embedded", "table_format": "default", "config": {}},
    ]
}


@pytest.mark.parametrize(
    ("content", "v2"), [(V1_FILE, False), pytest.param(V2_FILE, True, marks=needs_v2)]
)
def test_catalogs_yml_is_read_with_dbt_cores_loader(
    tmp_path: Path, content: dict[str, Any], v2: bool
) -> None:
    made = adapter(tmp_path)
    write(tmp_path / "catalogs.yml", content)
    read = project.project_integrations(made, project.CommandProject(tmp_path, {}, v2))
    assert [(c.name, c.catalog_type.lower(), c.external_volume) for c in read] == [
        ("files", "hadoop", "b"),
        ("home", "embedded", None),
    ]
    for config in read:
        made.add_catalog_integration(config)
    assert made.config.credentials.depots["files"]["depot"]["spec"]["file"]["path"] == str(
        tmp_path / "b"
    )
    assert project.project_integrations(made, project.CommandProject(tmp_path / "none")) == []


def test_the_early_start_mounts_them_on_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = adapter(tmp_path)
    write(tmp_path / "catalogs.yml", V1_FILE)
    monkeypatch.setattr(early, "command_project", lambda *_: project.CommandProject(tmp_path))
    creds = made.config.credentials
    copy = early.with_project_catalogs(creds)
    assert creds.depots is None and not registered(creds)
    assert list(copy.depots) == ["files"] and set(registered(copy)) == {"files", "home"}
    # What dbt then adds to the real credentials is the same, so both sessions are one.
    for config in project.project_integrations(made, project.CommandProject(tmp_path)):
        made.add_catalog_integration(config)
    assert creds.depots == copy.depots and registered(creds) == registered(copy)
    (tmp_path / "catalogs.yml").unlink()
    assert early.with_project_catalogs(creds) is creds


def test_an_adapter_made_outside_a_command_reads_its_own_projects_catalogs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dbt's flags name the last command's project (here: the working folder); an adapter made
    # for another project (dbt's test fixtures make one per project) reads that project's file,
    # with the v2 flag from its own dbt_project.yml, and no --vars of the other command.
    other, own = tmp_path / "last_command", tmp_path / "own"
    other.mkdir()
    own.mkdir()
    monkeypatch.chdir(other)
    found = project.command_project(str(own), {"use_catalogs_v2": True})
    assert found == project.CommandProject(own.resolve(), {}, True)
    assert project.command_project(str(other)).project_dir == other.resolve()
    assert project.command_project().project_dir == other.resolve()
