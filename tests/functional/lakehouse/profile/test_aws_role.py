"""A depot whose AWS credentials are an IAM role, against moto with IAM enforced.

The depot's keys belong to a user whose only permission is sts:AssumeRole; every S3 request
must be made as the role, so a build that writes its tables proves the clients assumed it.
Iceberg's S3FileIO is the route here: moto verifies signatures with botocore's rules, which
refuse hadoop-aws's SDK v1 requests even with right keys (docs/runtime.md), and the catalog
is a JdbcCatalog on an H2 file (the test REST catalog writes through s3a). Checked: `dbt debug`
assumes the role; a seed and a table are built as the role; a role without the bucket's
policy is refused by S3 with a message naming the role and the bucket, in `dbt debug` and in
a run; a wrong external id fails at `dbt debug`; no key, external id or assumed-role
credential is in dbt's output, its log or the Spark log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lakehouse.engine.launch import spark_log_path
from functional.infra.iam_moto import IamS3Server
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect, rows

pytestmark = pytest.mark.only_profile("s3_rest")

S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
SEED_CSV = "id,name\n1,alpha\n2,beta\n"
TABLE_SQL = """{{ config(materialized='table') }}
select id, upper(name) as name from {{ ref('people') }}"""
PREFIX = "role-wh"
# moto's temporary credentials: ASIA access keys, and session tokens of this prefix.
_ASSUMED = re.compile(r"ASIA[A-Z0-9]{16}|FQoGZXIvYXdzE[A-Za-z0-9+/=]{20,}")


@pytest.fixture(scope="module")
def iam_s3(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = IamS3Server(tmp_path_factory.mktemp("iam-moto")).start()
    yield server
    server.stop()


def _target(server: IamS3Server, h2: Path, role: str, external_id: str) -> dict[str, Any]:
    depot = {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {
                "bucket": server.bucket,
                "relativePath": PREFIX,
                "region": server.region,
                "endpoint": server.endpoint,
            },
        },
        "catalog": {
            "type": "jdbc",
            "uri": f"jdbc:h2:file:{h2}/catalog;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE",
            "properties": {"io-impl": S3_FILE_IO},
        },
        "secrets": {
            "aws_access_key": server.base_access_key,
            "aws_secret_key": server.base_secret_key,
            "aws_role_arn": role,
            "aws_external_id": external_id,
            "aws_role_session_name": "dbt-role-test",
        },
    }
    spark = {"master": "local[2]", "driver_memory": "1g"}
    return {"type": "lakehouse", "threads": 1, "depot": depot, "spark": spark}


class TestDepotAsRole:
    @pytest.fixture(scope="class")
    def profiles_config_update(
        self, iam_s3: IamS3Server, unique_schema: str, tmp_path_factory: pytest.TempPathFactory
    ) -> dict[str, Any]:
        h2 = tmp_path_factory.mktemp("h2")
        writer, denied = iam_s3.writer_role, iam_s3.denied_role
        outputs = {
            "default": _target(iam_s3, h2, writer, iam_s3.external_id),
            # Its own catalog: a new table, so the refusal is the first write's, not a read
            # of existing metadata (which Iceberg retries for minutes).
            "denied": _target(iam_s3, h2 / "denied", denied, iam_s3.external_id),
            "wrong_id": _target(iam_s3, h2, writer, "xid-not-the-one"),
        }
        for target in outputs.values():
            target["schema"] = unique_schema
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"shouted.sql": TABLE_SQL}

    def test_role(self, project: Any, iam_s3: IamS3Server, logs_dir: str) -> None:
        seen: dict[str, str] = {}

        _, out = run_dbt_and_capture(["debug"])
        seen["dbt debug"] = text = output_text(out)
        assert f"Assumed role {iam_s3.writer_role}" in text, text
        assert "PutObject and DeleteObject on s3://" in text, text

        _, out = run_dbt_and_capture(["seed"])
        seen["dbt seed"] = output_text(out)
        _, out = run_dbt_and_capture(["run"])
        seen["dbt run"] = output_text(out)
        expect(rows(project, "shouted"), [(1, "ALPHA"), (2, "BETA")])
        listed = iam_s3.admin_client().list_objects_v2(Bucket=iam_s3.bucket, Prefix=PREFIX)
        keys = [o["Key"] for o in listed.get("Contents", [])]
        assert any(k.endswith(".parquet") for k in keys), keys
        assert any(k.endswith(".metadata.json") for k in keys), keys

        # The role without the bucket's policy: refused by S3, naming the role and the bucket.
        _, out = run_dbt_and_capture(["debug", "--target", "denied"], expect_pass=False)
        seen["dbt debug (denied)"] = text = output_text(out)
        assert "S3 denied s3:ListBucket" in text, text
        assert f"to role {iam_s3.denied_role}" in text, text
        assert f"arn:aws:s3:::{iam_s3.bucket}" in text, text

        results, out = run_dbt_and_capture(["seed", "--target", "denied"], expect_pass=False)
        seen["dbt seed (denied)"] = output_text(out)
        message = "\n".join(str(r.message) for r in results if r.status == "error")
        assert f"S3 refused role {iam_s3.denied_role}" in message, message
        assert f"bucket '{iam_s3.bucket}'" in message, message
        assert "the role lacks the permission" in message, message

        # A wrong external id: STS refuses at `dbt debug`, naming the key to correct.
        _, out = run_dbt_and_capture(["debug", "--target", "wrong_id"], expect_pass=False)
        seen["dbt debug (wrong external id)"] = text = output_text(out)
        refused = f"STS refused to let the depot's aws_access_key assume role {iam_s3.writer_role}"
        assert refused in text, text
        assert "correct aws_external_id" in text, text

        seen["dbt.log"] = (Path(logs_dir) / "dbt.log").read_text(errors="replace")
        log = spark_log_path()
        seen["Spark log"] = log.read_text(errors="replace") if log.exists() else ""
        hidden = {
            "base access key": iam_s3.base_access_key,
            "base secret key": iam_s3.base_secret_key,
            "external id": iam_s3.external_id,
        }
        for where, content in seen.items():
            for what, value in hidden.items():
                assert value not in content, f"the {what} is in {where}"
            found = _ASSUMED.search(content)
            assert found is None, f"an assumed-role credential is in {where}: {found}"
