"""Every catalog type besides REST, for real, on servers the tests start on 127.0.0.1:

- hadoop: metadata and data on S3 (the moto server of `s3_server`), through s3a.
- jdbc: Iceberg's JdbcCatalog on a real PostgreSQL (the OS's server binaries, run as the
  `postgres` user when the tests run as root), its user and password in the depot's secrets;
  table files on S3 (moto).
- glue: Iceberg's GlueCatalog on moto's Glue (the same moto server, which answers every AWS
  service on one endpoint, via the catalog property `glue.endpoint`), table files through
  Iceberg's S3FileIO (AWS SDK v2); and what a missing Glue database and a wrong region say.

One dbt project per catalog: a table, an incremental `merge` model built three times (first
run, a rerun with changed input, --full-refresh) with exact rows each time, a dbt snapshot of
it, data tests, and a view (a real Iceberg view in jdbc; hadoop and glue have no views, and the
view's failure must say so). Each build is one `dbt build`, so the file stays within CI's
budget.
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
from functional.infra.depots import inline_depot
from functional.lakehouse.clones import clone_rows, clone_tables, clone_target, drop_clone_schema
from functional.lakehouse.dbt_output import output_text
from functional.lakehouse.tables import expect, rows, snapshot_count

pytestmark = pytest.mark.only_profile("s3_rest")

TABLE_SQL = """
{{ config(materialized='table') }}
select * from values (1, 'x'), (2, 'y') as t(id, name)
"""

# Batch 1 inserts 1 and 2; batch 2 updates 2 and inserts 3 (1 stays, as a merge leaves it).
MERGED_SQL = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
{% if var('batch', 1) == 1 %}
select * from values (1, 'a'), (2, 'b') as t(id, s)
{% else %}
select * from values (2, 'B'), (3, 'c') as t(id, s)
{% endif %}
"""

# merged's rows kept from its changes (lakehouse.changes): the catalog serves both histories
# and Iceberg's changelog procedure.
MERGED_CHANGES_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('merged')) }}
"""

VIEW_SQL = """
{{ config(materialized='view') }}
select id, upper(s) as s from {{ ref('merged') }}
"""

SNAPSHOT_SQL = """
{% snapshot snap_merged %}
{{ config(unique_key='id', strategy='check', check_cols=['s']) }}
select * from {{ ref('merged') }}
{% endsnapshot %}
"""

SCHEMA_YML = """
version: 2
models:
  - name: merged
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

# The default shuffle partitions, as every other s3_rest test: a profile differing in
# SparkConf gets a warm engine (a JVM) of its own (CI time).
SPARK: dict[str, Any] = {
    "master": "local[2]",
    "driver_memory": "2g",
}

VIEW_REFUSED = "cannot hold views"


def _target(depot: dict[str, Any]) -> dict[str, Any]:
    # Each catalog needs other jars (the PostgreSQL driver, the AWS SDK v2): the engine
    # relaunches the JVM when they change, which these classes exercise one after another.
    return {"type": "lakehouse", "threads": 2, "depot": depot, "spark": SPARK}


def view_rows(project: Any, name: str) -> list[tuple]:
    # A view has no table to refresh; it reads its table as it is now.
    found = project.run_sql(f"select * from {{schema}}.{name}", fetch="all")
    return sorted((tuple(r) for r in found), key=repr)


def _s3_depot(s3: Any, catalog: dict[str, Any], prefix: str, **extra: Any) -> dict[str, Any]:
    return inline_depot(
        bucket=s3.bucket,
        endpoint=s3.endpoint,
        access_key=s3.access_key,
        secret_key=s3.secret_key,
        region=s3.region,
        catalog=catalog,
        prefix=prefix,
        **extra,
    )


PROJECT_MODELS = {
    "plain.sql": TABLE_SQL,
    "merged.sql": MERGED_SQL,
    "merged_changes.sql": MERGED_CHANGES_SQL,
    "upper_view.sql": VIEW_SQL,
    "schema.yml": SCHEMA_YML,
}


class _CatalogProject:
    """The same project on each catalog; subclasses give the depot and what their catalog
    adds (views, the catalog's own records)."""

    views: bool = False
    clone_mode: str = "zero-copy"  # what `dbt clone` makes of a table in this catalog

    @pytest.fixture(scope="class")
    def profiles_config_update(
        self, dbt_profile_target: dict[str, Any], unique_schema: str
    ) -> dict[str, Any]:
        outputs = {
            "default": {**dbt_profile_target, "schema": unique_schema},
            "clone": clone_target(dbt_profile_target, unique_schema),
        }
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return dict(PROJECT_MODELS)

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap_merged.sql": SNAPSHOT_SQL}

    def snapshot_rows(self, project: Any) -> list[tuple]:
        return rows(project, "snap_merged", "id, s, dbt_valid_to is null")

    def build(self, project: Any, *args: str) -> str:
        """One `dbt build`; every node passes except, without views, the view, which fails
        with the adapter's explanation."""
        results, stdout = run_dbt_and_capture(["build", *args], expect_pass=self.views)
        # A reused node (nothing it reads moved, docs/reuse.md: here the view, whose definition
        # the rerun leaves as it was) passes as a built one does.
        statuses = {r.node.name: str(r.status).replace("reused", "success") for r in results}
        expected = {
            "plain": "success",
            "merged": "success",
            "merged_changes": "success",
            "snap_merged": "success",
            "upper_view": "success" if self.views else "error",
            "not_null_merged_id": "pass",
            "unique_merged_id": "pass",
        }
        if "--select" in args:  # merged and what follows from it
            expected.pop("plain")
        assert statuses == expected
        if not self.views:
            (failed,) = [r for r in results if r.node.name == "upper_view"]
            assert VIEW_REFUSED in str(failed.message), failed.message
            assert "materialized='table'" in str(failed.message), failed.message
            assert "Traceback" not in str(failed.message)
        return output_text(stdout)

    def check_three_builds(self, project: Any) -> list[str]:
        outputs = [self.build(project)]
        expect(rows(project, "plain"), [(1, "x"), (2, "y")])
        expect(rows(project, "merged"), [(1, "a"), (2, "b")])
        expect(rows(project, "merged_changes"), [(1, "a"), (2, "b")])
        expect(self.snapshot_rows(project), [(1, "a", True), (2, "b", True)])
        if self.views:
            expect(view_rows(project, "upper_view"), [(1, "A"), (2, "B")])

        outputs.append(self.build(project, "--select", "merged+", "--vars", "{batch: 2}"))
        expect(rows(project, "merged"), [(1, "a"), (2, "B"), (3, "c")])
        expect(rows(project, "merged_changes"), [(1, "a"), (2, "B"), (3, "c")])
        assert snapshot_count(project, "merged") == 2  # the first build's and the merge's
        changed = [(1, "a", True), (2, "b", False), (2, "B", True), (3, "c", True)]
        expect(self.snapshot_rows(project), changed)
        if self.views:
            expect(view_rows(project, "upper_view"), [(1, "A"), (2, "B"), (3, "C")])

        outputs.append(self.build(project, "--full-refresh", "--vars", "{batch: 2}"))
        expect(rows(project, "plain"), [(1, "x"), (2, "y")])
        expect(rows(project, "merged"), [(2, "B"), (3, "c")])
        expect(rows(project, "merged_changes"), [(2, "B"), (3, "c")])
        expect(self.snapshot_rows(project), changed)  # a snapshot ignores --full-refresh
        if self.views:
            expect(view_rows(project, "upper_view"), [(2, "B"), (3, "C")])

        # dbt clone of the tables into a second schema, in this catalog's mode.
        messages = clone_tables(project, ["plain", "merged"])
        assert messages == {n: f"CLONE {self.clone_mode}" for n in ("plain", "merged")}
        expect(clone_rows(project, "merged"), [(2, "B"), (3, "c")])
        expect(clone_rows(project, "plain"), [(1, "x"), (2, "y")])
        drop_clone_schema(project)
        return outputs


# --- hadoop ------------------------------------------------------------------------------------


class TestHadoopCatalogOnS3(_CatalogProject):
    clone_mode = "copy"  # a hadoop catalog cannot register a table on existing metadata

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any) -> dict[str, Any]:
        return _target(_s3_depot(s3_server, {"type": "hadoop"}, "hadoop-wh"))

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


class TestJdbcCatalogOnPostgres(_CatalogProject):
    views = True

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any, postgres: PostgresServer) -> dict[str, Any]:
        depot = _s3_depot(s3_server, {"type": "jdbc", "uri": postgres.jdbc_url}, "jdbc-wh")
        depot["secrets"].update(jdbc_user=postgres.user, jdbc_password=postgres.password)
        return _target(depot)

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
    depot = _s3_depot(
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


class TestGlueCatalogOnMoto(_CatalogProject):
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any) -> dict[str, Any]:
        # A second glue depot in another region (its own bucket: one bucket, one region).
        s3_server.client().create_bucket(Bucket=EU_BUCKET)
        eu = _glue_depot(s3_server, "glue-wh", region=EU_REGION)
        eu["spec"]["s3"]["bucket"] = EU_BUCKET
        return {**_target(_glue_depot(s3_server, "glue-wh")), "depots": {"eu": eu}}

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
