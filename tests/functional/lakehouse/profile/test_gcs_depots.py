"""GCS depots, for real, on fake-gcs-server (the GCS emulator scripts/install-tests.sh builds from
the Go module proxy), started by these tests on 127.0.0.1 on a free port, with every catalog type
that can live on GCS:

- rest (the test REST catalog server, its warehouse on the emulator): one dbt project with a
  seed, a table, a `merge` incremental model, a snapshot and a time-travel model, built as a
  first run, a rerun with changed input and a --full-refresh, with exact rows each time; the
  objects the emulator holds afterwards; `dbt debug`'s GCS preflight, passing and failing.
- beside it (`depots:`), a GCS depot whose credentials are a service-account key, with a hadoop
  catalog: the preflight and the JVM's connector each exchange the key for a token at its
  `token_uri` (a token server here that verifies the signature), and no part of the key shows
  in dbt's output, its log, the Spark log, SparkConf or `SET`.
- hadoop, nessie, jdbc (H2): three GCS depots mounted (`depots:`) beside an S3 depot (moto):
  a table in each GCS catalog made from the S3 depot's seed, and one joining all three back on
  S3, in one `dbt build` (the cheapest proof per catalog type), plus `dbt debug`'s preflight of
  all four depots.

The second class adds S3's and H2's jars to the first's, so the shared JVM is relaunched once on
entering this file and once for the second class.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lakehouse.engine.launch import spark_log_path
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.profile.depot import resolve_depot
from dbt.adapters.lakehouse.profile.preflight import run_preflight
from dbt.adapters.lakehouse.profile.resolved import resolve_profile
from functional.infra.depots import inline_depot
from functional.infra.gcs import FakeGcsServer, GcsRestCatalog, binary_path
from functional.infra.gcs_tokens import TokenServer, new_service_account_key
from functional.infra.nessie import NessieServer
from functional.infra.processes import ServerError
from functional.lakehouse.profile.gcs_project import (
    MERGED_THEN_SQL,
    ON_KEYED_SQL,
    PEOPLE,
    PEOPLE_CSV,
    PLAIN,
    PLAIN_SQL,
    SNAPSHOT_SQL,
    gcs_depot,
    target,
)
from functional.lakehouse.shared.catalog_project import MERGED_SQL  # the model every catalog merges
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import current_snapshot, expect, rows

pytestmark = pytest.mark.only_profile("s3_rest")


@pytest.fixture(scope="module")
def fake_gcs(lakehouse_root: Path) -> Iterator[FakeGcsServer]:
    # Through `lakehouse_root`: the test process's warm engine lives (and is stopped) there.
    if not binary_path().is_file():
        try:
            from functional.infra.gcs import build

            build()
        except ServerError as exc:
            pytest.skip(f"no GCS emulator: {exc}")
    server = FakeGcsServer(lakehouse_root / "servers" / "fake-gcs").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gcs_rest(fake_gcs: FakeGcsServer) -> Iterator[GcsRestCatalog]:
    catalog = GcsRestCatalog(
        s3=None,
        log_dir=fake_gcs.log_dir,
        warehouse=f"gs://{fake_gcs.bucket}/rest-wh",
        gcs=fake_gcs,
    ).start()
    yield catalog
    catalog.stop()


KEYED_BUCKET = "lakehouse-gcs-keyed"  # its own: Hadoop caches one client per bucket and JVM


@pytest.fixture(scope="module")
def keyed(fake_gcs: FakeGcsServer) -> Iterator[tuple[str, TokenServer]]:
    """A service-account key (a real RSA key, made here) whose `token_uri` is a token server on
    127.0.0.1 that verifies what the key signs, and a bucket of its own."""
    pem, public = new_service_account_key()
    server = TokenServer(public)
    key = {
        "type": "service_account",
        "project_id": fake_gcs.project,
        "private_key_id": secrets.token_hex(20),
        "private_key": pem,
        "client_email": f"dbt-{secrets.token_hex(4)}@lakehouse.iam.gserviceaccount.com",
        "token_uri": server.uri,
    }
    fake_gcs.create_bucket(KEYED_BUCKET)
    yield json.dumps(key), server
    server.stop()


class TestRestCatalogOnGcs:
    """The REST depot, with a second GCS depot mounted beside it (catalog `keyed`, a hadoop
    catalog) whose credentials are a service-account key: one engine for both."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(
        self, fake_gcs: FakeGcsServer, gcs_rest: GcsRestCatalog, keyed: tuple[str, TokenServer]
    ) -> Any:
        depot = gcs_depot(fake_gcs, {"type": "rest", "uri": gcs_rest.uri}, "rest-wh")
        depot["secrets"] = {"apikey": gcs_rest.token}
        with_key = gcs_depot(fake_gcs, {"type": "hadoop"}, "keyed-wh")
        with_key["spec"]["gcs"]["bucket"] = KEYED_BUCKET
        with_key["secrets"] = {"gcs_key_json": keyed[0]}
        return target(depot, depots={"keyed": with_key})

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "plain.sql": PLAIN_SQL,
            "merged.sql": MERGED_SQL,
            "merged_then.sql": MERGED_THEN_SQL,
            "on_keyed.sql": ON_KEYED_SQL,
        }

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return {"snap_merged.sql": SNAPSHOT_SQL}

    def build(self, *args: str) -> str:
        results, stdout = run_dbt_and_capture(["build", *args])
        assert all(str(r.status) in ("success", "pass") for r in results), results
        return output_text(stdout)

    def test_seed_table_merge_snapshot_time_travel(
        self, project: Any, fake_gcs: FakeGcsServer, gcs_rest: GcsRestCatalog
    ) -> None:
        conf = dict(resolve_profile(project.adapter.config.credentials).spec.conf)
        assert conf["spark.sql.catalog.lakehouse.warehouse"] == f"gs://{fake_gcs.bucket}/rest-wh"
        assert conf["spark.hadoop.fs.gs.storage.root.url"] == fake_gcs.endpoint
        snap = "id, s, dbt_valid_to is null"
        # A hadoop catalog cannot list namespaces before its warehouse folder exists (on any
        # storage; docs/errors.md), which dbt does first: the test schema makes it.
        project.run_sql(f"create namespace if not exists `keyed`.`{project.test_schema}`")

        self.build("--exclude", "tag:travel")  # first run (nothing to travel back to yet)
        expect(rows(project, "people"), PEOPLE)
        expect(rows(project, "plain"), PLAIN)
        expect(rows(project, "merged"), [(1, "a"), (2, "b")])
        expect(rows(project, "snap_merged", snap), [(1, "a", True), (2, "b", True)])
        first = f"first_snapshot: {current_snapshot(project, 'merged')}"

        # Rerun: a merge; then time travel to the first run's snapshot of `merged`.
        self.build("--select", "merged+", "--vars", f"{{batch: 2, {first}}}")
        expect(rows(project, "merged"), [(1, "a"), (2, "B"), (3, "c")])
        changed = [(1, "a", True), (2, "b", False), (2, "B", True), (3, "c", True)]
        expect(rows(project, "snap_merged", snap), changed)
        expect(rows(project, "merged_then"), [(1, "a"), (2, "b")])

        self.build("--full-refresh", "--vars", f"{{batch: 2, {first}}}")
        expect(rows(project, "people"), PEOPLE)
        expect(rows(project, "plain"), PLAIN)
        expect(rows(project, "merged"), [(2, "B"), (3, "c")])
        expect(rows(project, "snap_merged", snap), changed)  # a snapshot ignores --full-refresh
        # The full refresh replaced `merged` in a new snapshot: the first one is still there.
        expect(rows(project, "merged_then"), [(1, "a"), (2, "b")])

        # The emulator holds the tables: data and metadata files under the depot's prefix.
        schema = project.test_schema
        for name in ("people", "plain", "merged", "snap_merged", "merged_then"):
            found = fake_gcs.object_names(f"rest-wh/{schema}/{name}/")
            assert any(n.endswith(".parquet") and "/data/" in n for n in found), (name, found)
            assert any(n.endswith(".metadata.json") for n in found), (name, found)
        # merged: the first run's, the merge's and the full refresh's commits, history kept.
        merged_meta = fake_gcs.object_names(f"rest-wh/{schema}/merged/metadata/")
        assert len([n for n in merged_meta if n.endswith(".metadata.json")]) >= 3, merged_meta
        assert gcs_rest.status_counts().get(500, 0) == 0

    def test_debug_preflight_passes_and_a_missing_bucket_fails(
        self, project: Any, fake_gcs: FakeGcsServer, gcs_rest: GcsRestCatalog
    ) -> None:
        _, stdout = run_dbt_and_capture(["debug"])
        text = output_text(stdout)
        assert f"GCS bucket '{fake_gcs.bucket}' at {fake_gcs.endpoint} is reachable" in text, text
        assert "storage.objects.create and storage.objects.delete on gs://" in text
        # No probe object is left behind.
        assert not [n for n in fake_gcs.object_names("rest-wh/") if "preflight" in n]

        missing = gcs_depot(fake_gcs, {"type": "hadoop"}, "wh")
        missing["spec"]["gcs"]["bucket"] = "no-such-bucket"
        depot = resolve_depot(
            depot=missing, depots_file=None, warehouse=None, aws_region=None, aws_endpoint=None
        )
        report = run_preflight(depot)
        assert report.problems == [
            f"GCS bucket 'no-such-bucket' does not exist at {fake_gcs.endpoint} (404). Given: "
            "spec.gcs.bucket: no-such-bucket. Fix: create the bucket, or correct spec.gcs.bucket "
            "in the depot (the bucket name only; the folder goes in relativePath)."
        ]

    def test_the_key_signs_its_clients_and_shows_nowhere(
        self, project: Any, logs_dir: str, fake_gcs: FakeGcsServer, keyed: tuple[str, TokenServer]
    ) -> None:
        """The preflight and the JVM's GCS connector each exchange the mounted depot's key for
        a token, signed with it (the token server verifies); the table is written; no part of
        the key shows in any output, log or conf dump."""
        key_json, tokens = keyed
        key = json.loads(key_json)
        project.run_sql(f"create namespace if not exists `keyed`.`{project.test_schema}`")
        seen: dict[str, str] = {}
        _, stdout = run_dbt_and_capture(["run", "--select", "on_keyed"])
        seen["dbt run"] = output_text(stdout)
        _, stdout = run_dbt_and_capture(["debug"])
        seen["dbt debug"] = output_text(stdout)
        assert (
            "GCS credentials from the depot's service-account key give an access token"
            in (seen["dbt debug"])
        )
        found = project.run_sql(
            f"select * from `keyed`.`{project.test_schema}`.on_keyed", fetch="all"
        )
        expect(sorted(tuple(r) for r in found), PLAIN)
        names = fake_gcs.object_names(f"keyed-wh/{project.test_schema}/on_keyed/", KEYED_BUCKET)
        assert any(n.endswith(".parquet") for n in names), names
        # The preflight's grant and the JVM connector's: each signed with the depot's key.
        assert tokens.refused == 0
        assert len(tokens.issuers) >= 2 and set(tokens.issuers) == {key["client_email"]}

        spark = ENGINE.active
        assert spark is not None
        seen["SparkConf getAll()"] = repr(spark.sparkContext.getConf().getAll())
        seen["SET -v"] = repr(spark.sql("SET -v").collect())
        seen["SET"] = repr(spark.sql("SET").collect())
        seen["logs/dbt.log"] = (Path(logs_dir) / "dbt.log").read_text(errors="replace")
        log = spark_log_path()
        seen["Spark log"] = log.read_text(errors="replace") if log.exists() else ""
        body = [line for line in key["private_key"].splitlines() if "-----" not in line]
        for where, text in seen.items():
            assert key["private_key_id"] not in text, where
            assert not any(line in text for line in body), where
        assert "on_keyed" in seen["logs/dbt.log"]


@pytest.fixture(scope="module")
def nessie_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NessieServer]:
    server = NessieServer(log_dir=Path(tmp_path_factory.mktemp("nessie-gcs")))
    server.start()
    yield server
    server.stop()


# One table per GCS catalog, each made from the S3 depot's seed, and a join of all three back on
# S3: every catalog type on GCS, and data crossing clouds both ways in one run.
GCS_CATALOGS = ("gcs_hadoop", "gcs_nessie", "gcs_jdbc")
ON_GCS_SQL = """
{{{{ config(materialized='table', database='{catalog}') }}}}
select id, upper(name) as name from {{{{ ref('people') }}}}
"""
ACROSS_SQL = """
{{ config(materialized='table') }}
select h.id, h.name, n.name as nessie_name, j.name as jdbc_name
from {{ ref('on_gcs_hadoop') }} h
join {{ ref('on_gcs_nessie') }} n on h.id = n.id
join {{ ref('on_gcs_jdbc') }} j on h.id = j.id
"""


class TestEveryCatalogOnGcsBesideS3:
    """The profile's own depot is on S3 (moto, hadoop catalog); `depots:` mounts three GCS
    depots on the emulator's bucket, with a hadoop, a nessie and a jdbc (H2) catalog. Each
    keeps its own storage settings (catalog-scoped connector settings beside the session's
    s3a ones)."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(
        self,
        fake_gcs: FakeGcsServer,
        s3_server: Any,
        nessie_server: NessieServer,
        tmp_path_factory: pytest.TempPathFactory,
    ) -> Any:
        h2 = Path(tmp_path_factory.mktemp("gcs-jdbc")) / "catalog"
        nessie = gcs_depot(fake_gcs, {"type": "nessie", "uri": nessie_server.uri}, "nessie-wh")
        nessie["secrets"] = {"apikey": nessie_server.token}
        mounted = {
            "gcs_hadoop": gcs_depot(fake_gcs, {"type": "hadoop"}, "hadoop-wh"),
            "gcs_nessie": nessie,
            "gcs_jdbc": gcs_depot(
                fake_gcs, {"type": "jdbc", "uri": f"jdbc:h2:file:{h2}"}, "jdbc-wh"
            ),
        }
        main = inline_depot(
            bucket=s3_server.bucket,
            endpoint=s3_server.endpoint,
            access_key=s3_server.access_key,
            secret_key=s3_server.secret_key,
            region=s3_server.region,
            catalog={"type": "hadoop"},
            prefix="gcs-neighbour",
        )
        return target(main, depots=mounted)

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": PEOPLE_CSV}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        on_gcs = {
            f"on_{catalog}.sql": ON_GCS_SQL.format(catalog=catalog) for catalog in GCS_CATALOGS
        }
        return {**on_gcs, "across.sql": ACROSS_SQL}

    def test_every_catalog_type_on_gcs_and_a_join_across_clouds(
        self, project: Any, fake_gcs: FakeGcsServer, s3_server: Any
    ) -> None:
        conf = dict(resolve_profile(project.adapter.config.credentials).spec.conf)
        for catalog in GCS_CATALOGS:
            prefix = f"spark.sql.catalog.{catalog}.hadoop.fs.gs."
            assert conf[f"{prefix}storage.root.url"] == fake_gcs.endpoint
        # A hadoop catalog cannot list namespaces before its warehouse folder exists (on any
        # storage; docs/errors.md), which dbt does first: the test schema makes it.
        project.run_sql(f"create namespace if not exists `gcs_hadoop`.`{project.test_schema}`")
        results = run_dbt(["build"])
        assert len(results) == 5
        # Every depot's preflight, S3's and each GCS one's, then each catalog's namespaces
        # (after the build: a hadoop catalog cannot list a warehouse folder not yet written).
        assert run_dbt(["debug"])
        schema = project.test_schema
        for catalog in GCS_CATALOGS:
            found = project.run_sql(
                f"select * from `{catalog}`.`{schema}`.`on_{catalog}`", fetch="all"
            )
            expect(sorted(tuple(r) for r in found), PLAIN)
        expect(
            rows(project, "across"),
            [(1, "ALICE", "ALICE", "ALICE"), (2, "BOB", "BOB", "BOB")],
        )
        # Each table is on its cloud: the three under their GCS prefixes, the rest on S3.
        for catalog, prefix in zip(
            GCS_CATALOGS, ("hadoop-wh", "nessie-wh", "jdbc-wh"), strict=True
        ):
            names = fake_gcs.object_names(f"{prefix}/{schema}/")
            table = [n for n in names if f"/on_{catalog}" in n]
            assert any(n.endswith(".parquet") for n in table), (catalog, names)
            assert any(n.endswith(".metadata.json") for n in table), (catalog, names)
            if catalog == "gcs_hadoop":  # its commit record, renamed into place by the connector
                assert any(n.endswith("metadata/version-hint.text") for n in table), names
        elsewhere = (f"/{schema}/across/", f"/{schema}/people/")
        assert not [n for n in fake_gcs.object_names() if any(e in n for e in elsewhere)]
        for name in ("people", "across"):
            listed = s3_server.client().list_objects_v2(
                Bucket=s3_server.bucket, Prefix=f"gcs-neighbour/{schema}/{name}/"
            )
            assert listed.get("KeyCount", 0) > 0, name
