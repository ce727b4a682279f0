"""Project build: the sample project's `dbt build`, cold, dbt-lakehouse vs dbt-spark.

Each round copies examples/jaffle_lakehouse twice and runs `dbt build` once per adapter in a
fresh process on an empty warehouse: seeds, views (tables for the peer, whose hadoop catalog
has no views), tables, the snapshot and every test. Goal: ours <= 0.6x the peer.

    .venv/bin/python bench/project_build.py --rounds 3
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    REPO,
    Series,
    alternate,
    common_args,
    dbt_command,
    fresh_copy,
    ours_target,
    peer_settings,
    peer_target,
    report,
    run_timed,
    write_profiles,
)

SAMPLE = REPO / "examples" / "jaffle_lakehouse"
PROFILE = "jaffle_lakehouse"


def peer_project(project: Path) -> None:
    """The same project for dbt-spark: Iceberg tables everywhere, staging views as tables."""
    settings = yaml.safe_load((project / "dbt_project.yml").read_text())
    models = settings["models"]["jaffle_lakehouse"]
    models["+file_format"] = "iceberg"
    models["staging"]["+materialized"] = "table"
    settings.setdefault("seeds", {}).setdefault("jaffle_lakehouse", {})["+file_format"] = "iceberg"
    settings["snapshots"] = {"jaffle_lakehouse": {"+file_format": "iceberg"}}
    (project / "dbt_project.yml").write_text(yaml.safe_dump(settings, sort_keys=False))


def main() -> None:
    args = common_args(__doc__.splitlines()[0]).parse_args()
    work: Path = args.work / "project_build"
    ours, peer = Series("dbt-lakehouse"), Series("dbt-spark session")

    def run_ours(round_no: int):
        project = fresh_copy(SAMPLE, work / "ours")
        write_profiles(project, PROFILE, ours_target("jaffle"))
        return run_timed(
            dbt_command("build", project=project), project, log=work / f"ours-{round_no}.log"
        )

    def run_peer(round_no: int):
        project = fresh_copy(SAMPLE, work / "peer")
        peer_project(project)
        warehouse = work / "peer-warehouse"
        shutil.rmtree(warehouse, ignore_errors=True)
        warehouse.mkdir(parents=True)  # the hadoop catalog cannot list a missing folder
        write_profiles(
            project,
            PROFILE,
            peer_target("jaffle", warehouse, spark_defaults=args.peer_spark_defaults),
        )
        return run_timed(
            dbt_command("build", project=project), project, log=work / f"peer-{round_no}.log"
        )

    alternate(args.rounds, [(ours, run_ours), (peer, run_peer)])
    report(
        f"project build: examples/jaffle_lakehouse `dbt build`, cold{peer_settings(args)}",
        [("sample project dbt build", ours, peer, "<=0.60x")],
    )


if __name__ == "__main__":
    main()
