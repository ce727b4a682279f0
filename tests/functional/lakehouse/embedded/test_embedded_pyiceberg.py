"""The embedded lakehouse as other tools see it: one SQLite catalog file (docs/embedded.md).

One project, the sample (examples/jaffle_lakehouse), built step by step:
1. on the embedded lakehouse: every table and view is a row of the SQLite catalog, a view
   marked as one;
2. read without a JVM: `open_catalog()` (pyiceberg's SqlCatalog) -> Arrow -> DuckDB, with the
   exact rows DuckDB computes from the sample's CSV files itself; the staging views are views
   to pyiceberg, not tables;
3. a row pyiceberg appends to a seed's table is read by the next `dbt run`.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from functional.lakehouse.shared.dbt_output import output_text
from functional.lakehouse.shared.warm import dbt

pytestmark = pytest.mark.only_profile("local")

SAMPLE = Path(__file__).resolve().parents[4] / "examples" / "jaffle_lakehouse"
SPARK = "      spark: {master: 'local[1]', driver_memory: 1g}\n"
# A ';' in the folder is taken as it is: the SQLite driver's URL options start at '?' alone.
WAREHOUSE = "ware;house"
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


def write_profiles(project: Path) -> None:
    warehouse = project / WAREHOUSE
    (project / "profiles.yml").write_text(
        "jaffle_lakehouse:\n  target: dev\n  outputs:\n"
        f"    dev:\n      type: lakehouse\n      schema: jaffle\n      threads: 2\n"
        f"      warehouse: {warehouse}\n{SPARK}"
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("embedded-pyiceberg") / "jaffle"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("target", "logs", "*_warehouse"))
    write_profiles(folder)
    return folder


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


def test_pyiceberg_reads_and_writes_what_dbt_built(project: Path, engine_home: Path) -> None:
    from dbt.adapters.lakehouse import open_catalog

    # A warm engine, which the last command attaches to (one JVM start fewer).
    build = ("build", "--resource-type", "seed", "--resource-type", "model")
    run(project, engine_home, *build, engine="warm")
    kinds = catalog_rows(project / WAREHOUSE / "_catalog" / "iceberg.db")
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
