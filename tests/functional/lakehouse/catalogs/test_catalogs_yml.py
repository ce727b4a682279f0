"""dbt's catalogs.yml: a project names two catalogs, and a seed, models and a snapshot write into
each with `catalog_name`; a model without one joins them in the profile's catalog. A first
build and a rerun (catalogs.yml v1), then a `--full-refresh` (the same catalogs in v2, with
`use_catalogs_v2`), each leave exactly the same rows, read back from each Spark catalog.

`local`: `cat_a` is a hadoop catalog on a folder of the project (ORC data files), `cat_b` the
profile's own embedded lakehouse. `s3_rest`: `cat_a` a jdbc catalog (an H2 file) with its tables
on S3 (moto), `cat_b` an Iceberg REST catalog server of its own on the same S3, both with their
secrets given by `env_var` in catalogs.yml, none of which may reach dbt's output, logs or target
files. (A hadoop catalog on S3 needs its warehouse prefix to exist before its namespaces can be
listed, as for a depot: `local` covers the hadoop type.)
On `local` also: an unknown `catalog_name` fails the parse with one line, `dbt debug` reports
each integration with the preflight a mounted depot gets, and an unreachable catalog fails the
run before any node, naming its catalogs.yml entry.

The project is written here rather than by dbt-tests' `project` fixture, whose own session
(the profile without the catalogs) would be a second engine on s3_rest: the mounted catalogs'
S3 settings are part of an engine's identity. Every command runs in this process.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.adapters.catalogs import DbtCatalogIntegrationNotFoundError
from dbt.adapters.factory import reset_adapters
from dbt.config import catalogs as dbt_catalogs
from dbt.tests.util import run_dbt_and_capture

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from functional.infra.servers import RestCatalog, S3Server
from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.tables import expect

PEOPLE_CSV = "id,name\n1,ann\n2,bob\n3,cy\n"
A_ORDERS = """
{{ config(materialized='table', catalog_name='cat_a') }}
select id, name, id * 10 as amount from {{ ref('people') }}
"""
B_TOTALS = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',
          catalog_name='cat_b') }}
select id, amount + 1 as total from {{ ref('a_orders') }}
"""
JOINED = """
{{ config(materialized='table') }}
select a.name, b.total from {{ ref('a_orders') }} a join {{ ref('b_totals') }} b on a.id = b.id
"""
SNAPSHOT = """
{% snapshot people_snapshot %}
{{ config(unique_key='id', strategy='check', check_cols='all', catalog_name='cat_b') }}
select id, name from {{ ref('people') }}
{% endsnapshot %}
"""
SEED_CONFIG = "seeds:\n  - name: people\n    config: {catalog_name: cat_a}\n"
UNKNOWN = "{{ config(materialized='table', catalog_name='cat_c') }}\nselect 1 as id"

# catalogs.yml v2 is dbt-core 1.12's; with 1.11 the --full-refresh keeps the v1 form.
HAS_V2 = hasattr(dbt_catalogs, "load_catalogs_v2")
# Test-only variable names, rendered by dbt's env_var in catalogs.yml.
REST_TOKEN_ENV = "LAKEHOUSE_TEST_CATALOGS_YML_TOKEN"
S3_KEY_ENV, S3_SECRET_ENV = "LAKEHOUSE_TEST_S3_ACCESS_KEY", "LAKEHOUSE_TEST_S3_SECRET_KEY"


def env_var(name: str) -> str:
    return "{{ env_var('" + name + "') }}"


def v1_file(integrations: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """catalogs.yml v1: each catalog with one write integration of its own name."""
    return {
        "catalogs": [
            {"name": name, "write_integrations": [{"name": f"{name}_w", **fields}]}
            for name, fields in integrations.items()
        ]
    }


def v2_file(integrations: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The same catalogs in v2: type, table_format, and the rest under config.lakehouse."""
    catalogs = []
    for name, fields in integrations.items():
        block = dict(fields.get("adapter_properties", {}))
        block.update({k: fields[k] for k in ("external_volume", "file_format") if k in fields})
        catalogs.append(
            {
                "name": name,
                "type": fields["catalog_type"],
                "table_format": fields.get("table_format", "default"),
                "config": {"lakehouse": block},
            }
        )
    return {"catalogs": catalogs}


def rows(catalog: str, schema: str, table: str, columns: str = "*") -> list[tuple]:
    """A table's rows, read in the session the last dbt command used (it has both catalogs)."""
    spark = ENGINE.active
    assert spark is not None
    name = f"`{catalog}`.`{schema}`.`{table}`"
    spark.sql(f"refresh table {name}")
    return sorted(
        (tuple(r) for r in spark.sql(f"select {columns} from {name}").collect()), key=repr
    )


@pytest.fixture(scope="class")
def second_rest_catalog(
    request: pytest.FixtureRequest, lakehouse_root: Path
) -> Iterator[RestCatalog | None]:
    """`cat_b` on s3_rest: a REST catalog server of its own, on the profile's S3 server."""
    if request.config.getoption("--profile") != "s3_rest":
        yield None
        return
    s3: S3Server = request.getfixturevalue("s3_server")
    request.getfixturevalue("s3_rest_depots_file")  # sets the S3 key variables
    catalog = RestCatalog(
        s3=s3,
        log_dir=lakehouse_root / "servers-catalogs-yml",
        warehouse=f"s3://{s3.bucket}/catalogs_yml_rest",
    ).start()
    os.environ[REST_TOKEN_ENV] = catalog.token
    yield catalog
    os.environ.pop(REST_TOKEN_ENV, None)
    catalog.stop()


@dataclass
class Lake:
    """The test project: its folder, its schema (an Iceberg namespace in every catalog)."""

    root: Path
    schema: str
    database: str = "lakehouse"

    @property
    def catalogs_yml(self) -> Path:
        return self.root / "catalogs.yml"

    def dbt(self, *args: str, expect_pass: bool = True) -> tuple[Any, str]:
        where = ["--project-dir", str(self.root), "--profiles-dir", str(self.root)]
        return run_dbt_and_capture([*args, *where], expect_pass=expect_pass)  # type: ignore[no-any-return]

    def write_catalogs(self, content: dict[str, Any]) -> None:
        self.catalogs_yml.write_text(yaml.safe_dump(content, sort_keys=False))

    def use_v2(self, on: bool) -> None:
        project = {"name": "catalogs_yml", "version": "1.0", "config-version": 2, "profile": "test"}
        if on:
            project["flags"] = {"use_catalogs_v2": True}
        (self.root / "dbt_project.yml").write_text(yaml.safe_dump(project))


class TestTwoCatalogsFromCatalogsYml:
    @pytest.fixture(scope="class")
    def integrations(
        self,
        request: pytest.FixtureRequest,
        second_rest_catalog: RestCatalog | None,
        lakehouse_root: Path,
    ) -> dict[str, dict[str, Any]]:
        if second_rest_catalog is None:
            return {
                "cat_a": {
                    "catalog_type": "hadoop",
                    "table_format": "iceberg",
                    "external_volume": "cat_a_lake",  # relative: the project's folder
                    "file_format": "orc",
                },
                "cat_b": {"catalog_type": "embedded"},
            }
        s3: S3Server = request.getfixturevalue("s3_server")
        keys = {"aws_access_key": env_var(S3_KEY_ENV), "aws_secret_key": env_var(S3_SECRET_ENV)}
        storage = {"region": s3.region, "endpoint": s3.endpoint}
        h2 = lakehouse_root / "catalogs_yml_h2" / "catalog"
        return {
            "cat_a": {
                "catalog_type": "jdbc",
                "external_volume": f"s3://{s3.bucket}/catalogs_yml_jdbc",
                "adapter_properties": {
                    **storage,
                    "uri": f"jdbc:h2:file:{h2};DATABASE_TO_LOWER=TRUE",
                    "secrets": keys,
                },
            },
            "cat_b": {
                "catalog_type": "rest",
                "table_format": "ICEBERG",
                "external_volume": f"s3://{s3.bucket}/catalogs_yml_rest",
                "adapter_properties": {
                    **storage,
                    "uri": second_rest_catalog.uri,
                    "secrets": {**keys, "apikey": env_var(REST_TOKEN_ENV)},
                },
            },
        }

    @pytest.fixture(scope="class")
    def lake(
        self,
        tmp_path_factory: pytest.TempPathFactory,
        dbt_profile_target: dict[str, Any],
        integrations: dict[str, dict[str, Any]],
    ) -> Iterator[Lake]:
        lake = Lake(tmp_path_factory.mktemp("catalogs_yml"), f"cy_{uuid.uuid4().hex[:10]}")
        for folder, files in (
            ("seeds", {"people.csv": PEOPLE_CSV, "people.yml": SEED_CONFIG}),
            ("models", {"a_orders.sql": A_ORDERS, "b_totals.sql": B_TOTALS, "joined.sql": JOINED}),
            ("snapshots", {"people_snapshot.sql": SNAPSHOT}),
        ):
            (lake.root / folder).mkdir()
            for name, text in files.items():
                (lake.root / folder / name).write_text(text)
        target = {**dbt_profile_target, "schema": lake.schema}
        profiles = {"test": {"target": "default", "outputs": {"default": target}}}
        (lake.root / "profiles.yml").write_text(yaml.safe_dump(profiles))
        lake.use_v2(False)
        lake.write_catalogs(v1_file(integrations))
        yield lake
        # dbt keeps the last command's adapter registered, and dbt-tests' `adapter` fixture
        # reuses a registered one: the next test class in this process would get this
        # project's credentials, with its catalogs (the unreachable one among them).
        reset_adapters()

    @pytest.fixture(scope="class")
    def cat_b(self, lake: Lake, second_rest_catalog: RestCatalog | None) -> str:
        """cat_b's Spark catalog: the embedded lakehouse is the profile's own catalog."""
        return lake.database if second_rest_catalog is None else "cat_b"

    @staticmethod
    def check_rows(lake: Lake, cat_b: str) -> None:
        schema = lake.schema
        expect(rows("cat_a", schema, "people"), [(1, "ann"), (2, "bob"), (3, "cy")])
        expect(rows("cat_a", schema, "a_orders"), [(1, "ann", 10), (2, "bob", 20), (3, "cy", 30)])
        expect(rows(cat_b, schema, "b_totals"), [(1, 11), (2, 21), (3, 31)])
        expect(
            rows(cat_b, schema, "people_snapshot", "id, name, dbt_valid_to"),
            [(1, "ann", None), (2, "bob", None), (3, "cy", None)],
        )
        expect(rows(lake.database, schema, "joined"), [("ann", 11), ("bob", 21), ("cy", 31)])

    def test_first_run_rerun_and_v2_full_refresh_agree(
        self, lake: Lake, integrations, cat_b: str, second_rest_catalog, request
    ) -> None:
        outputs = []
        # The rerun (merges into tables already there) on the embedded lakehouse only: on
        # s3_rest what this test adds is where each node goes, which the first build and the
        # full refresh show; merges through REST and JDBC catalogs are test_catalogs.py's.
        builds = 1 if second_rest_catalog is not None else 2
        for args in [["build"]] * builds:
            results, output = lake.dbt(*args)
            outputs.append(output)
            # The seed, three models and the snapshot, each where its catalog_name says.
            databases = sorted(str(r.node.database) for r in results)
            assert databases == sorted(["cat_a", "cat_a", cat_b, cat_b, lake.database])
            self.check_rows(lake, cat_b)
        # The same catalogs in v2, opted into by the project's flag: the same tables again.
        lake.write_catalogs((v2_file if HAS_V2 else v1_file)(integrations))
        lake.use_v2(HAS_V2)
        try:
            _, output = lake.dbt("build", "--full-refresh")
            outputs.append(output)
            self.check_rows(lake, cat_b)
        finally:
            lake.use_v2(False)
            lake.write_catalogs(v1_file(integrations))
        self.check_storage(lake, request, second_rest_catalog)
        self.check_no_secret(lake, request, second_rest_catalog, outputs)

    def check_storage(self, lake: Lake, request, second_rest_catalog) -> None:
        schema = lake.schema
        if second_rest_catalog is None:
            # cat_a's tables in the project's folder, in ORC (its file_format); none in it of
            # cat_b's, which are the embedded lakehouse's.
            folder = lake.root / "cat_a_lake" / schema
            assert sorted(p.name for p in folder.iterdir()) == ["a_orders", "people"]
            assert list((folder / "a_orders" / "data").glob("*.orc"))
            assert not list((folder / "a_orders" / "data").glob("*.parquet"))
            return
        s3: S3Server = request.getfixturevalue("s3_server")
        listed = s3.client().list_objects_v2(Bucket=s3.bucket, Prefix="catalogs_yml")
        keys = [o["Key"] for o in listed["Contents"]]
        assert any(k.startswith(f"catalogs_yml_jdbc/{schema}/a_orders/data/") for k in keys)
        assert any(k.startswith(f"catalogs_yml_rest/{schema}/b_totals/data/") for k in keys)
        # cat_b is its own REST catalog: the profile's catalog has no such table.
        spark = ENGINE.active
        assert spark is not None
        own = {r[1] for r in spark.sql(f"show tables in `{lake.database}`.`{schema}`").collect()}
        assert "joined" in own and "b_totals" not in own
        assert second_rest_catalog.status_counts().get(200, 0) > 0

    def check_no_secret(self, lake: Lake, request, second_rest_catalog, outputs) -> None:
        if second_rest_catalog is None:
            return
        s3: S3Server = request.getfixturevalue("s3_server")
        secrets = [s3.access_key, s3.secret_key, second_rest_catalog.token]
        texts = list(outputs)
        files = [p for d in ("logs", "target") for p in (lake.root / d).rglob("*") if p.is_file()]
        assert any(p.name == "dbt.log" for p in files) and any(p.suffix == ".json" for p in files)
        texts += [p.read_bytes().decode("latin-1") for p in files]
        for secret in secrets:
            assert not any(secret in text for text in texts), "a secret reached dbt's files"

    @pytest.mark.only_profile("local")
    def test_an_unknown_catalog_name_fails_the_parse(self, lake: Lake) -> None:
        unknown = lake.root / "models" / "unknown.sql"
        unknown.write_text(UNKNOWN)
        try:
            with pytest.raises(DbtCatalogIntegrationNotFoundError) as info:
                lake.dbt("parse")
        finally:
            unknown.unlink()
        assert str(info.value.msg) == (
            "model 'unknown' (model.catalogs_yml.unknown) sets catalog_name 'cat_c', which is not "
            "a catalog of the project's catalogs.yml (defined: cat_a, cat_b). Fix: one of those "
            "names, or a catalog named 'cat_c' in catalogs.yml."
        )

    @pytest.mark.only_profile("local")
    def test_debug_checks_each_and_an_unreachable_one_fails_before_any_node(
        self, lake: Lake, integrations
    ) -> None:
        _, output = lake.dbt("debug")
        text = output_text(output)
        for line in (
            "catalogs.yml catalog 'cat_a' (write integration 'cat_a_w'): hadoop catalog, Spark "
            "catalog 'cat_a'",
            "catalogs.yml catalog 'cat_b' (write integration 'cat_b_w'): embedded catalog, Spark "
            "catalog 'lakehouse'",
        ):
            assert line in text
        # A REST catalog nothing answers: `dbt debug`'s preflight, then a run, name the entry.
        dead = {
            "catalog_type": "rest",
            "external_volume": "dead_lake",
            "adapter_properties": {
                "uri": "http://127.0.0.1:9",
                "secrets": {"apikey": "dead-token-77"},
            },
        }
        lake.write_catalogs(v1_file({**integrations, "dead": dead}))
        try:
            _, output = lake.dbt("debug", expect_pass=False)
            assert (
                "Preflight of the depot (catalogs.yml catalog 'dead' (write integration "
                "'dead_w')) found 1 problem(s):\n- The Iceberg REST catalog at "
                "http://127.0.0.1:9 is unreachable: connection refused"
            ) in output_text(output).replace("\n  ", "\n")
            results = lake.root / "target" / "run_results.json"
            results.unlink(missing_ok=True)
            with pytest.raises(Exception) as failed:
                lake.dbt("run")
            # Before any node: dbt wrote no results, as it does once a node has run.
            assert not results.exists()
        finally:
            lake.write_catalogs(v1_file(integrations))
        message = str(failed.value)
        assert (
            "The Iceberg catalog 'dead' of depot 'dead' (catalogs.yml) could not be loaded: The "
            "Iceberg REST catalog at http://127.0.0.1:9 is unreachable"
        ) in message
        assert "uri in the catalogs.yml entry" in message and "dead-token-77" not in message
