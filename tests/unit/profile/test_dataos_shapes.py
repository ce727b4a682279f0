"""DataOS's depot shapes and secret spellings read into one Depot, and the resolvers' order
(profile/depot/dataos_shapes.py, secret_dir.py, resolvers.py). Pure: no HTTP (the Depot
Service itself is exercised in tests/functional/lakehouse/profile/test_dataos_resolvers.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot import (
    AbfssStorage,
    S3Storage,
    parse_depot_address,
    resolve_depot,
)
from dbt.adapters.lakehouse.profile.depot.dataos_secrets import decode_secret_payload
from dbt.adapters.lakehouse.profile.depot.dataos_shapes import depot_entry
from dbt.adapters.lakehouse.profile.depot.model import _Context
from unit.profile.depots import resolve_named, secret_dir

ACCESS, SECRET, APIKEY, RUN_AS = "AKIADATAOS1X", "dataosSecret-77aa", "depotKey-9911", "runAs-5511"

V1_S3 = {
    "name": "lh1",
    "type": "S3",
    "external": True,
    "s3": {
        "scheme": "s3a",
        "bucket": "lake-bucket",
        "relativePath": "/warehouse/",
        "format": "ICEBERG",
        "metastoreUrl": "https://fqdn.example/iceberg/api",
        "icebergCatalogType": "REST",
        "region": "us-east-1",
    },
}
MANIFEST_2 = {
    "name": "lh2",
    "version": "v2alpha",
    "type": "lakehouse",
    "spec": {
        "storageType": "s3",
        "catalogType": "REST",
        "metastoreUrl": "https://fqdn.example",
        "metastoreRelativePath": "/lakehouse/api/v1",
        "s3": {"bucket": "lake-bucket", "relativePath": "data", "format": "iceberg"},
    },
    "secrets": [{"id": "tenant:lh2-rw", "purpose": "rw"}],
}
V1_ABFSS = {
    "type": "ABFSS",
    "abfss": {
        "account": "lakeacct",
        "container": "lake",
        "relativePath": "wh",
        "endpointSuffix": "dfs.core.windows.net",
        "metastoreUrl": "https://fqdn.example/iceberg",
        "icebergCatalogType": "rest",
    },
}


def ctx(tmp_path: Path, **env: str) -> _Context:
    return _Context(env=env, cwd=tmp_path, home=tmp_path, aws_region=None, aws_endpoint=None)


def resolve(entry: dict[str, Any]) -> Any:
    return resolve_depot(depot=entry, depots_file=None, warehouse=None, aws_region=None,
                         aws_endpoint=None, env={"AWS_REGION": "us-east-1"})  # fmt: skip


def test_v1_depot_json_becomes_an_s3_rest_depot() -> None:
    secrets = {"aws_access_key": ACCESS, "aws_secret_key": SECRET, "apikey": APIKEY}
    depot = resolve(depot_entry(V1_S3, secrets, "test"))
    assert depot.storage == S3Storage("lake-bucket", "warehouse", "us-east-1")
    assert (depot.catalog.type, depot.catalog.uri) == ("rest", "https://fqdn.example/iceberg/api")
    assert depot.secrets.apikey is not None and depot.secrets.apikey.reveal() == APIKEY


def test_v2_manifest_joins_metastore_url_and_relative_path() -> None:
    secrets = {"aws_access_key": ACCESS, "aws_secret_key": SECRET, "apikey": APIKEY}
    depot = resolve(depot_entry(MANIFEST_2, secrets, "test"))
    assert depot.catalog.uri == "https://fqdn.example/lakehouse/api/v1"
    assert isinstance(depot.storage, S3Storage) and depot.storage.relative_path == "data"


def test_v1_abfss_block_keeps_account_and_container() -> None:
    entry = depot_entry(V1_ABFSS, {"azure_account_key": "a2V5", "apikey": APIKEY}, "test")
    depot = resolve(entry)
    assert depot.storage == AbfssStorage("lakeacct", "lake", "wh")


def test_a_1x_manifest_wrapped_in_depot_is_read() -> None:
    entry = depot_entry({"version": "v1", "depot": V1_S3}, {"apikey": APIKEY}, "test")
    assert entry["spec"]["s3"]["bucket"] == "lake-bucket"


def test_our_own_format_passes_through_with_its_secrets_winning() -> None:
    ours = {"type": "lakehouse", "spec": {"storageType": "s3", "s3": {"bucket": "b"}},
            "catalog": {"type": "hadoop"}, "secrets": {"aws_access_key": "own"}}  # fmt: skip
    entry = depot_entry(ours, {"aws_access_key": "served", "aws_secret_key": SECRET}, "test")
    assert entry["secrets"] == {"aws_access_key": "own", "aws_secret_key": SECRET}


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"type": "POSTGRES", "postgresql": {"host": "h"}}, "type 'POSTGRES'"),
        ({"type": "lakehouse", "spec": {"storageType": "s3", "catalogType": "HIVE"}}, "'HIVE'"),
    ],
)
def test_a_depot_we_cannot_write_is_refused_in_one_line(document: Any, said: str) -> None:
    with pytest.raises(DepotConfigError) as raised:
        depot_entry(document, {}, "Depot 'x'")
    assert said in raised.value.msg and "\n" not in raised.value.msg


def _payload(text: str) -> dict[str, Any]:
    return {"id": "t:s", "data": [{"key": "k", "base64Value": base64.b64encode(text.encode())}]}


@pytest.mark.parametrize(
    "text",
    [
        f"awsaccesskeyid={ACCESS}\nawssecretaccesskey={SECRET}\n",
        f"aws_access_key={ACCESS}\naws_secret_key={SECRET}",
        json.dumps({"awsaccesskeyid": ACCESS, "awssecretaccesskey": SECRET}),
        json.dumps({"aws_access_key": ACCESS, "aws_secret_key": SECRET}),
    ],
)
def test_secret_keys_in_both_spellings_from_lines_or_json(text: str) -> None:
    payload = _payload(text)
    payload["data"][0]["base64Value"] = payload["data"][0]["base64Value"].decode()
    decoded = decode_secret_payload(payload, "test")
    assert decoded == {"aws_access_key": ACCESS, "aws_secret_key": SECRET}


def test_azure_and_gcs_spellings() -> None:
    decoded = decode_secret_payload(
        {"azurestorageaccountname": "acct", "azurestorageaccountkey": "k1", "gcskey_json": "{}"},
        "test",
    )
    assert decoded == {"azure_account_key": "k1", "gcs_key_json": "{}"}


@pytest.mark.parametrize(
    "payload",
    [
        {"id": "s", "data": [{"key": "k", "base64Value": "%%%"}]},
        {"id": "s", "data": [{"key": "k"}]},
        ["not", "a", "mapping"],
        {"id": "s", "data": [{"key": "k", "base64Value": base64.b64encode(b"a\nb").decode()}]},
    ],
)
def test_a_malformed_secret_is_one_line_without_its_value(payload: Any) -> None:
    with pytest.raises(DepotConfigError) as raised:
        decode_secret_payload(payload, "Depot 'x': secret")
    assert "malformed" in raised.value.msg and "\n" not in raised.value.msg
    assert "%%%" not in raised.value.msg


def test_the_address_purpose_is_read() -> None:
    assert parse_depot_address("dataos://lh?purpose=rw") == "lh"
    with pytest.raises(DepotConfigError, match="Accepted: \\?purpose=r or \\?purpose=rw"):
        resolve_depot(depot="dataos://lh?purpose=scan", depots_file=None, warehouse=None,
                      aws_region=None, aws_endpoint=None, env={})  # fmt: skip


def test_secret_dir_file_answers_when_there_is_no_depots_file(tmp_path: Path) -> None:
    connection = {**MANIFEST_2, "secrets": {"awsaccesskeyid": ACCESS,
                  "awssecretaccesskey": SECRET, "apikey": APIKEY}}  # fmt: skip
    folder = secret_dir(tmp_path, "lh2", connection)
    depot = resolve_named(tmp_path, "lh2", DATAOS_SECRET_DIR=str(folder))
    assert depot.source == f"DataOS secret dir {folder / 'lh2_config.yaml'}"
    assert depot.secrets.aws_access_key.reveal() == ACCESS


def test_the_depots_file_wins_over_thesecret_dir(tmp_path: Path) -> None:
    folder = secret_dir(tmp_path, "lh2", {**MANIFEST_2, "secrets": {"apikey": APIKEY}})
    ours = {"type": "lakehouse", "spec": {"storageType": "file", "file": {"path": "lake"}},
            "catalog": {"type": "hadoop"}}  # fmt: skip
    (tmp_path / "depots.yml").write_text(yaml.safe_dump({"depots": {"lh2": ours}}))
    depot = resolve_named(tmp_path, "lh2", DATAOS_SECRET_DIR=str(folder))
    assert depot.source == f"depots file {tmp_path / 'depots.yml'}"


def test_none_answering_lists_every_place_in_order(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "ghost", DATAOS_SECRET_DIR=str(tmp_path / "nowhere"))
    text = raised.value.msg
    assert text.startswith("Unknown depot dataos://ghost: no resolver knows it.")
    assert "\n" not in text
    order = ["1. depots file: none found", "2. DataOS secret dir (DATAOS_SECRET_DIR): ",
             "ghost_config.yaml not found", "3. DataOS Depot Service not asked",
             "Fix: declare dataos://ghost among the workload's depots"]  # fmt: skip
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)


def test_a_secret_dir_file_without_connection_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "secret"
    folder.mkdir()
    (folder / "lh_config.yaml").write_text(f"apikey: {APIKEY}\n")
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "lh", DATAOS_SECRET_DIR=str(folder))
    assert "has no `connection:` mapping" in raised.value.msg
    assert APIKEY not in raised.value.msg


def test_the_exact_metastore_error_still_applies_to_a_dataos_depot(tmp_path: Path) -> None:
    manifest = {"type": "lakehouse", "spec": {"storageType": "s3", "catalogType": "REST",
                "s3": {"bucket": "b"}}, "secrets": {"apikey": APIKEY}}  # fmt: skip
    folder = secret_dir(tmp_path, "lh", manifest)
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "lh", DATAOS_SECRET_DIR=str(folder))
    assert "METASTORE_URL environment variable is required for Lakehouse destination" in str(
        raised.value.msg
    )


def test_service_not_asked_without_its_variables(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.depot_service import service_endpoint

    assert service_endpoint(ctx(tmp_path)) is None
    found = service_endpoint(ctx(tmp_path, DATAOS_FQDN="fqdn.example", DATAOS_RUN_AS_APIKEY="k"))
    assert found is not None and found.base == "https://fqdn.example/ds"
    assert found.apikey_from == "DATAOS_RUN_AS_APIKEY" and "k" not in found.shown
    with pytest.raises(DepotConfigError, match="needs an apikey"):
        service_endpoint(ctx(tmp_path, DEPOT_SERVICE_URL="http://127.0.0.1:9/ds"))


def test_dataos_secrets_reach_the_engine_plan_as_a_depots_files_do(tmp_path: Path) -> None:
    """Warm-engine identity (engine/warm/identity.py) hashes the plan's secret conf: a depot
    from the secret dir gives the same plan as the same depot from a depots file, and other
    keys give another one, so a fetched secret never shares an engine with other credentials."""
    from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan

    def plan_of(where: str, access: str) -> Any:
        manifest = {**MANIFEST_2, "spec": {**MANIFEST_2["spec"], "s3": {"bucket": "b",
                    "region": "us-east-1", "endpoint": "http://127.0.0.1:9000"}}}  # fmt: skip
        secrets = {"awsaccesskeyid": access, "awssecretaccesskey": SECRET, "apikey": APIKEY}
        folder = tmp_path / where
        folder.mkdir()
        if where.startswith("dir"):
            (folder / "lh_config.yaml").write_text(
                yaml.safe_dump({"connection": {**manifest, "secrets": secrets}})
            )
            env = {"DATAOS_SECRET_DIR": str(folder)}
        else:
            entry = depot_entry(manifest, decode_secret_payload(secrets, "t"), "t")
            (folder / "depots.yml").write_text(yaml.safe_dump({"depots": {"lh": entry}}))
            env = {}
        depot = resolve_depot(depot="dataos://lh", depots_file=None, warehouse=None,
                              aws_region=None, aws_endpoint=None, env=env, cwd=folder,
                              home=folder)  # fmt: skip
        return build_spark_conf_plan(depot, "lakehouse")

    from_dir, from_file = plan_of("dir-a", ACCESS), plan_of("file-a", ACCESS)
    other_keys = plan_of("dir-b", "AKIAOTHERKEY")
    assert from_dir.secret_hadoop_conf == from_file.secret_hadoop_conf
    assert from_dir.secret_catalog_conf == from_file.secret_catalog_conf
    assert from_dir.conf == from_file.conf
    assert other_keys.secret_hadoop_conf != from_dir.secret_hadoop_conf
    assert not any(v in str(from_dir.conf) for v in (ACCESS, SECRET, APIKEY))
