"""The profile is resolved once per process: every connection of every node, error masking and
`dbt debug` share one resolution until the credentials, environment or depots files change.
Several depots mount as catalogs, each with its own S3 settings, and a read-only one refuses
writes before Spark sees them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from functional.infra.depots import inline_depot

from dbt.adapters.lakehouse.credentials import LakehouseCredentials, SparkOptions
from dbt.adapters.lakehouse.cursor import LakehouseCursor
from dbt.adapters.lakehouse.exceptions import DepotConfigError, ReadOnlyDepotError
from dbt.adapters.lakehouse.profile import resolved as resolved_module
from dbt.adapters.lakehouse.profile.mounts import resolve_mounted_depots
from dbt.adapters.lakehouse.profile.resolved import resolve_profile


def s3_depot(bucket: str, key: str, token: str, endpoint: str = "http://127.0.0.1:9") -> dict:
    return inline_depot(
        bucket=bucket,
        endpoint=endpoint,
        access_key=key,
        secret_key=key + "-secret",
        catalog={"type": "rest", "uri": f"http://127.0.0.1:1/{bucket}"},
        apikey=token,
        prefix="wh",
    )


def profile(tmp_path: Path, **extra: Any) -> LakehouseCredentials:
    fields: dict[str, Any] = {
        "schema": "analytics",
        "depot": s3_depot("bucket-a", "AKIAAAAA", "token-a"),
        "depots_file": str(tmp_path / "none.yml"),
        "spark": SparkOptions(master="local[1]"),
    }
    return LakehouseCredentials(**{**fields, **extra})


def test_fifty_nodes_resolve_the_profile_once(
    tmp_path: Path, jar_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    real = resolved_module.resolve_profile_depot

    def counting(creds: LakehouseCredentials) -> Any:
        calls.append(creds)
        return real(creds)

    monkeypatch.setattr(resolved_module, "resolve_profile_depot", counting)
    creds = profile(tmp_path)
    first = resolve_profile(creds)
    for _ in range(49):  # one connection per node, plus masking and debug: same object
        assert resolve_profile(creds) is first
    assert len(calls) == 1
    # A changed environment is a new resolution (env_var() templates, AWS_* fallbacks).
    monkeypatch.setenv("LAKEHOUSE_TEST_MARKER", "changed")
    assert resolve_profile(creds) is not first
    assert len(calls) == 2


def test_mounted_depots_keep_their_own_bucket_settings_and_tokens(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    creds = profile(
        tmp_path,
        depots={
            "raw": s3_depot("bucket-b", "AKIABBBB", "token-b", endpoint="http://127.0.0.1:8"),
            "archive": {"depot": s3_depot("bucket-c", "AKIACCCC", "token-c"), "read_only": True},
        },
    )
    found = resolve_profile(creds)
    conf = dict(found.spec.conf)
    secret_catalog = dict(found.spec.secret_catalog_conf)
    secret_hadoop = dict(found.spec.secret_hadoop_conf)
    assert conf["spark.sql.defaultCatalog"] == "lakehouse"
    assert conf["spark.sql.catalog.raw.warehouse"] == "s3://bucket-b/wh"
    assert conf["spark.sql.catalog.raw.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:8"
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9"  # the profile's own
    assert secret_hadoop["fs.s3a.access.key"] == "AKIAAAAA"
    assert secret_catalog["spark.sql.catalog.raw.hadoop.fs.s3a.access.key"] == "AKIABBBB"
    assert secret_catalog["spark.sql.catalog.archive.hadoop.fs.s3a.secret.key"] == "AKIACCCC-secret"
    assert set(secret_hadoop) == {"fs.s3a.access.key", "fs.s3a.secret.key"}  # the profile's
    assert secret_catalog["spark.sql.catalog.lakehouse.token"] == "token-a"
    assert secret_catalog["spark.sql.catalog.raw.token"] == "token-b"
    assert found.read_only == {"archive": "'inline' (inline depot)"}
    # Catalog names, depots and uris are fields of the spec, not parsed back out of conf keys.
    assert [(c.name, c.uri, c.has_secrets) for c in found.spec.catalogs] == [
        ("lakehouse", "http://127.0.0.1:1/bucket-a", True),
        ("raw", "http://127.0.0.1:1/bucket-b", True),
        ("archive", "http://127.0.0.1:1/bucket-c", True),
    ]
    assert {"token-b", "AKIACCCC-secret"} <= set(found.secret_values())


def test_a_tables_defaults_come_from_the_depot_it_is_in(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    main = s3_depot("bucket-a", "AKIAAAAA", "token-a")
    main["spec"]["tableFormats"] = ["iceberg", "delta"]
    raw = s3_depot("bucket-b", "AKIABBBB", "token-b")
    raw["spec"]["formatVersion"] = 3
    found = resolve_profile(profile(tmp_path, depot=main, depots={"Raw": raw}))
    assert found.depot_of("Raw").format_version == 3
    assert found.depot_of("Raw").table_formats is None
    assert found.mounted_depot("Raw") is found.depot_of("Raw")
    # The profile's own catalog, or no mount: Spark's catalog names are case-sensitive, so
    # `raw.s.t` and `RAW.s.t` are not in the catalog mounted as `Raw`.
    for catalog in ("lakehouse", None, "spark_catalog", "raw", "RAW"):
        assert found.mounted_depot(catalog) is None
        assert found.depot_of(catalog).format_version is None
        assert found.depot_of(catalog).table_formats == ("iceberg", "delta")


def test_mount_errors_name_the_entry_and_the_nearest_key(tmp_path: Path) -> None:
    with pytest.raises(DepotConfigError) as raised:
        resolve_mounted_depots(
            {
                "raw": "dataos://missing",
                "old": {"depot": s3_depot("b", "AKIAXXXX", "t"), "read_onyl": True},
            },
            str(tmp_path / "depots.yml"),
        )
    text = str(raised.value)
    assert "Profile `depots: raw`: Unknown depot dataos://missing: no resolver knows it." in text
    assert "Unknown `depots: old` key 'read_onyl'. Did you mean 'read_only'?" in text


def test_one_bucket_with_two_key_pairs_is_refused(tmp_path: Path, jar_env: dict[str, str]) -> None:
    creds = profile(tmp_path, depots={"raw": s3_depot("bucket-a", "AKIAOTHER", "t")})
    with pytest.raises(DepotConfigError, match="both use bucket 'bucket-a' with different"):
        resolve_profile(creds)


class _Spark:
    def __init__(self) -> None:
        self.statements: list[str] = []
        self.sparkContext = self

    def setJobGroup(self, *args: Any, **kwargs: Any) -> None:
        pass

    def sql(self, statement: str) -> None:
        self.statements.append(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "create or replace table `archive`.`sales`.`orders` using iceberg as select 1",
        "insert into archive.sales.orders select 1",
        "merge into `ARCHIVE`.s.t as d using x on true when matched then delete",
        "drop view if exists archive.s.v",
        "create schema if not exists archive.sales",
        "call archive.system.rollback_to_snapshot('s.t', 1)",
    ],
)
def test_a_read_only_catalog_refuses_writes_before_spark_runs_them(statement: str) -> None:
    spark = _Spark()
    cursor = LakehouseCursor(
        spark,  # type: ignore[arg-type]
        "group",
        read_only={"archive": "'old-lake' (depots file x)"},
        node="model.p.orders",
    )
    with pytest.raises(ReadOnlyDepotError) as raised:
        cursor.execute(f"select 1;\n{statement}")
    text = str(raised.value)
    assert "Model 'orders' (model.p.orders) tried to write" in text
    assert "depot 'old-lake' (depots file x) is mounted read-only" in text
    assert spark.statements == []  # not even the harmless first statement ran
    cursor.execute("select * from archive.sales.orders")
    cursor.execute("create or replace table lakehouse.sales.orders as select 1")
    cursor.execute("insert into sales.orders select 1")  # the default catalog
    assert len(spark.statements) == 3


def test_resolution_creates_every_writable_local_folder(
    tmp_path: Path, jar_env: dict[str, str]
) -> None:
    file_depot = {
        "type": "lakehouse",
        "spec": {"storageType": "file", "file": {"path": str(tmp_path / "new" / "lake")}},
        "catalog": {"type": "hadoop"},
    }
    creds = LakehouseCredentials(
        schema="analytics",
        warehouse=str(tmp_path / "wh"),
        depots_file=str(tmp_path / "none.yml"),
        depots={"raw": file_depot},
        spark=SparkOptions(master="local[1]"),
    )
    resolve_profile(creds)
    assert (tmp_path / "wh").is_dir() and (tmp_path / "new" / "lake").is_dir()
    read_only = LakehouseCredentials(
        schema="analytics",
        warehouse=str(tmp_path / "wh"),
        depots_file=str(tmp_path / "none.yml"),
        depots={
            "raw": {
                "depot": {
                    **file_depot,
                    "spec": {"storageType": "file", "file": {"path": str(tmp_path / "gone")}},
                },
                "read_only": True,
            }
        },
        spark=SparkOptions(master="local[1]"),
    )
    with pytest.raises(DepotConfigError, match="mounted read_only and its folder"):
        resolve_profile(read_only)
    assert not (tmp_path / "gone").exists()
