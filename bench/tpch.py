"""TPC-H as a dbt project: 8 tables loaded from Parquet and the 22 queries as table models.

The data comes from DuckDB's `tpch` extension (PyPI `duckdb-extension-tpch`, `pip install -e
.[bench]`), generated once per scale factor into the work folder as Parquet (not timed). The
project has 8 load models (`select * from parquet.<file>`, tables) and the 22 queries, from the
same extension, as table models reading them through `ref()`. Each round runs `dbt run` cold,
in a fresh process, for dbt-lakehouse and for dbt-spark (`+file_format: iceberg`). After the
last round every query table's row count is compared with DuckDB's answer to the same query on
the same data. Goal: ours <= 0.7x the peer at SF1, every query green.

    .venv/bin/python bench/tpch.py --sf 1 --rounds 2
    .venv/bin/python bench/tpch.py --sf 0.1 --rounds 1      # quick look
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    Sample,
    Series,
    alternate,
    cold_env,
    common_args,
    dbt_command,
    iceberg_table_facts,
    ours_target,
    peer_settings,
    peer_target,
    report,
    run_timed,
    write_profiles,
)

TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]


def table_ref(tables: list[str]) -> re.Pattern[str]:
    # A table name right after FROM, JOIN or a comma of a FROM list (TPC-DS q40 has no space
    # after its comma: `,warehouse`). Column aliases that equal a table name (q9's `n_name AS
    # nation`, then `nation` in its outer SELECT/GROUP BY/ORDER BY) follow AS, SELECT or BY, so
    # they are left alone, and so is a qualified column (TPC-DS q49's `, store.item`, `store`
    # being a subquery's alias).
    return re.compile(r"(\bFROM|\bJOIN|,)(\s*)(" + "|".join(tables) + r")\b(?!\.)", re.IGNORECASE)


_TABLE_REF = table_ref(TABLES)


def duckdb_with(name: str):  # type: ignore[no-untyped-def]
    """A DuckDB connection with the extension `name` (tpch, tpcds) loaded from its PyPI wheel."""
    try:
        import importlib

        import duckdb

        module = importlib.import_module(f"duckdb_extension_{name}")
    except ImportError as exc:
        raise SystemExit(
            f"{exc.name} is missing: `pip install -e .[bench]` installs DuckDB and its {name} "
            "extension."
        ) from exc
    extension = next(Path(module.__file__).parent.glob("extensions/*/*/*"), None)
    extension = extension or next(Path(module.__file__).parent.glob("extensions/*/*"), None)
    if extension is None:
        raise SystemExit(f"duckdb-extension-{name} carries no extension file")
    connection = duckdb.connect()
    connection.execute(f"load '{extension}'")
    connection.execute("set enable_progress_bar = false")  # a bar per query would flood logs
    return connection


def duckdb_with_tpch():  # type: ignore[no-untyped-def]
    return duckdb_with("tpch")


def generate(data: Path, sf: float) -> tuple[dict[int, str], dict[int, int]]:
    """Parquet files for every table (once per scale factor), the 22 queries, and DuckDB's row
    count for each query's answer."""
    duck = duckdb_with_tpch()
    marker = data / "complete"
    if not marker.exists():
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        duck.execute(f"call dbgen(sf={sf})")
        for table in TABLES:
            duck.execute(f"copy {table} to '{data / table}.parquet' (format parquet)")
        marker.write_text(str(sf))
    else:
        for table in TABLES:
            duck.execute(f"create view {table} as select * from '{data / table}.parquet'")
    queries = dict(duck.execute("select query_nr, query from tpch_queries()").fetchall())
    counts = {n: len(duck.execute(q).fetchall()) for n, q in queries.items()}
    return queries, counts


def write_project(
    folder: Path,
    data: Path,
    queries: dict[int, str],
    peer: bool,
    tables: list[str] = TABLES,
    name: str = "tpch",
) -> Path:
    """8 load models and a table model per query (bench/tpcds_native.py: 24 and 99)."""
    pattern = table_ref(tables)
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "models" / "load").mkdir(parents=True)
    (folder / "models" / "queries").mkdir(parents=True)
    models: dict = {"+materialized": "table"}
    if peer:
        models["+file_format"] = "iceberg"
    (folder / "dbt_project.yml").write_text(
        yaml.safe_dump(
            {
                "name": name,
                "version": "1.0",
                "config-version": 2,
                "profile": name,
                "models": {name: models},
            }
        )
    )
    for table in tables:
        (folder / "models" / "load" / f"{table}.sql").write_text(
            f"select * from parquet.`{data / table}.parquet`\n"
        )
    for number, query in queries.items():
        body = pattern.sub(lambda m: f"{m[1]}{m[2]}{{{{ ref('{m[3].lower()}') }}}}", query)
        (folder / "models" / "queries" / f"q{number:02d}.sql").write_text(
            body.strip().rstrip(";") + "\n"
        )
    return folder


def node_times(project: Path, tables: list[str] = TABLES) -> dict[tuple[str, str], float]:
    """{(folder, model): execution seconds} from a project's last run."""
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    return {
        (
            "load"
            if ".load." in r["unique_id"] or r["unique_id"].split(".")[-1] in tables
            else "queries",
            r["unique_id"].split(".")[-1],
        ): r["execution_time"]
        for r in results
    }


def main() -> None:
    parser = common_args(__doc__.splitlines()[0], rounds=2)
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default %(default)s)")
    parser.add_argument(
        "--threads", type=int, default=2, help="dbt threads, both sides (default %(default)s)"
    )
    args = parser.parse_args()
    work: Path = args.work / "tpch"
    data = work / f"data-sf{args.sf:g}"
    queries, expected = generate(data, args.sf)
    ours, peer = Series("dbt-lakehouse"), Series("dbt-spark session")

    def run(side: str, round_no: int) -> Sample:
        project = write_project(work / side, data, queries, peer=side == "peer")
        if side == "peer":
            warehouse = work / "peer-warehouse"
            shutil.rmtree(warehouse, ignore_errors=True)
            warehouse.mkdir(parents=True)  # the hadoop catalog cannot list a missing folder
            write_profiles(
                project,
                "tpch",
                peer_target(
                    "tpch", warehouse, threads=args.threads, spark_defaults=args.peer_spark_defaults
                ),
            )
        else:
            write_profiles(project, "tpch", ours_target("tpch", threads=args.threads))
        return run_timed(
            dbt_command("run", project=project),
            project,
            env=cold_env(),
            log=work / f"{side}-{round_no}.log",
        )

    alternate(args.rounds, [(ours, lambda r: run("ours", r)), (peer, lambda r: run("peer", r))])
    report(
        f"TPC-H SF{args.sf:g} as a dbt project: 8 loads + 22 query models, `dbt run`, cold"
        + peer_settings(args),
        [(f"TPC-H SF{args.sf:g} dbt run (30 models)", ours, peer, "<=0.70x")],
    )
    print("\nnode times of the last round (target/run_results.json), loads apart from queries:")
    times = {side: node_times(work / side) for side in ("ours", "peer")}
    for group in ("load", "queries"):
        ours_s, peer_s = (
            sum(t for (g, _), t in times[side].items() if g == group) for side in ("ours", "peer")
        )
        print(f"  {group:8} ours {ours_s:6.1f}s  peer {peer_s:6.1f}s  ratio {ours_s / peer_s:.2f}x")
    gaps = sorted(times["ours"], key=lambda key: times["peer"][key] - times["ours"][key])
    print(
        "  most behind: "
        + ", ".join(
            f"{name} {times['ours'][(g, name)]:.1f}s vs {times['peer'][(g, name)]:.1f}s"
            for g, name in gaps[:5]
        )
    )
    print("\nrows per query table (last round) against DuckDB's answer:")
    for side in ("ours", "peer"):
        warehouse = work / ("peer-warehouse" if side == "peer" else "ours/lakehouse_warehouse")
        found = {f"q{n:02d}": iceberg_table_facts(warehouse, f"q{n:02d}")[0] for n in expected}
        wrong = [
            f"q{n:02d}: {found[f'q{n:02d}']} (want {want})"
            for n, want in expected.items()
            if found[f"q{n:02d}"] != want
        ]
        green = sum(1 for rows in found.values() if rows is not None)
        print(
            f"  {side}: {green}/22 queries built; "
            + ("row counts all match" if not wrong else "MISMATCH " + "; ".join(wrong))
        )


if __name__ == "__main__":
    main()
