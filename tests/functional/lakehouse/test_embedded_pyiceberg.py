"""The embedded lakehouse as other tools see it: one SQLite catalog file (docs/embedded.md).

One project, the sample (examples/jaffle_lakehouse), built step by step:
1. by the H2 catalog earlier releases kept in `<warehouse>/_catalog/iceberg.mv.db`, as they did:
   the same JdbcCatalog on the same H2 URL (through a jdbc depot on the warehouse folder), the
   file held open by H2's own Shell (their catalog holder) and served to Spark's JVM over H2's
   AUTO_SERVER on loopback;
2. then as the embedded lakehouse: the first command moves that catalog to SQLite, says so in
   one line, and keeps the H2 file as a backup; every table and view is still there;
3. read without a JVM: `open_catalog()` (pyiceberg's SqlCatalog) -> Arrow -> DuckDB, with the
   exact rows DuckDB computes from the sample's CSV files itself; the staging views are views
   to pyiceberg, not tables;
4. a row pyiceberg appends to a seed's table is read by the next `dbt run`.
"""

from __future__ import annotations

import os
import select
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbt.adapters.lakehouse.engine.jars import H2_JARS
from functional.infra.servers import dying_with_parent
from functional.lakehouse.dbt_output import output_text
from functional.lakehouse.warm import dbt

pytestmark = pytest.mark.only_profile("local")

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "jaffle_lakehouse"
SPARK = "      spark: {master: 'local[1]', driver_memory: 1g}\n"
# Earlier releases' JVMs bound H2's AUTO_SERVER to loopback, the holder's and Spark's alike.
H2_SPARK = (
    "      spark: {master: 'local[1]', driver_memory: 1g,\n"
    "              conf: {spark.driver.extraJavaOptions: '-Dh2.bindAddress=127.0.0.1'}}\n"
)
VIEWS = {"stg_customers", "stg_orders", "stg_payments"}
TABLES = {"raw_customers", "raw_orders", "raw_payments", "orders", "customers"}
# What the customers model computes, by DuckDB from the seeds' CSV files.
CUSTOMERS_FROM_CSV = """
with pay as (
    select order_id, sum(amount / 100.0) as amount from read_csv('{seeds}/raw_payments.csv')
    group by order_id
), o as (
    select o.id as order_id, o.user_id as customer_id, coalesce(p.amount, 0) as amount
    from read_csv('{seeds}/raw_orders.csv') o left join pay p on p.order_id = o.id
)
select c.id, c.first_name, c.last_name, count(o.order_id), round(coalesce(sum(o.amount), 0), 2)
from read_csv('{seeds}/raw_customers.csv') c left join o on o.customer_id = c.id
group by all order by 1
"""


def h2_url(warehouse: Path) -> str:
    return f"jdbc:h2:file:{warehouse}/_catalog/iceberg;AUTO_SERVER=TRUE;DATABASE_TO_LOWER=TRUE"


def write_profiles(project: Path) -> None:
    warehouse = project / "warehouse"
    (project / "profiles.yml").write_text(
        "jaffle_lakehouse:\n  target: dev\n  outputs:\n"
        f"    dev:\n      type: lakehouse\n      schema: jaffle\n      threads: 2\n"
        f"      warehouse: {warehouse}\n{SPARK}"
        # The earlier releases' embedded catalog: JdbcCatalog on this H2 file, same folder.
        f"    h2:\n      type: lakehouse\n      schema: jaffle\n      threads: 2\n"
        "      depot:\n        type: lakehouse\n"
        f"        spec: {{storageType: file, file: {{path: {warehouse}}}}}\n"
        f"        catalog: {{type: jdbc, uri: '{h2_url(warehouse)}'}}\n{H2_SPARK}"
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("embedded-pyiceberg") / "jaffle"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("target", "logs", "*_warehouse"))
    write_profiles(folder)
    return folder


@pytest.fixture
def h2_holder(project: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The earlier releases' catalog holder: H2's Shell holding the file open on a pipe."""
    jars = H2_JARS.install()
    java = shutil.which("java")
    assert java is not None
    (project / "warehouse" / "_catalog").mkdir(parents=True)
    shell = subprocess.Popen(
        dying_with_parent(
            [java, "-Dh2.bindAddress=127.0.0.1", "-cp", str(jars[0]), "org.h2.tools.Shell"]
            + ["-url", h2_url(project / "warehouse"), "-user", "", "-password", ""]
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert shell.stdout is not None and shell.stdin is not None
    output, began = b"", time.monotonic()
    while b"sql> " not in output:
        assert shell.poll() is None and time.monotonic() - began < 60, output.decode()
        if select.select([shell.stdout], [], [], 0.2)[0]:
            output += os.read(shell.stdout.fileno(), 4096)
    yield shell
    if shell.poll() is None:
        shell.stdin.close()
        shell.wait(timeout=60)


def stop_holder(shell: subprocess.Popen[bytes]) -> None:
    # End of input: the Shell closes its connection and H2 the database, as the holder did.
    assert shell.stdin is not None
    shell.stdin.close()
    assert shell.wait(timeout=60) == 0


def run(project: Path, home: Path, *args: str, engine: str = "cold") -> str:
    began = time.monotonic()
    done = dbt(project, home, *args, LAKEHOUSE_ENGINE=engine)
    text = output_text(done.stdout + done.stderr)
    print(f"\ndbt {' '.join(args)}: exit {done.returncode} in {time.monotonic() - began:.0f}s")
    assert done.returncode == 0, text[-3000:]
    return text


def catalog_rows(database: Path) -> dict[str, str | None]:
    with sqlite3.connect(database) as con:
        rows = con.execute("SELECT table_name, iceberg_type FROM iceberg_tables").fetchall()
    return dict(rows)


def arrow_rows(table: Any, query: str) -> list[tuple[Any, ...]]:
    import duckdb

    con = duckdb.connect()
    con.register("t", table)
    return con.execute(query).fetchall()


def test_h2_warehouse_moves_to_sqlite_and_pyiceberg_reads_and_writes_it(
    project: Path, engine_home: Path, h2_holder: subprocess.Popen[bytes]
) -> None:
    from dbt.adapters.lakehouse import open_catalog

    catalog_dir = project / "warehouse" / "_catalog"
    run(
        project,
        engine_home,
        "build",
        "--target",
        "h2",
        "--resource-type",
        "seed",
        "--resource-type",
        "model",
    )
    stop_holder(h2_holder)
    assert (catalog_dir / "iceberg.mv.db").is_file()
    assert not (catalog_dir / "iceberg.db").exists()

    # The first command on the embedded lakehouse moves the catalog over, in one line. It
    # starts a warm engine, which the last command attaches to (one JVM start fewer).
    text = run(project, engine_home, "run", "-s", "customers", engine="warm")
    moved = [line for line in text.splitlines() if "from H2 to SQLite" in line]
    assert len(moved) == 1, text[-3000:]
    assert "5 tables and 3 views" in moved[0] and "iceberg-h2-backup.mv.db" in moved[0]
    assert not (catalog_dir / "iceberg.mv.db").exists()
    assert (catalog_dir / "iceberg-h2-backup.mv.db").is_file()
    kinds = catalog_rows(catalog_dir / "iceberg.db")
    assert kinds == {**dict.fromkeys(TABLES, "TABLE"), **dict.fromkeys(VIEWS, "VIEW")}

    # pyiceberg, without a JVM: tables are tables, the Spark-written views are not.
    began = time.monotonic()
    catalog = open_catalog(project, profiles_dir=project)
    opened = time.monotonic() - began  # pyiceberg's and dbt's profile imports, mostly
    assert {name for _, name in catalog.list_tables("jaffle")} == TABLES
    for view in VIEWS:
        assert not catalog.table_exists(("jaffle", view))
    began = time.monotonic()
    customers = catalog.load_table("jaffle.customers").scan().to_arrow()
    got = arrow_rows(
        customers,
        "select customer_id, first_name, last_name, order_count, "
        "round(cast(lifetime_value as double), 2) from t order by 1",
    )
    read = time.monotonic() - began
    import duckdb

    expected = duckdb.sql(CUSTOMERS_FROM_CSV.format(seeds=project / "seeds")).fetchall()
    print(f"open_catalog {opened:.2f}s; table -> Arrow -> DuckDB: {len(got)} rows in {read:.2f}s")
    assert got == [tuple(row) for row in expected] and len(got) == 10

    # A row pyiceberg appends is read by the next dbt command.
    raw = catalog.load_table("jaffle.raw_customers")
    row = raw.scan().to_arrow().slice(0, 1).to_pylist()[0]
    row.update(id=11, first_name="Ada", last_name="L.", note="added by pyiceberg")
    import pyarrow as pa

    raw.append(pa.Table.from_pylist([row], schema=raw.scan().to_arrow().schema))
    run(project, engine_home, "run", "-s", "customers", engine="warm")
    customers = open_catalog(project, profiles_dir=project).load_table("jaffle.customers")
    rows = arrow_rows(
        customers.scan().to_arrow(),
        "select customer_id, first_name, order_count from t where customer_id = 11",
    )
    assert rows == [(11, "Ada", 0)]
