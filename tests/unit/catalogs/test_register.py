"""A checked integration is mounted by merging its entry into the credentials' `depots`, so the
resolved profile, its secrets and its engine spec follow the mounted-depot path; the same
entry again changes nothing; a name the profile or another entry holds is refused, naming both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.adapters.catalogs import InvalidCatalogIntegrationConfigError
from dbt_common.exceptions import DbtConfigError
from functional.infra.depots import inline_depot

from dbt.adapters.lakehouse.catalogs.integrations import (
    EmbeddedCatalogIntegration,
    HadoopCatalogIntegration,
    LakehouseCatalogIntegration,
    RestCatalogIntegration,
)
from dbt.adapters.lakehouse.catalogs.register import register, registered
from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from dbt.adapters.lakehouse.profile.secrets import scrub
from unit.catalogs.integration_configs import rest_on_s3, v1
from unit.profile.depots import APIKEY, SECRET_KEY, SECRET_VALUES, write_depots


def credentials(tmp_path: Path, **extra: Any) -> LakehouseCredentials:
    fields: dict[str, Any] = {
        "schema": "s",
        "warehouse": str(tmp_path / "wh"),
        "depots_file": str(tmp_path / "none.yml"),
        "spark": SparkOptions(master="local[1]"),
    }
    return LakehouseCredentials(**{**fields, **extra})


def file_depot(folder: Path) -> dict[str, Any]:
    spec = {"storageType": "file", "file": {"path": str(folder)}}
    return {"type": "lakehouse", "spec": spec, "catalog": {"type": "hadoop"}}


def hadoop(name: str = "files", **fields: Any) -> HadoopCatalogIntegration:
    return HadoopCatalogIntegration(v1(name, "hadoop", external_volume="files", **fields))


def refusal(creds: LakehouseCredentials, made: LakehouseCatalogIntegration, tmp: Path) -> str:
    with pytest.raises(DbtConfigError) as info:
        register(creds, made, tmp)
    return str(info.value.msg)


def test_an_integration_is_mounted_beside_the_profiles_own_depots(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    own = {"raw": {"depot": file_depot(tmp_path / "raw")}}
    creds = credentials(tmp_path, depots=own)
    register(creds, RestCatalogIntegration(rest_on_s3()), tmp_path)
    register(creds, hadoop(), tmp_path)
    # A new mapping: the profile's own entry untouched, the integrations after it.
    assert own == {"raw": own["raw"]} and creds.depots is not own
    assert list(creds.depots or {}) == ["raw", "lake_rest", "files"]
    resolved = resolve_profile(creds)
    mounts = {m.catalog: m for m in resolved.mounted}
    assert mounts["raw"].origin is None
    assert mounts["lake_rest"].origin == (
        "catalogs.yml catalog 'lake_rest' (write integration 'lake_rest_integration')"
    )
    assert mounts["lake_rest"].label == "'lake_rest' (catalogs.yml)"
    assert mounts["files"].depot.storage.warehouse_uri == f"file:{tmp_path / 'files'}"
    # The depot path's secret handling: known to scrub, kept out of SparkConf.
    assert scrub(f"token {APIKEY} and {SECRET_KEY}", resolved.secret_values()) == (
        "token **** and ****"
    )
    conf = dict(resolved.spec.conf)
    assert conf["spark.sql.catalog.lake_rest.uri"] == "http://127.0.0.1:1/rest"
    assert conf["spark.sql.catalog.files.type"] == "hadoop"
    assert not any(value in str(resolved.spec.conf) for value in SECRET_VALUES)
    assert dict(resolved.spec.secret_catalog_conf)["spark.sql.catalog.lake_rest.token"] == APIKEY
    # dbt hashes connection_info for partial parsing; it names catalogs, never a value.
    info = dict(creds.connection_info())
    assert info["catalogs"] == "files: files, lake_rest: lake_rest"
    assert not any(value in str(info) for value in SECRET_VALUES)


def test_the_same_entry_again_changes_nothing(tmp_path: Path) -> None:
    creds = credentials(tmp_path)
    register(creds, hadoop(), tmp_path)
    depots, record = creds.depots, registered(creds)
    # dbt registering the adapter again with the same config: a new integration, same entry.
    register(creds, hadoop(), tmp_path)
    assert creds.depots is depots and registered(creds) == record


def test_a_second_catalog_under_one_name_is_refused(tmp_path: Path) -> None:
    creds = credentials(tmp_path)
    register(creds, hadoop(), tmp_path)
    other = HadoopCatalogIntegration(v1("files", "hadoop", external_volume="elsewhere"))
    assert refusal(creds, other, tmp_path) == (
        "catalogs.yml names two catalogs 'files'. Fix: give each catalog its own name."
    )
    same_catalog = hadoop("other", catalog_database="files")
    assert refusal(creds, same_catalog, tmp_path) == (
        "catalogs.yml catalog 'other' (write integration 'other_integration') and catalogs.yml "
        "catalog 'files' (write integration 'files_integration') are both Spark catalog "
        "'files'. Fix: give one of them another name (or catalog_database)."
    )


def test_a_name_the_profile_holds_is_refused_naming_both(tmp_path: Path) -> None:
    creds = credentials(tmp_path, database="lake", depots={"raw": "dataos://raw"})
    text = refusal(creds, hadoop("lake"), tmp_path)
    assert text == (
        "Invalid catalog integration config: lake. catalogs.yml catalog 'lake' (write "
        "integration 'lake_integration'): its Spark catalog 'lake' is the profile's `database`, "
        "the catalog of the profile's own depot. Fix: another name (or catalog_database) for "
        "the catalogs.yml entry, or another `database` in the profile."
    )
    text = refusal(creds, hadoop("x", catalog_database="raw"), tmp_path)
    assert "its Spark catalog 'raw' is already mounted by the profile's `depots: raw`." in text
    assert creds.depots == {"raw": "dataos://raw"}


def test_the_embedded_lakehouse_is_the_profiles_own_catalog(tmp_path: Path) -> None:
    creds = credentials(tmp_path)
    home = EmbeddedCatalogIntegration(v1("home", "embedded"))
    register(creds, home, tmp_path)
    # Nothing mounted: its tables are the profile's catalog's.
    assert home.spark_catalog == "lakehouse" and not creds.depots
    assert home.build_relation(None).catalog_database == "lakehouse"
    # A second name for the same catalog is no clash; a mount under its name is.
    register(creds, EmbeddedCatalogIntegration(v1("also_home", "embedded")), tmp_path)
    assert "is the profile's `database`" in refusal(creds, hadoop("lakehouse"), tmp_path)
    renamed = EmbeddedCatalogIntegration(v1("h", "embedded", catalog_database="other"))
    assert "catalog_database 'other' is not the profile's `database` ('lakehouse')" in refusal(
        creds, renamed, tmp_path
    )


def test_the_embedded_lakehouse_is_refused_beside_a_depot(tmp_path: Path) -> None:
    creds = credentials(tmp_path, depot="dataos://prod")
    text = refusal(creds, EmbeddedCatalogIntegration(v1("home", "embedded")), tmp_path)
    assert text.endswith(
        "catalog_type embedded names the embedded lakehouse, which can only be the profile's "
        "own depot, and this profile's depot is dataos://prod. Fix: the type of the catalog you "
        "mean (rest, glue, nessie, jdbc, hadoop), or adapter_properties.depot: dataos://<name>."
    )


def test_a_named_depot_resolves_from_the_profiles_depots_file(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()  # a read-only mount's folder must exist
    files = write_depots(
        tmp_path / "depots.yml",
        {"raw-lake": file_depot(tmp_path / "raw")},
    )
    creds = credentials(tmp_path, depots_file=str(files))
    named = {"adapter_properties": {"depot": "dataos://raw-lake", "read_only": True}}
    register(creds, HadoopCatalogIntegration(v1("raw", "hadoop", **named)), tmp_path)
    (mount,) = resolve_profile(creds).mounted
    assert mount.read_only and mount.depot.name == "raw-lake"
    wrong_type = RestCatalogIntegration(v1("raw2", "rest", **named))
    assert refusal(creds, wrong_type, tmp_path).endswith(
        f"its catalog_type is rest, but depot 'raw-lake' (depots file {files}) is a hadoop "
        "catalog. Fix: catalog_type: hadoop for this entry."
    )
    missing = HadoopCatalogIntegration(
        v1("raw3", "hadoop", adapter_properties={"depot": "dataos://nope"})
    )
    assert "catalogs.yml catalog 'raw3' (write integration 'raw3_integration'): " in refusal(
        creds, missing, tmp_path
    )


def test_a_depot_problem_names_the_entry_not_a_profile_key(tmp_path: Path) -> None:
    # Half a key pair: the depot's own rule, reported for the catalogs.yml entry.
    half = rest_on_s3(adapter_properties={"secrets": {"aws_access_key": "AKIAONLYHALF"}})
    creds = credentials(tmp_path)
    with pytest.raises(InvalidCatalogIntegrationConfigError) as info:
        register(creds, RestCatalogIntegration(half), tmp_path)
    text = str(info.value.msg)
    assert "catalogs.yml catalog 'lake_rest' (write integration 'lake_rest_integration'): " in text
    assert "Profile `depots:" not in text and "AKIAONLYHALF" not in text
    assert not creds.depots


def test_two_mounts_on_one_bucket_follow_the_depot_rule(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    depot = inline_depot(
        bucket="lake-bucket",
        endpoint="http://127.0.0.1:9",
        access_key="AKIAOTHERKEY",
        secret_key="other-secret",
        catalog={"type": "rest", "uri": "http://127.0.0.1:1"},
        apikey="t",
    )
    creds = credentials(tmp_path, depot=depot)
    register(creds, RestCatalogIntegration(rest_on_s3()), tmp_path)
    with pytest.raises(DepotConfigError, match="lake-bucket"):
        resolve_profile(creds)
