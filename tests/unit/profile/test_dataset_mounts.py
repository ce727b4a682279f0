"""DataOS dataset addresses in sources: parsed, mounted as the depot they name (the profile's
own catalog, the profile's mount of it, or a new read-only one), and rendered as the table in
that catalog."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from dbt_common.exceptions import CompilationError

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.exceptions import DepotConfigError
from dbt.adapters.lakehouse.profile.dataset_mounts import (
    catalog_for,
    dataset_catalogs,
    dataset_origins,
    mount_dataset_depots,
    project_addresses,
)
from dbt.adapters.lakehouse.profile.depot.dataset_address import (
    DatasetAddress,
    is_dataset_address,
    parse_dataset_address,
)
from dbt.adapters.lakehouse.relation import LakehouseRelation


def test_a_dataset_address_is_depot_collection_and_dataset() -> None:
    assert parse_dataset_address(" dataos://lake-01:retail/orders ") == DatasetAddress(
        "lake-01", "retail", "orders"
    )
    assert str(parse_dataset_address("dataos://lake:retail/orders")) == (
        "dataos://lake:retail/orders"
    )
    assert is_dataset_address("dataos://lake:retail/orders")
    assert not is_dataset_address("dataos://lake")
    assert not is_dataset_address("orders")
    assert not is_dataset_address(None)


@pytest.mark.parametrize(
    "text, line",
    [
        ("dataos://lake:retail", "Invalid dataset address 'dataos://lake:retail'"),
        ("dataos://lake:/orders", "Expected dataos://<depot>:<collection>/<dataset>"),
        ("dataos://lake:retail/orders?purpose=rw", "a source reads its depot with the read"),
        ("dataos://la ke:retail/orders", "Invalid depot address: dataos://la ke"),
    ],
)
def test_a_malformed_address_names_the_form(text: str, line: str) -> None:
    with pytest.raises(DepotConfigError, match=None) as raised:
        parse_dataset_address(text)
    assert line in raised.value.msg


def write_sources(project: Path, *identifiers: str, folder: str = "models") -> None:
    tables = [{"name": f"t{i}", "identifier": x} for i, x in enumerate(identifiers)]
    sources = {"version": 2, "sources": [{"name": "ext", "tables": [*tables, {"name": "plain"}]}]}
    (project / folder).mkdir(parents=True, exist_ok=True)
    (project / folder / "sources.yml").write_text(yaml.safe_dump(sources))


def creds(**extra: Any) -> LakehouseCredentials:
    return LakehouseCredentials(**{"schema": "s", "database": "lh", **extra})


def test_only_source_identifiers_under_the_model_paths_are_read(tmp_path: Path) -> None:
    write_sources(tmp_path, "dataos://a:c/d", "dataos://b:c/e")
    write_sources(tmp_path, "dataos://elsewhere:c/d", folder="analyses")
    (tmp_path / "models" / "broken.yml").write_text("sources: [dataos://x: {")  # dbt's to report
    assert [a.depot for a in project_addresses(tmp_path, ["models"])] == ["a", "b"]


def test_a_malformed_address_fails_naming_its_file(tmp_path: Path) -> None:
    write_sources(tmp_path, "dataos://a:c")
    with pytest.raises(DepotConfigError) as raised:
        project_addresses(tmp_path, ["models"])
    assert str(tmp_path / "models" / "sources.yml") in raised.value.msg


def test_each_named_depot_reads_through_the_catalog_the_profile_has_else_a_read_only_mount(
    tmp_path: Path,
) -> None:
    write_sources(
        tmp_path,
        "dataos://own:c/a",  # the profile's depot: its `database`
        "dataos://mine:c/b",  # mounted by the profile, writable: that mount
        "dataos://other-lake:c/c",  # new: read-only, its name as a catalog name
        "dataos://other-lake:c/d",  # the same depot once
    )
    credentials = creds(depot="dataos://own?purpose=rw", depots={"w": {"depot": "dataos://mine"}})
    mount_dataset_depots(credentials, tmp_path, ["models"])
    assert credentials.depots == {
        "w": {"depot": "dataos://mine"},
        "other_lake": {"depot": "dataos://other-lake", "read_only": True},
    }
    assert dataset_catalogs(credentials) == {"own": "lh", "mine": "w", "other-lake": "other_lake"}
    assert dataset_origins(credentials) == {"other_lake": "Source address dataos://other-lake:c/c"}
    before = dict(credentials.depots)
    mount_dataset_depots(credentials, tmp_path, ["models"])  # dbt may make the adapter twice
    assert credentials.depots == before
    assert catalog_for(credentials, "other-lake") == "other_lake"


def test_a_catalog_name_taken_by_another_depot_is_refused_with_the_fix(tmp_path: Path) -> None:
    write_sources(tmp_path, "dataos://raw:c/a")
    credentials = creds(depots={"raw": "dataos://somethingelse"})
    with pytest.raises(DepotConfigError) as raised:
        mount_dataset_depots(credentials, tmp_path, ["models"])
    assert "that is the profile's `depots: raw` (another depot)" in raised.value.msg
    assert "depots: {raw_src: {depot: dataos://raw, read_only: true}}" in raised.value.msg


def source(identifier: str) -> SimpleNamespace:
    return SimpleNamespace(database="lh", schema="ext", identifier=identifier,
                           resource_type="source", source_name="ext", name="t", quoting_dict={},
                           config={}, catalog_name=None)  # fmt: skip


def test_a_source_with_an_address_renders_as_the_table_in_its_depots_catalog() -> None:
    quoting = SimpleNamespace(quoting={})
    named = LakehouseRelation.create_from(quoting, source("dataos://other-lake:retail/orders"))
    assert named.render() == "`other_lake`.`retail`.`orders`"
    plain = LakehouseRelation.create_from(quoting, source("orders"))
    assert plain.render() == "`lh`.`ext`.`orders`"
    with pytest.raises(CompilationError, match="source ext.t: Invalid dataset address"):
        LakehouseRelation.create_from(quoting, source("dataos://lake:retail"))
