"""Metadata without a query engine on a REST depot: pyiceberg's RestCatalog, opened from the
depot as `dbt-lakehouse history` opens it (iceberg/pyiceberg_rest.py), against the JVM path, per
operation, cold and warm, and the whole command the three ways it can go.

The servers are the test suite's own (tests/functional/infra/servers.py), on 127.0.0.1: a moto
S3 server and the Iceberg REST catalog server (Iceberg's Java REST catalog on a JDBC store, the
bearer token required). The sample's `orders` and what it needs (`dbt build -s +orders`, with
the tests of those alone) is built into a depot on them, named in a depots file whose secrets
come from the environment.

Then, as bench/pyiceberg_metadata.py does on the embedded lakehouse: in fresh processes each
side resolves the profile and does the four metadata operations ("cold" the first, "warm" the
same again in that process; the JVM side attaches to the engine the build left up, pyiceberg
imports itself and opens the catalog, its GET /v1/config); then `dbt-lakehouse history` a fresh
process each: attached to the warm engine, with none up through pyiceberg (what it does now),
with none up through a JVM of its own (what it did before). The three must print the same table.
Every HTTP call stays on 127.0.0.1, so a remote catalog's round trips would add to both sides.

    .venv/bin/python bench/pyiceberg_rest.py [--rounds 3] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import DBT, REPO, fresh_copy, ours_target, stop_engines, write_profiles  # noqa: E402
from pyiceberg_metadata import (  # noqa: E402
    MEASURE,
    SAMPLE,
    SCHEMA,
    TABLE,
    WAYS,
    report,
    run_figures,
    time_history,
)

sys.path.insert(0, str(REPO / "tests"))
from functional.infra.servers import RestCatalog, S3Server  # noqa: E402

DEPOT = "bench-rest"
# The depot's secrets, by the names the depots file reads them from (never written to a file).
SECRET_ENV = {
    "aws_access_key": "BENCH_REST_S3_ACCESS_KEY",
    "aws_secret_key": "BENCH_REST_S3_SECRET_KEY",
    "apikey": "BENCH_REST_TOKEN",
}

# Both sides resolve the profile as the command does (cwd: the project; argv[1]: its folder).
RESOLVE = """
import argparse, json, sys, time
started = time.perf_counter()
from dbt.adapters.lakehouse.cli.common import load_resolved
resolved, chosen = load_resolved(
    "bench", argparse.Namespace(profiles_dir=sys.argv[1], profile=None, target=None))
catalog_name, schema, t_name = chosen.credentials.database, sys.argv[2], sys.argv[3]
"""

JVM_SIDE = """
from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
spark = ENGINE.get(resolved.spec)
ready = time.perf_counter() - started
t = f"{catalog_name}.{schema}.{t_name}"
ops = {
    "list relations": lambda: spark.sql(f"show tables in {catalog_name}.{schema}").collect(),
    "last commit": lambda: spark.sql(f"select max(committed_at) from {t}.snapshots").collect(),
    "row count and size": lambda: spark.sql(
        f"select summary['total-records'], summary['total-files-size'] from {t}.snapshots "
        "order by committed_at desc limit 1").collect(),
    "history": lambda: spark.sql(f"select * from {t}.history").collect(),
}
"""

PYICEBERG_SIDE = """
from dbt.adapters.lakehouse.iceberg.pyiceberg_rest import rest_catalog_properties
catalog = rest_catalog_properties(resolved.depot, catalog_name).open()
ready = time.perf_counter() - started
ident = (schema, t_name)
ops = {
    "list relations": lambda: (catalog.list_tables(schema), catalog.list_views(schema)),
    "last commit": lambda: catalog.load_table(ident).current_snapshot().timestamp_ms,
    "row count and size": lambda: (
        lambda s: (s["total-records"], s["total-files-size"])
    )(catalog.load_table(ident).current_snapshot().summary),
    "history": lambda: catalog.load_table(ident).history(),
}
"""


def depots_file(path: Path, s3: S3Server, rest: RestCatalog) -> dict[str, str]:
    """Write the depot's file; returns the environment its secrets are read from."""
    entry = {
        "type": "lakehouse",
        "spec": {
            "storageType": "s3",
            "s3": {
                "bucket": s3.bucket,
                "relativePath": "warehouse/",
                "region": s3.region,
                "endpoint": s3.endpoint,
            },  # fmt: skip
        },
        "catalog": {"type": "rest", "uri": rest.uri},
        "secrets": {key: "{{ env_var('" + name + "') }}" for key, name in SECRET_ENV.items()},
    }
    path.write_text(yaml.safe_dump({"depots": {DEPOT: entry}}, sort_keys=False))
    values = {"aws_access_key": s3.access_key, "aws_secret_key": s3.secret_key,
              "apikey": rest.token}  # fmt: skip
    return {SECRET_ENV[key]: value for key, value in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-work")
    args = parser.parse_args()
    work: Path = args.work / "pyiceberg_rest"
    home = work / "engines"
    stop_engines(home)
    servers = work / "servers"
    s3 = S3Server(servers).start()
    rest = None
    try:
        rest = RestCatalog(s3=s3, log_dir=servers, warehouse=f"s3://{s3.bucket}/warehouse")
        rest.start()
        project = fresh_copy(SAMPLE, work / "sample")
        secrets = depots_file(work / "depots.yml", s3, rest)
        target = {**ours_target(SCHEMA), "depot": f"dataos://{DEPOT}",
                  "depots_file": str(work / "depots.yml")}  # fmt: skip
        write_profiles(project, "jaffle_lakehouse", target)
        env = {**os.environ, **secrets, "DO_NOT_TRACK": "1", "LAKEHOUSE_ENGINE_HOME": str(home)}
        # cautious: no test that needs a model outside the selection (orders -> customers).
        build = [DBT, "build", "-s", f"+{TABLE}", "--indirect-selection", "cautious",
                 "--profiles-dir", str(project),
                 "--project-dir", str(project)]  # fmt: skip
        done = subprocess.run(build, cwd=project, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the build failed:\n{done.stdout[-3000:]}")
        runs: dict[str, list[dict]] = {"jvm": [], "pyiceberg": []}
        commands: dict[str, list[tuple]] = {way: [] for way in WAYS}
        argv = [str(project), SCHEMA, TABLE]
        for _ in range(args.rounds):
            for side, code in (("jvm", JVM_SIDE), ("pyiceberg", PYICEBERG_SIDE)):  # alternating
                figures = run_figures(side, RESOLVE + code + MEASURE, argv, project, env)
                runs[side].append(figures)
            for way in WAYS:
                commands[way].append(time_history(way, project, env, work / "no-engines"))
    finally:
        stop_engines(home)
        if rest is not None:
            rest.stop()
        s3.stop()
    printed = "".join(out for way in WAYS for _, out in commands[way])
    assert not any(value in printed for value in secrets.values()), "a secret was printed"
    print("a REST depot (moto S3 and the Iceberg REST catalog server on 127.0.0.1)")
    report(runs, commands, args.rounds, f"{SCHEMA}.{TABLE}")


if __name__ == "__main__":
    main()
