"""abfss depots against Azurite (the Azure Storage emulator's Blob service, on 127.0.0.1).

Exercised for real: the `dbt debug` preflight through the Blob API (container, account key,
SAS tokens, write/delete probe) and each refusal Azurite answers with; the generated Spark conf
keys, looked up in the pinned hadoop-azure and Iceberg jars; and a dbt build whose mounted
abfss depot writes Iceberg tables through Iceberg's ADLSFileIO into Azurite, beside a local
depot. Not exercised (Azurite has no DFS API, Azure/Azurite#409, #553): Hadoop ABFS writes and
listings, a service principal, the hadoop catalog on abfss. docs/tests.md lists it all.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.engine.jars import ABFS_JARS, ICEBERG_JARS
from dbt.adapters.lakehouse.engine.jars.lines import installed_line
from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
from dbt.adapters.lakehouse.profile.depot import Depot, resolve_depot
from dbt.adapters.lakehouse.profile.depot.storage.abfss.section import ADLS_FILE_IO
from dbt.adapters.lakehouse.profile.preflight import run_preflight
from functional.infra.azurite import AzuriteServer
from functional.infra.servers import compiled_java, pyspark_jars
from functional.lakehouse.shared import warm

pytestmark = pytest.mark.only_profile("local")


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzuriteServer]:
    server = AzuriteServer(tmp_path_factory.mktemp("azurite")).start()
    yield server
    server.stop()


def abfss_depot(
    azurite: AzuriteServer, secrets: dict[str, str], container: str | None = None, **catalog: Any
) -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "spec": {
            "storageType": "abfss",
            "abfss": {
                "account": azurite.account,
                "container": container or azurite.container,
                "relativePath": "warehouse/",
                "endpoint": azurite.endpoint,
            },
        },
        "catalog": catalog or {"type": "hadoop"},
        "secrets": secrets,
    }


def resolved(entry: dict[str, Any]) -> Depot:
    return resolve_depot(
        depot=entry, depots_file=None, warehouse=None, aws_region=None, aws_endpoint=None, env={}
    )


def preflight(azurite: AzuriteServer, entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    depot = resolved(entry)
    report = run_preflight(depot, timeout=5)
    for line in report.passed + report.problems:
        assert azurite.key not in line
        for value in depot.secret_values():
            assert value not in line
    return report.passed, report.problems


APIKEY = "fake-rest-apikey-4455"
REST = {"type": "rest", "uri": "http://127.0.0.1:9"}  # a SAS token needs a non-hadoop catalog


def test_preflight_passes_with_the_account_key_and_leaves_no_probe(azurite: AzuriteServer) -> None:
    passed, problems = preflight(azurite, abfss_depot(azurite, {"azure_account_key": azurite.key}))
    assert problems == []
    assert any("may list abfs://lake@" in line for line in passed), passed
    assert any("Put Blob and Delete Blob" in line for line in passed), passed
    assert not [b.name for b in azurite.container_client().list_blobs()]


def test_preflight_names_a_missing_container(azurite: AzuriteServer) -> None:
    entry = abfss_depot(azurite, {"azure_account_key": azurite.key}, container="nolake")
    _, problems = preflight(azurite, entry)
    assert len(problems) == 1 and "Container 'nolake' does not exist" in problems[0]
    assert "create the container" in problems[0]


def test_preflight_names_a_wrong_account_key(azurite: AzuriteServer) -> None:
    wrong = azurite.key[:-8] + "AAAAAAA="
    _, problems = preflight(azurite, abfss_depot(azurite, {"azure_account_key": wrong}))
    assert len(problems) == 1, problems
    assert "refused the account key" in problems[0] and "did not authenticate" in problems[0]
    assert "key1 or key2" in problems[0]
    assert wrong not in problems[0]


def test_preflight_with_sas_tokens(azurite: AzuriteServer) -> None:
    full = azurite.sas("racwdl")
    entry = abfss_depot(azurite, {"azure_sas_token": full, "apikey": APIKEY}, **REST)
    passed, problems = preflight(azurite, entry)
    assert any("the SAS token" in line and "may list" in line for line in passed), passed
    assert any("Put Blob and Delete Blob" in line for line in passed), passed
    assert all("Azure" not in p and "Container" not in p for p in problems), problems

    read_only = abfss_depot(
        azurite, {"azure_sas_token": azurite.sas("rl"), "apikey": APIKEY}, **REST
    )
    _, problems = preflight(azurite, read_only)
    write = [p for p in problems if "Put Blob" in p]
    assert len(write) == 1 and "AuthorizationPermissionMismatch" in write[0]
    assert "sp=racwdl" in write[0]

    expired = azurite.sas("racwdl", expires_in_s=-60)
    _, problems = preflight(
        azurite, abfss_depot(azurite, {"azure_sas_token": expired, "apikey": APIKEY}, **REST)
    )
    listing = [p for p in problems if "List Blobs" in p]
    assert len(listing) == 1 and "unexpired SAS" in listing[0], problems


def test_preflight_names_an_unreachable_endpoint(azurite: AzuriteServer) -> None:
    entry = abfss_depot(azurite, {"azure_account_key": azurite.key})
    entry["spec"]["abfss"]["endpoint"] = f"http://127.0.0.1:9/{azurite.account}"
    _, problems = preflight(azurite, entry)
    assert len(problems) == 1 and "Azure Storage is unreachable" in problems[0], problems


# --- the generated conf, against the jars that read it ----------------------------------------


def class_strings(jar: Path, member: str) -> set[str]:
    """The string constants of a class: a crude but sufficient read of its constant pool."""
    with zipfile.ZipFile(jar) as archive:
        data = archive.read(member)
    return {s.decode() for s in re.findall(rb"[a-z][a-z0-9.\-]{6,}", data)}


def test_generated_keys_are_ones_hadoop_azure_and_iceberg_read(azurite: AzuriteServer) -> None:
    abfs = ABFS_JARS.install()[0]
    iceberg = ICEBERG_JARS.locate() or ICEBERG_JARS.install()
    hadoop_keys = class_strings(
        abfs, "org/apache/hadoop/fs/azurebfs/constants/ConfigurationKeys.class"
    )
    iceberg_keys = class_strings(iceberg[0], "org/apache/iceberg/azure/AzureProperties.class")
    host = f"{azurite.account}.dfs.core.windows.net"
    sp = {"azure_client_id": "id-1234", "azure_client_secret": "s-1234", "azure_tenant_id": "t-1"}
    adls = {"type": "rest", "uri": "http://x", "properties": {"io-impl": ADLS_FILE_IO}}
    plans = [
        build_spark_conf_plan(resolved(abfss_depot(azurite, secrets, **catalog)), "c")
        for secrets, catalog in (
            ({"azure_account_key": azurite.key}, {}),
            (sp, {}),
            ({"azure_sas_token": azurite.sas("rl"), "apikey": APIKEY}, REST),
            ({"azure_account_key": azurite.key, "apikey": APIKEY}, adls),
        )
    ]
    seen = 0
    for plan in plans:
        keys = [*plan.conf, *plan.secret_catalog_conf, *plan.secret_hadoop_conf]
        for key in keys:
            bare = re.sub(r"^(spark\.hadoop\.|spark\.sql\.catalog\.c\.(hadoop\.)?)", "", key)
            bare = bare.removesuffix(f".{host}")
            if bare.startswith("fs.azure."):
                assert bare in hadoop_keys, key
                seen += 1
            elif bare.startswith("adls."):
                # Per-host keys are a prefix constant (adls.sas-token.) plus the host.
                assert bare in iceberg_keys or f"{bare}." in iceberg_keys, key
                seen += 1
    assert seen >= 12


# --- Hadoop's ABFS in a JVM, with the generated conf -------------------------------------------

ABFS_READ = Path(__file__).parents[2] / "infra" / "AbfsRead.java"


def abfs_steps(azurite: AzuriteServer, key: str, tmp_path: Path) -> list[str]:
    """AbfsRead's report of reading warehouse/abfs/hello.txt, then writing beside it, with the
    Hadoop settings the adapter generates for an account-key depot (session-wide ones)."""
    depot = resolved(abfss_depot(azurite, {"azure_account_key": key}))
    plan = build_spark_conf_plan(depot, "c")
    settings = {
        k.removeprefix("spark.hadoop."): v
        for k, v in plan.conf.items()
        if k.startswith("spark.hadoop.")
    }
    settings.update(plan.secret_hadoop_conf)
    if installed_line().spark != "3.5":
        # Hadoop 3.4's ABFS asks the DFS endpoint for a path's status and needs its
        # x-ms-resource-type header (AbfsDfsClient.checkIsDir); Azurite serves only the Blob
        # API, without it. So the test account is a flat-namespace one, as Azurite's is, read
        # through ABFS's Blob client (new in 3.4). The adapter cannot set this for a real
        # account: 3.4 refuses BLOB for one with a hierarchical namespace, the usual ADLS Gen2.
        settings["fs.azure.fns.account.service.type"] = "BLOB"
    properties = tmp_path / "abfs.properties"
    properties.touch(mode=0o600)  # it holds the key: not on the command line
    properties.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    classpath = [*ABFS_JARS.install(), pyspark_jars()]
    classes = compiled_java(ABFS_READ, classpath, "abfs-read")
    uri = f"{depot.storage.warehouse_uri}/abfs/hello.txt"
    java = shutil.which("java") or "java"
    run = subprocess.run(
        [java, "-cp", ":".join(map(str, [classes, *classpath])), "AbfsRead", str(properties), uri],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert key not in run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if line.startswith(("ok ", "failed "))]


def test_hadoop_abfs_reads_with_the_generated_conf(azurite: AzuriteServer, tmp_path: Path) -> None:
    """ABFS signs with the depot's key and Azurite checks the signature: a status and a read
    pass, a wrong key is refused. On Hadoop 3.3 a write needs the DFS API, which Azurite lacks
    (400); Hadoop 3.4's Blob client (abfs_steps) writes."""
    blob = "warehouse/abfs/hello.txt"
    azurite.container_client().upload_blob(blob, b"hello-abfs", overwrite=True)
    steps = abfs_steps(azurite, azurite.key, tmp_path)
    assert steps[:2] == ["ok status length=10", "ok read hello-abfs"], steps
    if installed_line().spark == "3.5":
        assert steps[2].startswith("failed AbfsRestOperationException") and "400, PUT" in steps[2]
    else:
        assert steps[2] == "ok write", steps
    wrong = abfs_steps(azurite, azurite.key[:-8] + "AAAAAAA=", tmp_path)
    assert len(wrong) == 1 and wrong[0].startswith("failed ") and "403" in wrong[0], wrong


# --- dbt, end to end -------------------------------------------------------------------------

MODELS = {
    "orders.sql": "{{ config(materialized='table') }}\n"
    "select * from values (1, 'a'), (2, 'b') as t(id, v)",
    "az_orders.sql": "{{ config(materialized='table', database='az') }}\n"
    "select id * 10 as id, v from {{ ref('orders') }}",
    "key_orders.sql": "{{ config(materialized='table', database='azkey') }}\n"
    "select id + 1 as id, v from {{ ref('az_orders') }}",
    # A Delta log beside Iceberg, written by delta-rs through the Blob API.
    "az_dual.sql": "{{ config(materialized='table', database='az', "
    "table_formats=['iceberg', 'delta']) }}\nselect * from {{ ref('az_orders') }}",
}
ROW_TESTS = {
    "az_rows.sql": "select * from (select count(*) as n, sum(id) as s from {{ ref('az_orders') }})"
    " where not (n = 2 and s = 30)",
    "key_rows.sql": "select * from (select count(*) as n, sum(id) as s from "
    "{{ ref('key_orders') }}) where not (n = 2 and s = 32)",
}


def azure_depot(azurite: AzuriteServer, name: str, catalog: str, extra: str, secret: str) -> str:
    return (
        f"  {name}:\n    type: lakehouse\n"
        "    spec:\n      storageType: abfss\n"
        f"      abfss: {{account: {azurite.account}, container: {azurite.container}, "
        f"relativePath: warehouse/{name}, endpoint: '{azurite.endpoint}'}}\n"
        f"    catalog: {{type: jdbc, uri: '{catalog}'{extra}}}\n"
        f"    secrets: {{{secret}: \"{{{{ env_var('LAKEHOUSE_TEST_{name.upper()}') }}}}\"}}\n"
    )


def write_project(
    azurite: AzuriteServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sas: str, key: str
) -> Path:
    """A local depot, and two abfss depots mounted as catalogs az (the SAS token) and azkey
    (the account key, with ADLSFileIO asked for); the secrets in the environment."""
    project = tmp_path / "proj"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    for name, sql in ROW_TESTS.items():
        (project / "tests" / name).write_text(sql)
    (project / "dbt_project.yml").write_text(
        "name: az\nversion: '1.0'\nconfig-version: 2\nprofile: az\n"
    )
    catalog = f"jdbc:h2:file:{tmp_path}/azcatalog/iceberg;DATABASE_TO_LOWER=TRUE"
    (project / "depots.yml").write_text(
        "depots:\n"
        "  local:\n    type: lakehouse\n"
        f"    spec: {{storageType: file, file: {{path: {tmp_path / 'lake'}}}}}\n"
        "    catalog: {type: hadoop}\n"
        + azure_depot(azurite, "azsas", catalog, "", "azure_sas_token")
        + azure_depot(
            azurite,
            "azkey",
            catalog,
            f", properties: {{io-impl: {ADLS_FILE_IO}}}",
            "azure_account_key",
        )
    )
    (project / "profiles.yml").write_text(
        "az:\n  target: dev\n  outputs:\n    dev:\n      type: lakehouse\n      schema: s\n"
        f"      depot: dataos://local\n      depots_file: {project / 'depots.yml'}\n"
        "      depots: {az: dataos://azsas, azkey: dataos://azkey}\n"
    )
    monkeypatch.setenv("LAKEHOUSE_TEST_AZSAS", sas)
    monkeypatch.setenv("LAKEHOUSE_TEST_AZKEY", key)
    return project


def dbt(project: Path, engine_home: Path, *args: str) -> tuple[int, str]:
    """`dbt` in its own process, on the test's own warm engines (stopped when it ends)."""
    run = warm.dbt(project, engine_home, *args)
    return run.returncode, run.stdout + run.stderr


def test_dbt_builds_into_mounted_abfss_depots(
    azurite: AzuriteServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_home: Path
) -> None:
    """A build whose abfss tables' files are Azurite's blobs, written and read back (the data
    tests) through ADLSFileIO: with the SAS token by default, with the account key where the
    depot asks for ADLSFileIO. (`dbt debug` on this profile: the next test; its preflight
    passing: the preflight tests above, which cost no JVM.)"""
    sas = azurite.sas("racwdl")
    project = write_project(azurite, tmp_path, monkeypatch, sas, azurite.key)
    code, output = dbt(project, engine_home, "build")
    assert azurite.key not in output and sas not in output
    assert code == 0 and "PASS=6" in output, output[-3000:]
    client = azurite.container_client()
    for name, table in (("azsas", "az_orders"), ("azkey", "key_orders")):
        blobs = [b.name for b in client.list_blobs(name_starts_with=f"warehouse/{name}/")]
        assert any(n.startswith(f"warehouse/{name}/s/{table}/data/") for n in blobs), blobs
        assert any(n.endswith(".metadata.json") for n in blobs), blobs
    assert not (tmp_path / "lake" / "s" / "az_orders").exists()
    from deltalake import DeltaTable

    dual = f"abfs://{azurite.container}@{azurite.account}.dfs.core.windows.net"
    options = {
        "azure_storage_account_name": azurite.account,
        "azure_storage_account_key": azurite.key,
        "azure_storage_endpoint": azurite.endpoint,
        "allow_http": "true",
    }
    rows = DeltaTable(f"{dual}/warehouse/azsas/s/az_dual", storage_options=options)
    assert sorted(rows.to_pyarrow_table().column("id").to_pylist()) == [10, 20]


def test_dbt_debug_names_the_mounted_depot_azure_refused(
    azurite: AzuriteServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_home: Path
) -> None:
    """The preflight of every depot runs before Spark: a wrong key of the mounted `azkey`
    depot fails `dbt debug` naming that depot and the fix, with neither secret shown."""
    sas, wrong = azurite.sas("racwdl"), azurite.key[:-8] + "AAAAAAA="
    project = write_project(azurite, tmp_path, monkeypatch, sas, wrong)
    code, output = dbt(project, engine_home, "debug")
    assert code != 0
    assert "`depots: azkey` 'azkey'" in output, output[-3000:]
    assert "refused the account key" in output and "key1 or key2" in output
    for secret in (sas, wrong, azurite.key):
        assert secret not in output
