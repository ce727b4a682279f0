"""Every catalog type besides REST, for real, on servers the tests start on 127.0.0.1:

- hadoop: metadata and data on S3 (the moto server of `s3_server`), through s3a.
- jdbc: Iceberg's JdbcCatalog on a real PostgreSQL (the OS's server binaries, run as the
  `postgres` user when the tests run as root), its user and password in the depot's secrets;
  table files on S3 (moto).
- glue: Iceberg's GlueCatalog on moto's Glue (the same moto server, which answers every AWS
  service on one endpoint, via the catalog property `glue.endpoint`), table files through
  Iceberg's S3FileIO (AWS SDK v2); and what a missing Glue database and a wrong region say.

One dbt project per catalog (catalog_project.py): a table, an incremental `merge` model built
three times (first run, a rerun with changed input, --full-refresh) with exact rows each time, a
dbt snapshot of it, data tests, and a view (a real Iceberg view in jdbc; hadoop and glue have no
views, and the view's failure must say so). Each build is one `dbt build`, so the file stays
within CI's budget.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from functional.infra.catalogs import PostgresServer, glue_client, postgres_bin_dir
from functional.lakehouse.shared.catalog_project import (
    PROJECT_MODELS,
    CatalogProject,
    catalog_target,
    s3_catalog_depot,
)
from functional.lakehouse.shared.dbt_output import output_text

pytestmark = pytest.mark.only_profile("s3_rest")


class TestHadoopCatalogOnS3(CatalogProject):
    clone_mode = "copy"  # a hadoop catalog cannot register a table on existing metadata

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any) -> dict[str, Any]:
        return catalog_target(s3_catalog_depot(s3_server, {"type": "hadoop"}, "hadoop-wh"))

    def test_build_three_times(self, project: Any, s3_server: Any) -> None:
        spec = resolve_profile(project.adapter.config.credentials).spec
        conf = dict(spec.conf)
        assert conf["spark.sql.catalog.lakehouse.type"] == "hadoop"
        assert conf["spark.sql.catalog.lakehouse.warehouse"] == f"s3://{s3_server.bucket}/hadoop-wh"
        self.check_three_builds(project)
        # The metadata lives beside the data, in the warehouse on S3.
        listed = s3_server.client().list_objects_v2(
            Bucket=s3_server.bucket, Prefix=f"hadoop-wh/{project.test_schema}/merged/metadata/"
        )
        keys = [o["Key"] for o in listed.get("Contents", [])]
        assert any(k.endswith("version-hint.text") for k in keys), keys


# --- jdbc on PostgreSQL ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, postgres, pg_isready, psql) on PATH or in "
            "/usr/lib/postgresql/*/bin: `bash scripts/install-tests.sh` installs Debian's "
            "postgresql"
        )
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()


class TestJdbcCatalogOnPostgres(CatalogProject):
    views = True

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any, postgres: PostgresServer) -> dict[str, Any]:
        depot = s3_catalog_depot(s3_server, {"type": "jdbc", "uri": postgres.jdbc_url}, "jdbc-wh")
        depot["secrets"].update(jdbc_user=postgres.user, jdbc_password=postgres.password)
        return catalog_target(depot)

    def test_build_three_times(self, project: Any, postgres: PostgresServer, logs_dir: str) -> None:
        spec = resolve_profile(project.adapter.config.credentials).spec
        # The password reaches the catalog at runtime only, never SparkConf.
        assert postgres.password not in repr(spec.conf)
        assert dict(spec.secret_catalog_conf)["spark.sql.catalog.lakehouse.jdbc.password"] == (
            postgres.password
        )
        outputs = self.check_three_builds(project)

        # PostgreSQL holds the catalog: each table and the view, under the test's namespace.
        found = postgres.query(
            "select table_name, iceberg_type from iceberg_tables "
            f"where catalog_name = 'lakehouse' and table_namespace = '{project.test_schema}'"
        )
        assert sorted(found) == [
            ("merged", "TABLE"),
            ("merged_changes", "TABLE"),
            ("plain", "TABLE"),
            ("snap_merged", "TABLE"),
            ("upper_view", "VIEW"),
        ]
        # ...pointing at metadata files on S3.
        (location,) = postgres.query(
            "select metadata_location from iceberg_tables "
            f"where table_namespace = '{project.test_schema}' and table_name = 'merged'"
        )[0]
        assert location.startswith("s3://") and "/jdbc-wh/" in location, location

        # The password is in no log: dbt's output, logs/dbt.log, the Spark log.
        dbt_log = Path(logs_dir) / "dbt.log"
        spark_log = Path(os.environ["LAKEHOUSE_SPARK_LOG"])
        texts = [*outputs, dbt_log.read_text(errors="replace")]
        if spark_log.exists():
            texts.append(spark_log.read_text(errors="replace"))
        assert all(postgres.password not in text for text in texts)
        assert postgres.user in postgres.query("select current_user")[0]


# --- glue on moto ------------------------------------------------------------------------------


def _glue_depot(s3: Any, prefix: str, region: str | None = None) -> dict[str, Any]:
    depot = s3_catalog_depot(
        s3,
        {"type": "glue", "properties": {"glue.endpoint": s3.endpoint}},
        prefix,
    )
    if region is not None:
        depot["spec"]["s3"]["region"] = region
    return depot


EU_REGION = "eu-west-1"
EU_BUCKET = "lakehouse-eu"

# Read by the troubleshooting run only (tag `trouble`, excluded from the builds).
TROUBLE_SOURCES_YML = """
version: 2
sources:
  - name: missing_db
    database: lakehouse
    schema: no_such_glue_database
    tables: [{name: orders}]
  - name: other_region
    database: eu
    schema: "{{ target.schema }}"
    tables: [{name: plain}]
"""
READS_MISSING_SQL = (
    "{{ config(materialized='table', tags=['trouble']) }}\n"
    "select * from {{ source('missing_db', 'orders') }}"
)
READS_OTHER_REGION_SQL = (
    "{{ config(materialized='table', tags=['trouble']) }}\n"
    "select * from {{ source('other_region', 'plain') }}"
)


class TestGlueCatalogOnMoto(CatalogProject):
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any) -> dict[str, Any]:
        # A second glue depot in another region (its own bucket: one bucket, one region).
        s3_server.client().create_bucket(Bucket=EU_BUCKET)
        eu = _glue_depot(s3_server, "glue-wh", region=EU_REGION)
        eu["spec"]["s3"]["bucket"] = EU_BUCKET
        return {**catalog_target(_glue_depot(s3_server, "glue-wh")), "depots": {"eu": eu}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            **PROJECT_MODELS,
            "trouble_sources.yml": TROUBLE_SOURCES_YML,
            "reads_missing.sql": READS_MISSING_SQL,
            "reads_other_region.sql": READS_OTHER_REGION_SQL,
        }

    def build(self, project: Any, *args: str) -> str:
        return super().build(project, *args, "--exclude", "tag:trouble")

    def test_build_three_times(self, project: Any, s3_server: Any) -> None:
        spec = resolve_profile(project.adapter.config.credentials).spec
        conf = dict(spec.conf)
        assert conf["spark.sql.catalog.lakehouse.catalog-impl"] == (
            "org.apache.iceberg.aws.glue.GlueCatalog"
        )
        assert conf["spark.sql.catalog.lakehouse.io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
        assert conf["spark.sql.catalog.lakehouse.glue.endpoint"] == s3_server.endpoint
        assert conf["spark.sql.catalog.lakehouse.client.region"] == s3_server.region
        assert s3_server.secret_key not in repr(spec.conf)
        self.check_three_builds(project)
        # Glue (moto's, in the depot's region) holds the tables, pointing at S3.
        tables = glue_client(s3_server).get_tables(DatabaseName=project.test_schema)["TableList"]
        by_name = {t["Name"]: t for t in tables}
        assert sorted(by_name) == ["merged", "merged_changes", "plain", "snap_merged"]
        location = by_name["merged"]["Parameters"]["metadata_location"]
        assert location.startswith(f"s3://{s3_server.bucket}/glue-wh/"), location

    def test_missing_database_and_other_region(self, project: Any, s3_server: Any) -> None:
        """A source in a Glue database that does not exist, and one whose database exists only
        in another region than its depot's: each fails naming the catalog, the database, the
        region and endpoint it looked in, and how to fix it."""
        schema = project.test_schema
        # The scenario: the test's database exists in us-east-1's Glue, not in eu-west-1's.
        assert glue_client(s3_server).get_database(Name=schema)
        eu_databases = glue_client(s3_server, EU_REGION).get_databases()["DatabaseList"]
        assert schema not in {d["Name"] for d in eu_databases}

        results, stdout = run_dbt_and_capture(["run", "--select", "tag:trouble"], expect_pass=False)
        messages = {r.node.name: str(r.message) for r in results}
        assert {r.node.name: str(r.status) for r in results} == {
            "reads_missing": "error",
            "reads_other_region": "error",
        }

        missing = messages["reads_missing"]
        assert (
            "Not found in Iceberg catalog 'lakehouse': Glue database 'no_such_glue_database' "
            "or its table 'orders' does not exist in the glue catalog of depot 'inline', "
            f"region {s3_server.region}, endpoint {s3_server.endpoint}."
        ) in missing, missing
        assert f"Given: region {s3_server.region}. Accepted: a database and table" in missing

        other = messages["reads_other_region"]
        assert (
            f"Not found in Iceberg catalog 'eu': Glue database '{schema}' or its table 'plain' "
            f"does not exist in the glue catalog of depot 'inline', region {EU_REGION}, "
            f"endpoint {s3_server.endpoint}."
        ) in other, other
        assert "Glue keeps databases per AWS account and region" in other
        assert "set the depot's spec.s3.region (or the profile's aws_region)" in other

        for text in (*messages.values(), output_text(stdout)):
            assert s3_server.secret_key not in text and s3_server.access_key not in text
