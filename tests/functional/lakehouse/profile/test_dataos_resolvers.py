"""`dataos://<depot>` resolved the way DataOS resolves it, with no depots file: the whole sample
project built from a depot the local Depot Service serves (DataOS 1.x JSON, secrets as base64
`k=v` lines in DataOS's spelling, the run-as apikey as the REST token) and, separately, one
seed and the view over it built from a DataOS 2.0 secret-dir file (`metastoreUrl` +
`metastoreRelativePath`, our secret spelling), each read back row for row, on the s3_rest
servers (every `dbt` process attaches to the one warm engine these tests share); `dbt debug`
names the resolver; a profile mixing a depots-file depot and a service-resolved one; and one
bad input per fault, which fails before Spark starts.

Each command is its own `dbt` process with its own environment, as on a DataOS workload; the
DataOS variables never reach the test process. Every output and file the commands leave is
searched for the apikeys and secrets."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from functional.infra.depot_service import LocalDepotService
from functional.infra.processes import free_port
from functional.infra.servers import RestCatalog, S3Server

S3_REST_DEPOT = "test-s3-rest"  # tests/conftest.py: the s3_rest profile's depot

pytestmark = pytest.mark.only_profile("s3_rest")

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "jaffle_lakehouse"
SERVED = "dataos-lake"
ELSEWHERE = "other-lake"
RUN_AS_WRONG = "runAsWrong-f00d42"
# Names a DataOS workload has that must not leak into the child's resolution from the host.
_DATAOS_VARS = (
    "DEPOT_SERVICE_URL",
    "DATAOS_FQDN",
    "DATAOS_RUN_AS_APIKEY",
    "DATAOS_SECRET_DIR",
    "DATAOS_TENANT_ID",
    "LAKEHOUSE_DEPOTS_FILE",
    "METASTORE_URL",
    "LAKEHOUSE_APIKEY",
)


@dataclass
class World:
    service: LocalDepotService
    secret_dir: Path
    s3: S3Server
    rest: RestCatalog
    root: Path

    @property
    def secrets(self) -> list[str]:
        return [self.rest.token, self.s3.secret_key, self.s3.access_key, RUN_AS_WRONG]


@pytest.fixture(scope="module")
def world(s3_server: S3Server, rest_catalog: RestCatalog, lakehouse_root: Path) -> Iterator[World]:
    # The S3 block as DataOS's own docs print it: `icebergCatalogType: hadoop` beside
    # `metastoreType: rest`, which is the REST catalog at `metastoreUrl`.
    storage = {"scheme": "s3a", "bucket": s3_server.bucket, "relativePath": "/warehouse/",
               "format": "ICEBERG", "icebergCatalogType": "hadoop", "metastoreType": "rest",
               "metastoreUrl": rest_catalog.uri, "region": s3_server.region,
               "endpoint": s3_server.endpoint}  # fmt: skip
    depots = {
        SERVED: {"type": "S3", "external": True, "s3": storage},
        "pg-depot": {"type": "POSTGRES", "postgresql": {"host": "db", "database": "x"}},
    }
    # DataOS's spelling, without an apikey: the REST token is then the run-as apikey.
    served_secret = {"awsaccesskeyid": s3_server.access_key,
                     "awssecretaccesskey": s3_server.secret_key}  # fmt: skip
    service = LocalDepotService(
        rest_catalog.token, depots, {SERVED: served_secret, "pg-depot": {"password": "pw"}}
    ).start()
    secret_dir = lakehouse_root / "dataos-secret"
    secret_dir.mkdir(exist_ok=True)
    # The REST uri as a 2.0 manifest spells it: metastoreUrl + metastoreRelativePath.
    parts = urlsplit(rest_catalog.uri)
    base, relative = f"{parts.scheme}://{parts.netloc}", parts.path.strip("/")
    manifest = {
        "type": "lakehouse",
        "spec": {"storageType": "s3", "catalogType": "REST", "metastoreUrl": base,
                 **({"metastoreRelativePath": relative} if relative else {}),
                 "s3": {"bucket": s3_server.bucket, "relativePath": "warehouse",
                        "region": s3_server.region, "endpoint": s3_server.endpoint}},
        # The storage secret only, as DataOS 2.0 writes it: the REST token is the run-as apikey.
        "secrets": {"aws_access_key": s3_server.access_key,
                    "aws_secret_key": s3_server.secret_key},
    }  # fmt: skip
    (secret_dir / f"{SERVED}_config.yaml").write_text(yaml.safe_dump({"connection": manifest}))
    # Another depot on the same catalog: what a source's dataset address names.
    (secret_dir / f"{ELSEWHERE}_config.yaml").write_text(yaml.safe_dump({"connection": manifest}))
    yield World(service, secret_dir, s3_server, rest_catalog, lakehouse_root)
    service.stop()


def sample(folder: Path, schema: str, depot: str = f"dataos://{SERVED}", **extra: Any) -> Path:
    """The README's sample project with a profile naming only a dataos:// address."""
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("target", "logs", "*_warehouse"))
    output = {"type": "lakehouse", "schema": schema, "threads": 2, "depot": depot,
              "spark": {"master": "local[2]", "driver_memory": "2g"}, **extra}  # fmt: skip
    profile = {"jaffle_lakehouse": {"target": "dev", "outputs": {"dev": output}}}
    (folder / "profiles.yml").write_text(yaml.safe_dump(profile))
    return folder


READ_BACK = "dataos_rows_read_back"


def add_read_back_test(project: Path) -> None:
    """A singular test in `project` that fails unless stg_customers holds exactly the rows of
    seeds/raw_customers.csv (`id` as customer_id, the names): both EXCEPT ALLs empty. It reads
    back through the depot what the seed wrote, so a build passes only if both worked."""
    with (project / "seeds" / "raw_customers.csv").open(newline="") as lines:
        rows = list(csv.DictReader(lines))
    assert rows, "raw_customers.csv has no rows"

    def quoted(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    values = ", ".join(
        f"({int(r['id'])}, {quoted(r['first_name'])}, {quoted(r['last_name'])})" for r in rows
    )
    built = "select customer_id, first_name, last_name from {{ ref('stg_customers') }}"
    expected = f"select * from values {values} as t(customer_id, first_name, last_name)"
    (project / "tests" / f"{READ_BACK}.sql").write_text(
        f"({built} except all {expected})\nunion all\n({expected} except all {built})\n"
    )


VIA_ADDRESS = "customers_via_address"


def add_dataset_address_source(project: Path, schema: str) -> None:
    """A source named the DataOS way, `dataos://other-lake:<schema>/raw_customers` (the seed,
    through another depot's read-only catalog), a model over it, and a test that it holds the
    seed's rows exactly."""
    source = {
        "name": "elsewhere",
        "tables": [
            {"name": "customers", "identifier": f"dataos://{ELSEWHERE}:{schema}/raw_customers"}
        ],
    }
    (project / "models" / "dataset_sources.yml").write_text(
        yaml.safe_dump({"version": 2, "sources": [source]})
    )
    # depends_on: the seed is written by this build, before the model reads it elsewhere.
    (project / "models" / f"{VIA_ADDRESS}.sql").write_text(
        "-- depends_on: {{ ref('raw_customers') }}\n"
        "select id, first_name, last_name from {{ source('elsewhere', 'customers') }}\n"
    )
    built, seed = "{{ ref('" + VIA_ADDRESS + "') }}", "{{ ref('raw_customers') }}"
    (project / "tests" / "via_address_rows.sql").write_text(
        f"(select * from {built} except all select id, first_name, last_name from {seed})\n"
        f"union all\n(select id, first_name, last_name from {seed} except all "
        f"select * from {built})\n"
    )


def dbt(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    child = {k: v for k, v in os.environ.items() if k not in _DATAOS_VARS}
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *args, "--profiles-dir", str(project)],
        cwd=str(project),
        env={**child, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def assert_no_secret(world: World, *texts: str, folder: Path | None = None) -> None:
    """No apikey or secret in the outputs, nor in any file the command left in `folder` (the
    profile the test wrote aside: a profile's `apikey` is the user's own text)."""
    bodies = list(texts)
    if folder is not None:
        left = [p for p in folder.rglob("*") if p.is_file() and p.name != "profiles.yml"]
        bodies += [p.read_text(errors="replace") for p in left]
    for value in world.secrets:
        assert not any(value in body for body in bodies), "a secret was written out"


def service_env(world: World, apikey: str | None = None) -> dict[str, str]:
    return {"DEPOT_SERVICE_URL": world.service.url,
            "DATAOS_RUN_AS_APIKEY": apikey or world.rest.token}  # fmt: skip


class TestSampleBuiltFromEachResolver:
    def test_from_the_depot_service(self, world: World, tmp_path: Path) -> None:
        project = sample(tmp_path / "svc", "dataos_svc")
        add_read_back_test(project)
        before = world.service.calls.copy()
        built = dbt(project, service_env(world), "build")
        assert built.returncode == 0, built.stdout[-3000:]
        assert re.search(rf"PASS {READ_BACK}\b", built.stdout), built.stdout[-3000:]
        # One command asks once: the depot and its secret, then memory.
        asked = world.service.calls - before
        assert asked == {f"/ds/api/v2/depots/{SERVED}": 1, f"/ds/api/v2/depots/{SERVED}/secrets": 1}
        debug = dbt(project, service_env(world), "debug")
        assert debug.returncode == 0, debug.stdout[-3000:]
        assert f"resolved by DataOS Depot Service at {world.service.url}" in debug.stdout
        assert "secrets: apikey, aws_access_key, aws_secret_key (values not shown)" in debug.stdout
        assert_no_secret(world, built.stdout, built.stderr, debug.stdout, folder=project)

    def test_from_the_secret_dir(self, world: World, tmp_path: Path) -> None:
        """A smaller build than the service's (CI time; the same engine and plan): one seed and
        the view over it, written through the secret-dir depot and read back, row for row; and
        the seed read again through a source's dataset address in another depot, mounted
        read-only from the secret dir too."""
        project = sample(tmp_path / "dir", "dataos_dir", depot=f"dataos://{SERVED}?purpose=rw")
        add_read_back_test(project)
        add_dataset_address_source(project, "dataos_dir")
        env = {"DATAOS_SECRET_DIR": str(world.secret_dir),
               "DATAOS_RUN_AS_APIKEY": world.rest.token}  # fmt: skip
        before = sum(world.service.calls.values())
        built = dbt(project, env, "build", "-s", "raw_customers", "stg_customers", VIA_ADDRESS)
        assert built.returncode == 0, built.stdout[-3000:]
        assert re.search(rf"PASS {READ_BACK}\b", built.stdout), built.stdout[-3000:]
        assert re.search(r"PASS via_address_rows\b", built.stdout), built.stdout[-3000:]
        manifest = json.loads((project / "target" / "manifest.json").read_text())
        source = manifest["sources"]["source.jaffle_lakehouse.elsewhere.customers"]
        assert source["relation_name"] == "`other_lake`.`dataos_dir`.`raw_customers`"
        debug = dbt(project, env, "debug")
        assert debug.returncode == 0, debug.stdout[-3000:]
        config = world.secret_dir / f"{SERVED}_config.yaml"
        assert f"resolved by DataOS secret dir {config}" in debug.stdout
        assert sum(world.service.calls.values()) == before  # no HTTP with a secret-dir file
        assert_no_secret(world, built.stdout, built.stderr, debug.stdout, folder=project)


def test_a_depots_file_depot_beside_a_served_one(
    world: World, s3_rest_depots_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One profile, two resolvers: its depot from the depots file, `served` mounted read-only
    from the Depot Service, which is asked for the read purpose (acl=r). Resolution only, as
    each command does it before Spark (the build above reads through the same plan); reading
    across mounted depots is test_multi_depot.py's."""
    from dbt.adapters.lakehouse.profile.depot import resolve_depot
    from dbt.adapters.lakehouse.profile.mounts import resolve_mounted_depots

    for name, value in service_env(world).items():
        monkeypatch.setenv(name, value)
    before = world.service.calls.copy()
    main = resolve_depot(depot=f"dataos://{S3_REST_DEPOT}", depots_file=str(s3_rest_depots_file),
                         warehouse=None, aws_region=None, aws_endpoint=None)  # fmt: skip
    (mount,) = resolve_mounted_depots(
        {"served": {"depot": f"dataos://{SERVED}", "read_only": True}}, str(s3_rest_depots_file)
    )
    assert main.source == f"depots file {s3_rest_depots_file}"
    assert mount.depot.source.startswith(f"DataOS Depot Service at {world.service.url}")
    assert mount.read_only
    # Only the served depot asked the service, with the read purpose of a read-only mount.
    asked = world.service.calls - before
    assert set(asked) <= {f"/ds/api/v2/depots/{SERVED}", f"/ds/api/v2/depots/{SERVED}/secrets"}
    assert world.service.last_query[f"/ds/api/v2/depots/{SERVED}/secrets"] == "acl=r"
    assert mount.depot.secrets.apikey is not None
    assert mount.depot.secrets.apikey.reveal() == world.rest.token  # the run-as apikey


@pytest.fixture
def fault(world: World) -> Iterator[LocalDepotService]:
    yield world.service
    world.service.fault = None


# (fault set on the service, depot, environment beyond the service's, profile keys, the line)
FAULTS = {
    "unreachable": (None, SERVED, {"DEPOT_SERVICE_URL": "http://127.0.0.1:{closed}/ds"}, {},
                    "is unreachable"),
    "slow": ("slow", SERVED, {"LAKEHOUSE_DEPOT_SERVICE_TIMEOUT": "1"}, {},
             "did not answer within 1s"),
    "401": (None, SERVED, {"DATAOS_RUN_AS_APIKEY": RUN_AS_WRONG}, {},
            "refused the apikey from DATAOS_RUN_AS_APIKEY (HTTP 401"),
    "403": ("403", SERVED, {"DATAOS_RUN_AS_APIKEY": ""}, {"apikey": "{token}"},
            "refused the apikey from the profile's `apikey` (HTTP 403"),
    "404": (None, "no-such-depot", {}, {}, "answered 404 (no such depot)"),
    "malformed": ("malformed", SERVED, {}, {}, "with a body that is not JSON"),
    "bad_secret": ("bad_secret", SERVED, {}, {}, "is not base64 UTF-8 text"),
    "unwritable": (None, "pg-depot", {}, {}, "which dbt-lakehouse cannot write"),
}  # fmt: skip


@pytest.mark.parametrize("name", FAULTS)
def test_each_fault_is_one_clear_line(
    name: str, world: World, fault: LocalDepotService, tmp_path: Path
) -> None:
    """Resolution as a command does it, in this process against the real local service (each
    fault fails before Spark; test_a_fault_in_dbt_debug shows one through a `dbt` process)."""
    from dbt.adapters.lakehouse.exceptions import DepotConfigError
    from dbt.adapters.lakehouse.profile.depot import resolve_depot

    service_fault, depot, extra_env, profile_keys, line = FAULTS[name]
    fault.fault = service_fault
    fault.delay = 3.0
    env = {**service_env(world), **extra_env}
    env = {k: v.format(closed=free_port()) for k, v in env.items()}
    with pytest.raises(DepotConfigError) as raised:
        resolve_depot(
            depot=f"dataos://{depot}",
            depots_file=None,
            warehouse=None,
            aws_region=None,
            aws_endpoint=None,
            env=env,
            cwd=tmp_path,
            home=tmp_path,
            apikey=profile_keys.get("apikey", "").format(token=world.rest.token) or None,
        )
    message = str(raised.value.msg)
    assert line in message
    assert "\n" not in message
    if name == "404":
        # Every resolver with what it answered, and the fix for a workload inside DataOS.
        assert message.startswith("Unknown depot dataos://no-such-depot: no resolver knows it.")
        for part in ("1. depots file: none found", "2. DataOS secret dir (the default folder)",
                     f"3. DataOS Depot Service at {world.service.url}",
                     "Fix: name a depot this DataOS instance has"):  # fmt: skip
            assert part in message
        assert "depots.yml with" not in message
    assert_no_secret(world, message)


def test_a_fault_in_dbt_debug(world: World, tmp_path: Path) -> None:
    """What a user sees: the line, no stack, and no apikey in the output or the logs."""
    project = sample(tmp_path / "debug", "dataos_faults")
    debug = dbt(project, service_env(world, apikey=RUN_AS_WRONG), "debug")
    output = debug.stdout + debug.stderr
    assert debug.returncode != 0
    assert "refused the apikey from DATAOS_RUN_AS_APIKEY (HTTP 401" in output, output[-2000:]
    assert "Traceback" not in output
    assert_no_secret(world, output, folder=project)


def test_tenant_scoped_paths_and_json_secrets(world: World, tmp_path: Path) -> None:
    """With DATAOS_TENANT_ID the tenant-scoped resolve and secrets paths are asked (purpose=),
    and a secret whose base64Value decodes to JSON is read like `k=v` lines."""
    from dbt.adapters.lakehouse.profile.depot import resolve_depot

    world.service.secrets_as_json = True
    try:
        before = world.service.calls.copy()
        depot = resolve_depot(
            depot=f"dataos://{SERVED}?purpose=rw",
            depots_file=None,
            warehouse=None,
            aws_region=None,
            aws_endpoint=None,
            env={**service_env(world), "DATAOS_TENANT_ID": "acme"},
            cwd=tmp_path,
            home=tmp_path,
        )
    finally:
        world.service.secrets_as_json = False
    asked = world.service.calls - before
    assert set(asked) == {
        "/ds/api/v2/tenants/acme/resolve",
        f"/ds/api/v2/tenants/acme/depots/{SERVED}/secrets",
    }
    assert world.service.last_query[f"/ds/api/v2/tenants/acme/depots/{SERVED}/secrets"] == (
        "purpose=rw"
    )
    assert depot.source.endswith("(tenant acme paths)")
    assert depot.secrets.aws_secret_key is not None
    assert depot.secrets.aws_secret_key.reveal() == world.s3.secret_key
