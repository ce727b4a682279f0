"""Every way to name a depot drives a real `dbt build` on S3 + the REST catalog: `depot: env`
(the DataOS / Nilus variables) and an inline depot with temporary credentials (a session token
from the S3 server's STS). The depots-file form is what most other s3_rest tests use, an inline
depot with keys what test_catalogs, test_multi_depot and test_gcs_depots use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from functional.infra.depots import inline_depot
from functional.lakehouse.shared.tables import expect, rows

pytestmark = pytest.mark.only_profile("s3_rest")

SEED_CSV = "id,name\n1,alice\n2,bob\n"
TABLE_SQL = (
    "{{ config(materialized='table') }}\nselect id, upper(name) as name from {{ ref('people') }}"
)
MERGE_SQL = """
{{ config(materialized='incremental', unique_key='id', latest_by='v') }}
select * from values (1, 1, 'a'), (1, 2, 'b'), (3, 1, 'c') as t(id, v, s)
"""
SCHEMA_YML = """
version: 2
models:
  - name: upper_people
    columns:
      - name: id
        data_tests: [unique, not_null]
"""


class _BuildWithDepot:
    """A seed, a table, a merge model and tests, built once."""

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"upper_people.sql": TABLE_SQL, "merged.sql": MERGE_SQL, "schema.yml": SCHEMA_YML}

    def check_build(self, project: Any) -> None:
        # What a depot form changes is how the session is configured, which every statement
        # of one build goes through; reruns and full refreshes through the same depot and
        # catalog run in test_first_build.py (CI time).
        results = run_dbt(["build"])
        assert len(results) == 5 and all(r.status in ("success", "pass") for r in results)
        expect(rows(project, "upper_people"), [(1, "ALICE"), (2, "BOB")])
        expect(rows(project, "merged"), [(1, 2, "b"), (3, 1, "c")])


def _inline_depot(s3_server: Any, rest_catalog: Any, **keys: str) -> dict[str, Any]:
    return inline_depot(
        bucket=s3_server.bucket,
        endpoint=s3_server.endpoint,
        region=s3_server.region,
        catalog={"type": "rest", "uri": rest_catalog.uri},
        apikey=rest_catalog.token,
        prefix="warehouse/",
        **keys,
    )


def _target(depot: Any) -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "threads": 2,
        "depot": depot,
        "spark": {"master": "local[2]", "driver_memory": "2g"},
    }


class TestEnvDepot(_BuildWithDepot):
    @pytest.fixture(scope="class", autouse=True)
    def nilus_environment(self, s3_server: Any, rest_catalog: Any) -> Iterator[None]:
        variables = {
            "TYPE": "S3",
            "DESTINATION_BUCKET": f"s3://{s3_server.bucket}/warehouse",
            "AWS_ACCESS_KEY_ID": s3_server.access_key,
            "AWS_SECRET_ACCESS_KEY": s3_server.secret_key,
            "AWS_REGION": s3_server.region,
            "AWS_ENDPOINT": s3_server.endpoint,
            "METASTORE_URL": rest_catalog.uri,
            "LAKEHOUSE_APIKEY": rest_catalog.token,
        }
        saved = {name: os.environ.get(name) for name in variables}
        os.environ.update(variables)
        yield
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, nilus_environment: None) -> dict[str, Any]:
        return _target("env")

    def test_build(self, project: Any, rest_catalog: Any) -> None:
        resolved = resolve_profile(project.adapter.config.credentials)
        assert resolved.depot.source == "environment (DataOS variables)"
        assert resolved.depot.catalog.uri == rest_catalog.uri
        self.check_build(project)


class TestSessionTokenCredentials(_BuildWithDepot):
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any, rest_catalog: Any) -> dict[str, Any]:
        sts = boto3.client(
            "sts",
            endpoint_url=s3_server.endpoint,
            region_name=s3_server.region,
            aws_access_key_id=s3_server.access_key,
            aws_secret_access_key=s3_server.secret_key,
        )
        temporary = sts.get_session_token(DurationSeconds=900)["Credentials"]
        depot = _inline_depot(
            s3_server,
            rest_catalog,
            access_key=temporary["AccessKeyId"],
            secret_key=temporary["SecretAccessKey"],
            session_token=temporary["SessionToken"],
        )
        return _target(depot)

    def test_build(self, project: Any) -> None:
        spec = resolve_profile(project.adapter.config.credentials).spec
        conf = dict(spec.conf)
        assert conf["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith(
            "TemporaryAWSCredentialsProvider"
        )
        assert "fs.s3a.session.token" in dict(spec.secret_hadoop_conf)
        self.check_build(project)
