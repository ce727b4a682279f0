"""Data lands where the user expects: files under s3://<bucket>/<relativePath>/, standard Iceberg.

After `dbt build` (seed, table, merge-incremental partitioned by days(ts)) and one more merge,
boto3 lists each table's data and metadata files under the depot's prefix, and pyiceberg, a
second engine going through the same REST catalog with the same bearer token, reads exactly the
rows Spark wrote. Only on `s3_rest`: the embedded profile has neither S3 nor a REST catalog.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from dbt.tests.util import run_dbt

pytestmark = pytest.mark.only_profile("s3_rest")

SEED_CSV = """id,name,ts,amount
1,alpha,2024-01-01 10:00:00,10
2,beta,2024-01-02 11:00:00,20
3,gamma,2024-01-03 12:00:00,30
"""

EVENTS_TABLE_SQL = """
{{ config(materialized='table') }}
select cast(id as bigint) as id, name, cast(ts as timestamp) as ts, cast(amount as bigint) as amount
from {{ ref('events_seed') }}
"""

# Batch 1 is the seed; batch 2 updates id 2 (moving it within its day) and inserts id 4.
EVENTS_MERGE_SQL = """
{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='id',
    partition_by=['days(ts)'],
) }}
{% if var('batch', 1) == 1 %}
select id, name, ts, amount from {{ ref('events_table') }}
{% else %}
select cast(2 as bigint) as id, 'beta-updated' as name,
       cast('2024-01-02 11:30:00' as timestamp) as ts, cast(25 as bigint) as amount
union all
select cast(4 as bigint), 'delta', cast('2024-01-04 09:00:00' as timestamp), cast(40 as bigint)
{% endif %}
"""

UTC = dt.timezone.utc
EXPECTED_MERGED = [
    (1, "alpha", dt.datetime(2024, 1, 1, 10, 0, tzinfo=UTC), 10),
    (2, "beta-updated", dt.datetime(2024, 1, 2, 11, 30, tzinfo=UTC), 25),
    (3, "gamma", dt.datetime(2024, 1, 3, 12, 0, tzinfo=UTC), 30),
    (4, "delta", dt.datetime(2024, 1, 4, 9, 0, tzinfo=UTC), 40),
]


def pyiceberg_catalog(rest_catalog: Any, s3_server: Any) -> Any:
    from pyiceberg.catalog import load_catalog

    return load_catalog(
        "lakehouse_reader",
        type="rest",
        uri=rest_catalog.uri,
        token=rest_catalog.token,
        **{
            "s3.endpoint": s3_server.endpoint,
            "s3.access-key-id": s3_server.access_key,
            "s3.secret-access-key": s3_server.secret_key,
            "s3.region": s3_server.region,
        },
    )


def list_keys(s3_server: Any, prefix: str) -> list[str]:
    client = s3_server.client()
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(
        Bucket=s3_server.bucket, Prefix=prefix
    ):
        keys.extend(item["Key"] for item in page.get("Contents", []))
    return sorted(keys)


def as_utc(value: dt.datetime) -> dt.datetime:
    # Spark hands back naive datetimes in the session time zone (UTC); Iceberg's timestamptz
    # arrives tz-aware through pyarrow.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class TestDataLandsOnS3AndIsStandardIceberg:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"events_seed.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"events_table.sql": EVENTS_TABLE_SQL, "events_merge.sql": EVENTS_MERGE_SQL}

    def test_files_under_the_prefix_and_pyiceberg_reads_spark_rows(
        self, project: Any, s3_server: Any, rest_catalog: Any
    ) -> None:
        results = run_dbt(["build"])
        built = sorted(r.node.name for r in results)
        assert built == ["events_merge", "events_seed", "events_table"]
        results = run_dbt(["run", "--select", "events_merge", "--vars", "{batch: 2}"])
        assert [r.status for r in results] == ["success"]

        schema = project.test_schema
        # The depot: relativePath `warehouse/`; the catalog puts a table at <ns>/<table>.
        prefix = f"{rest_catalog.warehouse.split('/', 3)[3]}/{schema}/"
        print(f"\nboto3 listing of s3://{s3_server.bucket}/{prefix}events_merge/:")
        merge_keys = list_keys(s3_server, f"{prefix}events_merge/")
        for key in merge_keys:
            print(f"  s3://{s3_server.bucket}/{key}")
        for table in ("events_seed", "events_table", "events_merge"):
            keys = merge_keys if table == "events_merge" else list_keys(s3_server, prefix + table)
            table_prefix = f"{prefix}{table}/"
            data = [
                k for k in keys if k.startswith(table_prefix + "data/") and k.endswith(".parquet")
            ]
            metadata = [
                k
                for k in keys
                if k.startswith(table_prefix + "metadata/") and k.endswith(".metadata.json")
            ]
            assert data, f"no data/*.parquet under s3://{s3_server.bucket}/{table_prefix}: {keys}"
            assert metadata, f"no metadata/*.metadata.json under {table_prefix}: {keys}"
        # days(ts) partitioning shows in the data layout: one folder per day, 4 days.
        day_folders = {k.split("/data/")[1].split("/")[0] for k in merge_keys if "/data/" in k}
        assert day_folders == {f"ts_day=2024-01-0{d}" for d in (1, 2, 3, 4)}, day_folders

        relation = f"`{project.database}`.`{schema}`.`events_merge`"
        spark_rows = [
            (row[0], row[1], as_utc(row[2]), row[3])
            for row in project.run_sql(f"select * from {relation} order by id", fetch="all")
        ]
        assert spark_rows == EXPECTED_MERGED

        catalog = pyiceberg_catalog(rest_catalog, s3_server)
        table = catalog.load_table((schema, "events_merge"))
        arrow = table.scan().to_arrow().sort_by("id")
        iceberg_rows = [
            (r["id"], r["name"], as_utc(r["ts"]), r["amount"]) for r in arrow.to_pylist()
        ]
        print(f"pyiceberg read of {schema}.events_merge through {rest_catalog.uri}:")
        for row in iceberg_rows:
            print(f"  {row}")
        assert iceberg_rows == spark_rows
        assert [f.transform.__class__.__name__ for f in table.spec().fields] == ["DayTransform"]
        assert table.location() == f"{rest_catalog.warehouse}/{schema}/events_merge"
        # Two dbt commits on the merge table: the create and the merge.
        assert len(table.metadata.snapshots) >= 2

        seed_rows = catalog.load_table((schema, "events_seed")).scan().to_arrow().num_rows
        assert seed_rows == 3

    def test_the_catalog_refuses_a_reader_without_the_token(
        self, project: Any, s3_server: Any, rest_catalog: Any
    ) -> None:
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import UnauthorizedError

        with pytest.raises(UnauthorizedError):
            load_catalog(
                "intruder", type="rest", uri=rest_catalog.uri, token="not-the-token"
            ).list_namespaces()
