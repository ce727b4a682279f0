"""DataOS depots as DataOS ships them (issue 60): the secret-dir depot whose REST token is the
run-as apikey, the one-line report when no resolver knows a depot, the 1.x manifest as DataOS's
own docs print it (`icebergCatalogType: hadoop` beside `metastoreType: rest`), and every depot
error naming the keys as the document wrote them. Pure: files and the environment only (the
Depot Service over HTTP is tests/functional/lakehouse/profile/test_dataos_resolvers.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.depot.dataos_shapes import depot_entry, spelled_entry
from dbt.adapters.lakehouse.profile.depot.written_keys import as_written
from unit.profile.depots import resolve_named, secret_dir

ACCESS, SECRET, RUN_AS = "AKIASHIPPED1", "shippedSecret-31c", "runAs-shipped-77"
METASTORE = "http://lakehouse-svc.cluster.local:1000"
# A lakehouse depot as DataOS 2.0 writes it into the secret dir: the storage secret only.
LAKEHOUSE = {
    "type": "lakehouse",
    "spec": {"storageType": "s3", "catalogType": "REST", "metastoreUrl": METASTORE,
             "s3": {"bucket": "lake", "relativePath": "wh", "region": "us-east-1"}},
}  # fmt: skip
# The S3 block of DataOS's docs (`docs/resources/depot/iceberg_table_format.md`), verbatim keys.
DOCS_S3 = {"scheme": "s3a", "bucket": "lake", "relativePath": "icebase", "format": "iceberg",
           "icebergCatalogType": "hadoop", "metastoreType": "rest", "metastoreUrl": METASTORE,
           "region": "us-east-1"}  # fmt: skip


STORAGE_SECRET = {"aws_access_key": ACCESS, "aws_secret_key": SECRET}


def test_a_secret_dir_depot_takes_the_run_as_apikey_as_its_rest_token(tmp_path: Path) -> None:
    folder = secret_dir(tmp_path, "lh", {**LAKEHOUSE, "secrets": STORAGE_SECRET})
    depot = resolve_named(
        tmp_path, "lh", DATAOS_SECRET_DIR=str(folder), DATAOS_RUN_AS_APIKEY=RUN_AS
    )
    assert depot.catalog.type == "rest" and depot.catalog.uri == METASTORE
    assert depot.secrets.apikey is not None and depot.secrets.apikey.reveal() == RUN_AS
    assert depot.secrets.aws_access_key.reveal() == ACCESS


def test_the_depots_own_apikey_wins_over_the_run_as_one(tmp_path: Path) -> None:
    secrets = {**STORAGE_SECRET, "apikey": "own-key-1"}
    folder = secret_dir(tmp_path, "lh", {**LAKEHOUSE, "secrets": secrets})
    depot = resolve_named(
        tmp_path, "lh", DATAOS_SECRET_DIR=str(folder), DATAOS_RUN_AS_APIKEY=RUN_AS
    )
    assert depot.secrets.apikey.reveal() == "own-key-1"


def test_no_apikey_anywhere_is_one_line_naming_each_place(tmp_path: Path) -> None:
    folder = secret_dir(tmp_path, "lh", {**LAKEHOUSE, "secrets": STORAGE_SECRET})
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "lh", DATAOS_SECRET_DIR=str(folder))
    text = raised.value.msg
    assert "\n" not in text
    # The seeds' sentence first; then the file, the depot's secret and the run-as variable.
    assert text.startswith("'apikey' is required in Lakehouse depot secret. ")
    for place in (str(folder / "lh_config.yaml"), "no `apikey` in the depot's secret",
                  "no DATAOS_RUN_AS_APIKEY", "Fix: "):  # fmt: skip
        assert place in text
    assert SECRET not in text and ACCESS not in text


def test_no_resolver_knowing_the_depot_is_one_line_with_the_fix_outside_dataos(
    tmp_path: Path,
) -> None:
    (tmp_path / "depots.yml").write_text(yaml.safe_dump({"depots": {"known": {}}}))
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "nosuchdepot")
    text = raised.value.msg
    assert "\n" not in text
    assert text.startswith("Unknown depot dataos://nosuchdepot: no resolver knows it.")
    assert f"1. depots file: {tmp_path / 'depots.yml'} defines only known" in text
    assert "3. DataOS Depot Service not asked" in text
    assert text.endswith("add 'nosuchdepot' under `depots:` there.")


def test_the_1x_manifest_as_dataos_docs_print_it_is_the_rest_catalog() -> None:
    spelled = spelled_entry({"depot": {"type": "S3", "s3": DOCS_S3}}, {}, "Depot 'x'")
    assert spelled.entry["catalog"] == {"type": "rest", "uri": METASTORE}
    assert spelled.spelling["catalog.uri"] == "depot.s3.metastoreUrl"
    assert spelled.spelling["catalog.type"] == "depot.s3.metastoreType"


@pytest.mark.parametrize(
    ("block", "named"),
    [
        # A Hadoop catalog (no server) and a catalog server, with nothing saying which.
        ({"icebergCatalogType": "hadoop", "metastoreUrl": METASTORE},
         ["s3.icebergCatalogType: hadoop", "s3.metastoreUrl", "add `metastoreType: rest`"]),
        ({"metastoreType": "hive", "metastoreUrl": "thrift://hms:9083"},
         ["s3.metastoreType 'hive'", "Accepted: rest"]),
        ({"icebergCatalogType": "HIVE"}, ["s3.icebergCatalogType 'HIVE'", "Hive metastore"]),
    ],
)  # fmt: skip
def test_a_contradictory_or_unusable_catalog_is_refused_naming_its_own_keys(
    block: dict[str, Any], named: list[str]
) -> None:
    with pytest.raises(DepotConfigError) as raised:
        depot_entry({"type": "S3", "s3": {"bucket": "lake", **block}}, {}, "Depot 'x'")
    text = raised.value.msg
    assert "\n" not in text and "catalog.uri" not in text and "catalog.type" not in text
    for part in named:
        assert part in text


def test_a_2_0_manifest_naming_hadoop_beside_a_metastore_is_refused() -> None:
    manifest = {**LAKEHOUSE, "spec": {**LAKEHOUSE["spec"], "catalogType": "hadoop"}}
    with pytest.raises(DepotConfigError, match=r"spec\.catalogType: hadoop and spec\.metastore"):
        depot_entry(manifest, {}, "Depot 'x'")


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ({"type": "S3", "s3": {**DOCS_S3, "metastoreUrl": "lakehouse-svc:1000"}},
         "s3.metastoreUrl must be an http(s) URL"),
        ({"depot": {"type": "S3", "s3": {k: v for k, v in DOCS_S3.items() if k != "bucket"}}},
         "depot.s3.bucket is missing"),
    ],
)  # fmt: skip
def test_later_depot_errors_name_the_keys_as_the_document_wrote_them(
    document: dict[str, Any], key: str, tmp_path: Path
) -> None:
    """Problems found after the shape was read (parsing, precedence) name DataOS's keys, not
    ours (`catalog.uri`, `spec.s3.bucket`)."""
    connection = {**document, "secrets": {**STORAGE_SECRET, "apikey": "k"}}
    folder = secret_dir(tmp_path, "lh1", connection)
    with pytest.raises(DepotConfigError) as raised:
        resolve_named(tmp_path, "lh1", DATAOS_SECRET_DIR=str(folder))
    text = raised.value.msg
    assert key in text
    assert "catalog.uri" not in text and "spec.s3" not in text


def test_as_written_swaps_whole_dotted_names_only() -> None:
    spelling = {"catalog.uri": "s3.metastoreUrl", "spec.s3": "s3", "spec.s3.bucket": "s3.bucket"}
    assert as_written("spec.s3.bucket is missing", spelling) == "s3.bucket is missing"
    assert as_written("needs a `spec.s3` mapping", spelling) == "needs a `s3` mapping"
    assert as_written("no catalog.uri; got x", spelling) == "no s3.metastoreUrl; got x"
    # Not inside a longer name, and prose is left alone.
    assert as_written("catalog.uris and the catalog", spelling) == "catalog.uris and the catalog"
