"""Test-wide setup: the functional profile switch and one lakehouse per test process.

Profiles (`--profile`, or LAKEHOUSE_TEST_PROFILE):
- `local` (default): the embedded lakehouse, a folder on disk with an SQLite-backed catalog.
- `s3_rest`: a real depot through the real depots-file path (`depot: dataos://test-s3-rest`):
  Iceberg tables on S3 (a moto server) registered in an Iceberg REST catalog (the test server
  in tests/functional/infra/) that requires the depot's `apikey` as its bearer token.
- `cluster`: the `s3_rest` depot, with Spark's driver here and its executors on a standalone
  cluster (a master and two two-core workers on 127.0.0.1, from the pyspark wheel). An
  application takes two one-core executors, which the master spreads over both workers, and
  leaves two cores for a second one (a test's own `dbt` subprocess). Run on a subset
  (docs/tests.md), without xdist: each test process would start its own cluster.
- `connect`: the `s3_rest` depot through Spark Connect (`spark.master: sc://127.0.0.1:<port>`):
  a Connect server on 127.0.0.1 (infra/connect.py), started with the Iceberg jars, Iceberg's SQL
  extensions and the depot's catalog conf without its secrets, which the adapter sends as
  session conf. No JVM runs in the test process. Run on a subset (docs/tests.md).
Every dbt invocation in a process shares one SparkSession, so the lakehouse is per process
(per xdist worker: each worker starts its own servers), not per test.

Fixtures other tests may use (stable names; servers start on first use, on any profile, bind
127.0.0.1 on free ports, and stop at the end of the session):
- `s3_server`: `.endpoint` (http URL), `.bucket` (already created), `.access_key`,
  `.secret_key`, `.region`, `.client(**overrides)` (a boto3 S3 client; pass e.g.
  `aws_secret_access_key="wrong"` to get one with bad keys), `.log_path`, `.port`.
- `rest_catalog`: `.uri`, `.token` (the only bearer token it accepts), `.warehouse`
  (`s3://<bucket>/warehouse`), `.log_path` (access log: `METHOD /path STATUS` per request),
  `.status_counts()` ({http status: count}), `.port`.
- `s3_rest_depots_file`: the depots file the `s3_rest` profile uses; its depot
  `test-s3-rest` reads the secrets from the env variables in `S3_REST_SECRET_ENV`, which
  the fixture sets (child dbt processes inherit them).
- `dbt_profile_target`: the profile target for the chosen profile.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from functional.infra.cluster import SparkCluster
from functional.infra.servers import RestCatalog, S3Server

pytest_plugins = ["dbt.tests.fixtures.project", "functional.infra.file_durations"]

PROFILES = ("local", "s3_rest", "cluster", "connect")
NATIVE_ENV = "LAKEHOUSE_TEST_NATIVE"
S3_REST_DEPOT = "test-s3-rest"
S3_REST_PREFIX = "warehouse"
# Test-only names, so tests that unset METASTORE_URL / LAKEHOUSE_APIKEY / AWS_* stay unaffected.
S3_REST_SECRET_ENV = {
    "aws_access_key": "LAKEHOUSE_TEST_S3_ACCESS_KEY",
    "aws_secret_key": "LAKEHOUSE_TEST_S3_SECRET_KEY",
    "apikey": "LAKEHOUSE_TEST_REST_TOKEN",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--profile",
        action="store",
        default=os.environ.get("LAKEHOUSE_TEST_PROFILE", "local"),
        choices=PROFILES,
        help="which lakehouse the functional tests run against",
    )


JVM_TMP_ENV = "LAKEHOUSE_TEST_JVM_TMP"
CODEGEN = "spark.sql.codegen"
# The profiles whose engines evaluate without generated code (pytest_configure).
INTERPRETED_PROFILES = ("local", "s3_rest")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "only_profile(name): run only on the named profile")
    # No dbt the tests run, in their process or as a `dbt` process of its own, sends dbt's usage
    # events: the tests reach no network but 127.0.0.1. The xdist workers and every child
    # process inherit it.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # The tests' commands follow each other closely: a warm engine's warm-up (engine/warm/
    # warm_up.py) would take the cores in their gaps. test_warm_engine.py turns it on where it
    # tests it.
    os.environ.setdefault("LAKEHOUSE_ENGINE_WARM_UP_SECONDS", "0")
    # Every JVM the tests start (workers', `dbt` processes', warm engines, servers, a cluster's)
    # keeps its temporary files (Spark's scratch and jar copies, Comet's 140 MB native library,
    # Connect's artifacts, HiveServer2's resources) in one folder of this run, deleted when the
    # run ends: the JVMs the tests kill on purpose leave theirs, which in /tmp added up to
    # gigabytes over a day of runs. The xdist workers inherit it from the controller.
    if JVM_TMP_ENV not in os.environ:
        import tempfile

        folder = tempfile.mkdtemp(prefix="lakehouse-tests-jvm-")
        os.environ[JVM_TMP_ENV] = folder
        given = os.environ.get("JDK_JAVA_OPTIONS", "")
        # C1 only (unless the caller chose a tier): the suite is bound by the machine's two
        # cores, and most of its JVMs are `dbt` processes', engines, servers and clusters that
        # live seconds to minutes, in which C2's compiling costs more CPU than its code saves.
        # `local` took 23:49 instead of 25:30; `connect` 230 CPU-s instead of 330-344, `cluster`
        # 285 instead of 449 (docs/tests.md).
        # With C1 only the JVM takes the client's code cache, 48 MB instead of 240: a warm
        # engine that serves a whole module's builds filled it ("Out of space in CodeCache for
        # method handle intrinsic", a failed statement), so it gets the server's size back.
        jit = ""
        if "TieredStopAtLevel" not in given:
            jit = "-XX:TieredStopAtLevel=1"
            if "ReservedCodeCacheSize" not in given:
                jit += " -XX:ReservedCodeCacheSize=240m"
        # The serial collector (unless the caller chose one): on two cores G1's concurrent
        # threads and barriers cost the suite's small heaps more CPU than its short pauses save.
        # The community packages' module, alternating with G1: 487 and 516 CPU-s against 549
        # and 553; dbt's adapter suite 497 and 553 against 550 and 579 (docs/tests.md).
        collector = "" if re.search(r"-XX:\+Use\w+GC", given) else "-XX:+UseSerialGC"
        interpreted = ""
        if config.getoption("--profile") in INTERPRETED_PROFILES and CODEGEN not in given:
            # Spark's own test setting (SQLConf's internal factoryMode): expressions and plans
            # evaluated as they are, no Java generated and compiled for each new query shape.
            # Over a few rows that compiling costs more than it saves: dbt's utils, snapshot and
            # basic suites took 193-205 CPU-s instead of 230-240 (docs/tests.md). A SparkConf
            # reads `spark.*` system properties, so every engine of the run gets it, whatever
            # profile its `dbt` process writes. `cluster` and `connect` keep Spark's default,
            # generated code, as users' engines run.
            interpreted = f"-D{CODEGEN}.wholeStage=false -D{CODEGEN}.factoryMode=NO_CODEGEN"
        # Hadoop's scratch too (s3a's upload buffers, `${hadoop.tmp.dir}/s3a`), which would be
        # /tmp/hadoop-<user>: a system property wins in Hadoop's `${...}` expansion, so this
        # reaches the REST catalog server's plain Hadoop conf as well as every Spark's.
        hadoop = f"-Dhadoop.tmp.dir={folder}/hadoop"
        options = f"{given} {jit} {collector} {interpreted} -Djava.io.tmpdir={folder} {hadoop}"
        os.environ["JDK_JAVA_OPTIONS"] = " ".join(options.split())
        config.stash[_JVM_TMP] = (folder, given)


_JVM_TMP = pytest.StashKey[tuple[str, str]]()


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_JVM_TMP, None)
    if made is not None:
        import shutil

        folder, given = made
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[JVM_TMP_ENV]
        if given:
            os.environ["JDK_JAVA_OPTIONS"] = given
        else:
            os.environ.pop("JDK_JAVA_OPTIONS", None)


def pytest_report_header(config: pytest.Config) -> list[str]:
    from importlib.metadata import version

    packages = ("dbt-core", "dbt-adapters", "dbt-spark", "pyspark", "deltalake")
    return [
        f"lakehouse profile: {config.getoption('--profile')}",
        "versions: " + ", ".join(f"{p} {version(p)}" for p in packages),
    ]


# The slowest modules (pytest --durations, 2026-11-27), started first: with `--dist loadfile`
# each worker takes the next file when it is free, so a long file started last would leave the
# other worker idle until it ends.
SLOW_FIRST = (
    "test_warm_engine.py",
    "test_catalogs.py",
    "test_community_packages.py",
    "test_reuse_history.py",  # 4 to 6 minutes (a random history of builds, issue 61)
    "test_warm_rows.py",
    "test_embedded_concurrency.py",
    "test_embedded_pyiceberg.py",
    "test_maintenance.py",
    "test_maintenance_scope_run.py",
    "test_delta_format.py",
    "test_delta_format_refusals.py",
    "test_native_rows.py",
    "test_serve.py",  # one server for the module, 60-95 s
    "test_depot_forms.py",
    "test_gcs_depots.py",
    "test_audit.py",
    "test_materialized_view_properties.py",
    "test_materialized_views.py",
    "test_materialized_views_rest.py",
    "test_materialized_view.py",
)


def _start_rank(item: pytest.Item) -> int:
    name = item.path.name
    return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_start_rank)  # stable: each module's own order is kept
    profile = config.getoption("--profile")
    for item in items:
        marker = item.get_closest_marker("only_profile")
        if marker is not None and profile not in marker.args:
            item.add_marker(
                pytest.mark.skip(reason=f"runs only on profile(s) {marker.args}, not {profile}")
            )


@pytest.fixture(scope="session")
def lakehouse_root(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("lakehouse")
    # The JVM's console output goes beside the warehouse, not into test project folders.
    os.environ["LAKEHOUSE_SPARK_LOG"] = str(root / "spark.log")
    # The warm engine this test process (and the dbt processes its tests start) attaches to:
    # its own, stopped when the tests end.
    engines = root / "engines"
    os.environ["LAKEHOUSE_ENGINE_HOME"] = str(engines)
    yield root
    from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
    from dbt.adapters.lakehouse.engine.warm.folder import stop_engines

    ENGINE.stop()
    stop_engines(engines)


@pytest.fixture(scope="session")
def s3_server(lakehouse_root: Path) -> Any:
    server = S3Server(lakehouse_root / "servers").start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def rest_catalog(s3_server: S3Server, lakehouse_root: Path) -> Any:
    catalog = RestCatalog(
        s3=s3_server,
        log_dir=lakehouse_root / "servers",
        warehouse=f"s3://{s3_server.bucket}/{S3_REST_PREFIX}",
    ).start()
    yield catalog
    catalog.stop()


def _env_var_template(name: str) -> str:
    return "{{ env_var('" + name + "') }}"


@pytest.fixture(scope="session")
def s3_rest_depots_file(
    s3_server: S3Server, rest_catalog: RestCatalog, lakehouse_root: Path
) -> Path:
    os.environ[S3_REST_SECRET_ENV["aws_access_key"]] = s3_server.access_key
    os.environ[S3_REST_SECRET_ENV["aws_secret_key"]] = s3_server.secret_key
    os.environ[S3_REST_SECRET_ENV["apikey"]] = rest_catalog.token
    depot = {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {
                "bucket": s3_server.bucket,
                "relativePath": f"{S3_REST_PREFIX}/",
                "region": s3_server.region,
                "endpoint": s3_server.endpoint,
            },
        },
        "catalog": {"type": "rest", "uri": rest_catalog.uri},
        # Rendered by the adapter's depots-file templating, as a user's file would be.
        "secrets": {key: _env_var_template(name) for key, name in S3_REST_SECRET_ENV.items()},
    }
    path = lakehouse_root / "depots.yml"
    path.write_text(yaml.safe_dump({"depots": {S3_REST_DEPOT: depot}}, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def spark_cluster(lakehouse_root: Path) -> Any:
    cluster = SparkCluster(lakehouse_root / "servers" / "cluster").start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def connect_server(s3_rest_depots_file: Path, lakehouse_root: Path) -> Any:
    from functional.infra.connect import ConnectServer

    from dbt.adapters.lakehouse.credentials import DEFAULT_CATALOG_NAME
    from dbt.adapters.lakehouse.engine.jars import resolve_jars
    from dbt.adapters.lakehouse.engine.sparkconf import build_spark_conf_plan
    from dbt.adapters.lakehouse.profile.depot import resolve_depot

    depot = resolve_depot(
        depot=f"dataos://{S3_REST_DEPOT}",
        depots_file=str(s3_rest_depots_file),
        warehouse=None,
        aws_region=None,
        aws_endpoint=None,
    )
    # What the server's launch takes: the jars and the conf, the depot's catalog among it.
    plan = build_spark_conf_plan(depot, DEFAULT_CATALOG_NAME)
    server = ConnectServer(
        lakehouse_root / "servers" / "connect",
        jars=resolve_jars(plan.jar_needs, fetch_missing=False),
        conf={
            **plan.conf,
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.shuffle.partitions": "4",
        },
    ).start()
    yield server
    server.stop()


@pytest.fixture(scope="class")
def dbt_profile_target(request: pytest.FixtureRequest, lakehouse_root: Path) -> dict:
    profile = request.config.getoption("--profile")
    spark = {"master": "local[2]", "driver_memory": "2g"}
    if profile == "local":
        target = {
            "type": "lakehouse",
            "threads": 4,
            "warehouse": str(lakehouse_root / "warehouse"),
            "spark": spark,
        }
        # The suite on a native engine (docs/tests.md): LAKEHOUSE_TEST_NATIVE=comet.
        native = os.environ.get(NATIVE_ENV, "").strip()
        return {**target, "engine": {"native": native}} if native else target
    if profile in ("s3_rest", "cluster", "connect"):
        depots_file = request.getfixturevalue("s3_rest_depots_file")
        if profile == "connect":
            spark = {"master": request.getfixturevalue("connect_server").url}
        if profile == "cluster":
            cluster = request.getfixturevalue("spark_cluster")
            spark = {
                "master": cluster.master_url,
                "driver_memory": "2g",
                "driver_host": "127.0.0.1",
                "executor_timeout_seconds": 60,
                "conf": {
                    "spark.executor.memory": "768m",
                    "spark.executor.cores": "1",
                    "spark.cores.max": "2",
                    "spark.sql.shuffle.partitions": "4",
                },
            }
        return {
            "type": "lakehouse",
            "threads": 4,
            "depot": f"dataos://{S3_REST_DEPOT}",
            "depots_file": str(depots_file),
            "spark": spark,
        }
    raise pytest.UsageError(f"unknown profile {profile}")
