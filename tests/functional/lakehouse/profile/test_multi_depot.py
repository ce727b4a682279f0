"""Several depots in one profile: models written to depot A join a source living only in depot
B. Each depot has its own S3 server, bucket and key pair, and its own REST catalog with its own
token; each server ends up holding its own depot's files only. A third catalog mounts depot B
read-only and refuses a write before Spark runs it.

The S3 servers are S3Proxy with authentication on: each accepts only its own depot's key pair,
so the build passing proves every catalog signs with its own keys, and a direct read with the
other depot's keys is refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from functional.infra.depots import inline_depot
from functional.infra.servers import AuthS3Server, RestCatalog
from functional.lakehouse.shared.tables import expect

pytestmark = pytest.mark.only_profile("s3_rest")

BUCKET_A, BUCKET_B = "depot-a-bucket", "depot-b-bucket"


@dataclass
class Depots:
    servers: dict[str, AuthS3Server]  # bucket -> the S3 server holding it (its own key pair)
    catalogs: dict[str, RestCatalog]  # bucket -> its REST catalog

    def inline(self, bucket: str) -> dict[str, Any]:
        s3 = self.servers[bucket]
        return inline_depot(
            bucket=bucket,
            endpoint=s3.endpoint,
            access_key=s3.access_key,
            secret_key=s3.secret_key,
            region=s3.region,
            catalog={"type": "rest", "uri": self.catalogs[bucket].uri},
            apikey=self.catalogs[bucket].token,
            prefix="wh",
        )

    def keys(self, bucket: str) -> list[str]:
        listed = self.servers[bucket].client().list_objects_v2(Bucket=bucket)
        return [o["Key"] for o in listed.get("Contents", [])]


@pytest.fixture(scope="module")
def depots(lakehouse_root: Path) -> Iterator[Depots]:
    servers: dict[str, AuthS3Server] = {}
    catalogs: dict[str, RestCatalog] = {}
    try:
        for bucket in (BUCKET_A, BUCKET_B):
            log_dir = lakehouse_root / f"servers-{bucket}"
            servers[bucket] = AuthS3Server(log_dir, bucket=bucket).start()
            catalogs[bucket] = RestCatalog(
                s3=servers[bucket], log_dir=log_dir, warehouse=f"s3://{bucket}/wh"
            ).start()
        yield Depots(servers, catalogs)
    finally:
        for catalog in catalogs.values():
            catalog.stop()
        for server in servers.values():
            server.stop()


@contextmanager
def s3a_keys(spark: Any, server: AuthS3Server, keys_of: AuthS3Server) -> Iterator[None]:
    """Session-wide s3a settings for the server's bucket, signed with `keys_of`'s key pair.

    Hadoop's FileSystem cache would hand back the catalog's client for the bucket (with the
    bucket's own keys), so the cache is off while these settings hold.
    """
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    prefix = f"fs.s3a.bucket.{server.bucket}."
    settings = {
        "fs.s3a.impl.disable.cache": "true",
        prefix + "endpoint": server.endpoint,
        prefix + "access.key": keys_of.access_key,
        prefix + "secret.key": keys_of.secret_key,
        prefix + "path.style.access": "true",
        prefix + "connection.ssl.enabled": "false",
        prefix + "attempts.maximum": "1",
        prefix + "retry.limit": "1",
    }
    for key, value in settings.items():
        hadoop.set(key, value)
    try:
        yield
    finally:
        for key in settings:
            hadoop.unset(key)


CUSTOMERS_CSV = "id,name\n1,alice\n2,bob\n3,carol\n"

JOINED_SQL = """
{{ config(materialized='table') }}
select c.name, o.amount
from {{ ref('customers') }} as c
join {{ source('raw_sales', 'orders') }} as o on o.customer_id = c.id
"""

SOURCES_YML = """
version: 2
sources:
  - name: raw_sales
    database: raw
    schema: sales
    loaded_at_field: loaded_at
    freshness:
      warn_after: {count: 100000, period: day}
    tables:
      - name: orders
"""

TO_ARCHIVE_SQL = "{{ config(database='archive', materialized='table') }}\nselect 1 as id"


class TestTwoDepotsTwoKeyPairs:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, depots: Depots) -> dict[str, Any]:
        return {
            "type": "lakehouse",
            "threads": 2,
            "depot": depots.inline(BUCKET_A),
            "depots": {
                "raw": depots.inline(BUCKET_B),
                "archive": {"depot": depots.inline(BUCKET_B), "read_only": True},
            },
            "spark": {"master": "local[2]", "driver_memory": "2g"},
        }

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"customers.csv": CUSTOMERS_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "joined.sql": JOINED_SQL,
            "sources.yml": SOURCES_YML,
            "to_archive.sql": TO_ARCHIVE_SQL,
        }

    def test_join_across_depots_and_each_keeps_its_own_keys(self, project, depots: Depots):
        assert run_dbt(["debug"])  # every depot's preflight and catalog listing pass
        project.run_sql("create namespace if not exists `raw`.`sales`")
        project.run_sql(
            "create or replace table `raw`.`sales`.`orders` using iceberg as "
            "select * from values (1, 10, timestamp'2026-11-01 00:00:00'), "
            "(3, 30, timestamp'2026-11-02 00:00:00'), (4, 40, timestamp'2026-11-03 00:00:00') "
            "as t(customer_id, amount, loaded_at)"
        )
        run_dbt(["seed"])
        for args in ([], [], ["--full-refresh"]):  # first run, rerun, full refresh
            run_dbt(["run", "--select", "joined", *args])
            found = project.run_sql(f"select * from {project.test_schema}.joined", fetch="all")
            expect(sorted(tuple(r) for r in found), [("alice", 10), ("carol", 30)])

        # Each depot's files are on its own server only: the source in B, the model in A.
        a_keys, b_keys = depots.keys(BUCKET_A), depots.keys(BUCKET_B)
        assert any(f"/{project.test_schema}/joined/data/" in k for k in a_keys), a_keys
        assert any("/sales/orders/data/" in k for k in b_keys), b_keys
        assert not any("orders" in k for k in a_keys) and not any("joined" in k for k in b_keys)
        # ...and each key pair belongs to its own depot: the two never mix in the conf.
        a_server, b_server = depots.servers[BUCKET_A], depots.servers[BUCKET_B]
        assert {a_server.access_key, b_server.access_key} <= set(
            resolve_profile(project.adapter.config.credentials).secret_values()
        )

        # The source is part of the docs catalog, and its freshness is read from depot B.
        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        source = catalog["sources"]["source.test.raw_sales.orders"]
        assert source["metadata"]["database"] == "raw"
        assert list(source["columns"]) == ["customer_id", "amount", "loaded_at"]
        freshness = run_dbt(["source", "freshness"])
        assert [r.status for r in freshness] == ["pass"]

    def test_each_depots_keys_are_refused_by_the_other(self, project, depots: Depots):
        """Cross-denial: with the right keys each bucket is readable, with the other's refused."""
        a_server, b_server = depots.servers[BUCKET_A], depots.servers[BUCKET_B]
        for own, other in ((a_server, b_server), (b_server, a_server)):
            assert own.client().list_objects_v2(Bucket=own.bucket)["ResponseMetadata"]
            foreign = own.client(
                aws_access_key_id=other.access_key, aws_secret_access_key=other.secret_key
            )
            with pytest.raises(ClientError) as refused:
                foreign.list_objects_v2(Bucket=own.bucket)
            assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        # The same through Spark: one of A's data files, read with A's keys, then with B's.
        data_file = next(k for k in depots.keys(BUCKET_A) if k.endswith(".parquet"))
        path = f"s3a://{BUCKET_A}/{data_file}"
        spark = ENGINE.active
        assert spark is not None
        with s3a_keys(spark, a_server, keys_of=a_server):
            assert spark.read.parquet(path).count() > 0
        with s3a_keys(spark, a_server, keys_of=b_server):
            with pytest.raises(Exception, match="403|Forbidden|InvalidAccessKeyId"):
                spark.read.parquet(path).count()

    def test_a_read_only_depot_refuses_the_write(self, project, depots: Depots):
        # `archive` and `raw` are one catalog server: through `raw` the namespace exists.
        project.run_sql(f"create namespace if not exists `raw`.`{project.test_schema}`")
        results, _ = run_dbt_and_capture(["run", "--select", "to_archive"], expect_pass=False)
        message = results[0].message
        assert "Model 'to_archive' (model.test.to_archive) tried to write" in message, message
        assert "mounted read-only" in message
        assert "Nothing was written" in message
        assert not any("to_archive" in k for k in depots.keys(BUCKET_B))
        assert not any("to_archive" in k for k in depots.keys(BUCKET_A))
