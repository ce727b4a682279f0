"""The `nessie` catalog type for real: Iceberg's NessieCatalog against a Nessie server
(tests/functional/infra/nessie.py) that accepts only its own bearer token, with the tables on
S3 (the moto server). A seed, a table, a view, an incremental merge, a snapshot and tests, over a
first build, a rerun and a full refresh; the commits land on Nessie's `main`; a token the server
did not sign is refused, and neither token appears in any output or log.

Runs on `s3_rest` only: it starts its own catalog server, and once is enough.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtDatabaseError

from functional.infra.depots import inline_depot
from functional.infra.nessie import NessieServer
from functional.lakehouse.shared.clones import (
    clone_rows,
    clone_tables,
    clone_target,
    drop_clone_schema,
)
from functional.lakehouse.shared.tables import expect, rows, table

pytestmark = pytest.mark.only_profile("s3_rest")

SEED_CSV = "id,name,team\n1,alice,red\n2,bob,blue\n3,carol,red\n"
SQL = {
    "people_upper.sql": (
        "{{ config(materialized='table') }}\n"
        "select id, upper(name) as name, team from {{ ref('people') }}"
    ),
    "red_people.sql": (
        "{{ config(materialized='view') }}\nselect id, name from {{ ref('people_upper') }} "
        "where team = 'red'"
    ),
    # The batch changes with the run: `wave` 1 inserts, `wave` 2 updates id 1 and adds id 4.
    "scores.sql": """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge') }}
{% if var('wave', 1) == 1 %}
select * from values (1, 10), (2, 20), (3, 30) as t(id, score)
{% else %}
select * from values (1, 11), (4, 40) as t(id, score)
{% endif %}
""",
    # scores' rows kept from its changes (lakehouse.changes).
    "scores_changes.sql": """
{{ config(materialized='incremental', unique_key='id') }}
select * from {{ lakehouse.changes(ref('scores')) }}
""",
    "schema.yml": """
version: 2
models:
  - name: people_upper
    columns:
      - name: id
        data_tests: [unique, not_null]
""",
}
SNAPSHOT_SQL = """
{% snapshot people_history %}
{{ config(unique_key='id', strategy='check', check_cols=['team'], target_schema=schema) }}
select * from {{ ref('people') }}
{% endsnapshot %}
"""


@pytest.fixture(scope="module")
def nessie_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NessieServer]:
    server = NessieServer(log_dir=Path(tmp_path_factory.mktemp("nessie")))
    server.start()
    yield server
    server.stop()


def _nessie_depot(s3_server: Any, nessie: NessieServer, token: str) -> dict[str, Any]:
    return inline_depot(
        bucket=s3_server.bucket,
        endpoint=s3_server.endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        region=s3_server.region,
        catalog={"type": "nessie", "uri": nessie.uri},
        apikey=token,
        prefix="nessie-warehouse/",
    )


def _target(depot: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "threads": 2,
        "depot": depot,
        "spark": {"master": "local[2]", "driver_memory": "2g"},
    }


@pytest.fixture(scope="module")
def wrong_token(nessie_server: NessieServer) -> str:
    """The server's token with a signature of random bytes: well-formed, not signed by its key."""
    return nessie_server.token.rsplit(".", 1)[0] + "." + secrets.token_urlsafe(256)


class TestNessieCatalog:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, s3_server: Any, nessie_server: NessieServer) -> dict[str, Any]:
        return _target(_nessie_depot(s3_server, nessie_server, nessie_server.token))

    @pytest.fixture(scope="class")
    def profiles_config_update(
        self,
        dbt_profile_target: dict[str, Any],
        unique_schema: str,
        s3_server: Any,
        nessie_server: NessieServer,
        wrong_token: str,
    ) -> dict[str, Any]:
        # A second target on the same server with a token it did not sign (the project
        # fixture itself needs the good one to create and drop the test schema).
        wrong = _target(_nessie_depot(s3_server, nessie_server, wrong_token))
        outputs = {
            "default": {**dbt_profile_target, "schema": unique_schema},
            "wrong_token": {**wrong, "schema": unique_schema},
            "clone": clone_target(dbt_profile_target, unique_schema),
        }
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return SQL

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"people_history.sql": SNAPSHOT_SQL}

    def test_build_rerun_full_refresh(
        self,
        project: Any,
        logs_dir: str,
        nessie_server: NessieServer,
        s3_server: Any,
        wrong_token: str,
    ) -> None:
        people = [(1, "ALICE", "red"), (2, "BOB", "blue"), (3, "CAROL", "red")]
        # A first build, a rerun whose batch updates and inserts, and a full refresh of the
        # same input: each leaves exactly the rows its input says.
        runs: list[tuple[list[str], list[tuple[int, int]]]] = [
            (["build"], [(1, 10), (2, 20), (3, 30)]),
            (["build", "--vars", "wave: 2"], [(1, 11), (2, 20), (3, 30), (4, 40)]),
            (["build", "--full-refresh"], [(1, 10), (2, 20), (3, 30)]),
        ]
        outputs = []
        for args, scores in runs:
            results, output = run_dbt_and_capture(args)
            outputs.append(output)
            assert len(results) == 8  # a seed, four models, a snapshot, two tests
            # Reused (nothing it reads moved, docs/reuse.md) passes too.
            assert all(r.status in ("success", "pass", "reused") for r in results)
            expect(rows(project, "people_upper"), people)
            # A view has no table to refresh: read it as it is.
            red = project.run_sql(f"select * from {table(project, 'red_people')}", fetch="all")
            expect(sorted(tuple(r) for r in red), [(1, "ALICE"), (3, "CAROL")])
            expect(rows(project, "scores"), scores)
            expect(rows(project, "scores_changes"), scores)
            expect(
                rows(project, "people_history", "id, team, dbt_valid_to is null"),
                [(1, "red", True), (2, "blue", True), (3, "red", True)],
            )

        # dbt clone registers the tables in a second namespace, sharing their files.
        messages = clone_tables(project, ["people_upper", "scores"])
        assert messages == {"people_upper": "CLONE zero-copy", "scores": "CLONE zero-copy"}
        expect(clone_rows(project, "scores"), [(1, 10), (2, 20), (3, 30)])
        drop_clone_schema(project)

        # The catalog is Nessie's: its `main` branch holds the tables and the view.
        namespace = project.test_schema
        entries = nessie_server.get_json(
            f"/trees/main/entries?filter=entry.namespace=='{namespace}'"
        )
        kinds = {e["name"]["elements"][-1]: e["type"] for e in entries["entries"]}
        assert kinds["people_upper"] == "ICEBERG_TABLE"
        assert kinds["scores"] == "ICEBERG_TABLE"
        assert kinds["people_history"] == "ICEBERG_TABLE"
        assert kinds["red_people"] == "ICEBERG_VIEW"
        # And its files are on S3, under the depot's prefix.
        listed = s3_server.client().list_objects_v2(
            Bucket=s3_server.bucket, Prefix="nessie-warehouse/"
        )
        assert any(o["Key"].endswith(".parquet") for o in listed.get("Contents", []))

        # The token authorised every call and appears in no log line.
        assert nessie_server.status_without_token() == 401
        # A token Nessie did not sign is refused, and the error says so without the token.
        with pytest.raises(DbtDatabaseError) as refusal:
            run_dbt(["run", "--target", "wrong_token", "--select", "people_upper"])
        refused = str(refusal.value)
        assert "rejected the token (401" in refused
        assert nessie_server.uri in refused
        outputs.append(refused)

        signature = nessie_server.token.split(".")[2]
        for text in [*outputs, Path(logs_dir, "dbt.log").read_text(errors="replace")]:
            assert signature not in text
            assert wrong_token.split(".")[2] not in text
