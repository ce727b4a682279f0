"""Stacked views checkpointed within a run (checkpoints/): the views whose inlined plans pass the
threshold, or whose `checkpoint` config asks, are read through checkpoints by the run's later
statements, and the views above them through their queries over the checkpoints; those
statements see the rows the views hold, and the stand-ins go when the run ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.engine.runtime import compute_once, is_connect

# The statements' rewrite and the temporary views are the session's, whatever catalog holds the
# views: `local`, and `connect`, where the checkpoint is the server's (Spark 3.5's Connect has
# none: the rows are persisted there instead, engine/runtime.py compute_once).
pytestmark = pytest.mark.only_profile("local", "connect")

SEED_CSV = "id,v\n1,10\n2,20\n3,30\n"
LEVELS = 6
# v1 is checkpointed by its config (2 scans); v5 is not, by its config (16 scans, enough for
# `auto`); v6 is, its config unset (`auto`): its plan would scan 32 relations. v2 to v5 read
# v1's checkpoint.
CONFIGS = {1: "{{ config(checkpoint=true) }}\n", 5: "{{ config(checkpoint=false) }}\n"}
# `wide` scans the seed 8 times, too few for `auto` alone, but two of the run's nodes read it
# (the table t_wide and a test): `auto` checkpoints it for them.
WIDE = " union all ".join(f"select id, v + {n} as v from {{{{ ref('base') }}}}" for n in range(8))
EXPECTED_CHECKPOINTS = {"v1": 2, "v6": 32, "wide": 8}
WIDE_ROWS = (24, sum(v + n for v in (10, 20, 30) for n in range(8)))


def _level(n: int) -> str:
    below = f"v{n - 1}"
    return (
        CONFIGS.get(n, "")
        + f"select id, v from {{{{ ref('{below}') }}}}\n"
        + f"union all\nselect id, v + {n} as v from {{{{ ref('{below}') }}}}\n"
    )


def _expected_rows(level: int) -> tuple[int, int]:
    rows = [v for _, v in (line.split(",") for line in SEED_CSV.split()[1:])]
    values = [int(v) for v in rows]
    for n in range(1, level + 1):
        values = values + [v + n for v in values]
    return len(values), sum(values)


def _checkpoints(project_root: Path) -> dict[str, dict]:
    """view -> its response's `checkpoint` field, from the last command's run_results.json."""
    results = json.loads((project_root / "target" / "run_results.json").read_text())
    return {
        r["unique_id"].rsplit(".", 1)[-1]: r["adapter_response"]["checkpoint"]
        for r in results["results"]
        if (r.get("adapter_response") or {}).get("checkpoint")
    }


def _wide_rows(project) -> tuple:
    wide = f"{project.database}.{project.test_schema}.t_wide"
    return tuple(project.run_sql(f"select n, total from {wide}", fetch="one"))


def _exists(view: str) -> bool:
    """Whether the session holds the temporary view: asked of the catalog, which answers now (a
    Connect client's `table()` would be analysed only by an action)."""
    return bool(ENGINE.active.catalog.tableExists(view))


class TestViewCheckpoints:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"base.csv": SEED_CSV}

    @pytest.fixture(scope="class")
    def models(self):
        found = {"v0.sql": "select id, v from {{ ref('base') }}\n"}
        found.update({f"v{n}.sql": _level(n) for n in range(1, LEVELS + 1)})
        for table, level in (("t_total", LEVELS), ("t_mid", LEVELS - 1)):
            found[f"{table}.sql"] = (
                "{{ config(materialized='table') }}\n"
                f"select count(*) as n, sum(v) as total from {{{{ ref('v{level}') }}}}\n"
            )
        found["wide.sql"] = WIDE + "\n"
        found["t_wide.sql"] = (
            "{{ config(materialized='table') }}\n"
            "select count(*) as n, sum(v) as total from {{ ref('wide') }}\n"
        )
        found["schema.yml"] = "models:\n" + "".join(
            f"  - name: {view}\n    columns:\n      - name: id\n        data_tests: [not_null]\n"
            for view in (f"v{LEVELS}", "wide")
        )
        return found

    def test_later_statements_read_checkpoints_with_the_views_rows(self, project, logs_dir):
        results = run_dbt(["build"])
        assert all(r.status in ("success", "pass") for r in results), results
        made = _checkpoints(Path(project.project_root))
        assert {view: c["scans"] for view, c in made.items()} == EXPECTED_CHECKPOINTS
        log = (Path(logs_dir) / "dbt.log").read_text()
        readers = ("model.test.t_total", "model.test.t_mid", f"test.test.not_null_v{LEVELS}_id",
                   "model.test.t_wide", "test.test.not_null_wide_id")  # fmt: skip
        for reader in readers:
            assert any(
                reader in line and "reads this run's checkpoints" in line
                for line in log.splitlines()
            ), f"{reader} did not read a checkpoint"
        for table, level in (("t_total", LEVELS), ("t_mid", LEVELS - 1)):
            relation = f"{project.database}.{project.test_schema}.{table}"
            row = project.run_sql(f"select n, total from {relation}", fetch="one")
            assert tuple(row) == _expected_rows(level), table
        assert _wide_rows(project) == WIDE_ROWS
        # Released at the run's end: the session (this process's) holds none of them, though it
        # would show one.
        ENGINE.active.sql("select 1 as probe").createOrReplaceTempView("lakehouse_probe")
        assert _exists("lakehouse_probe") and ENGINE.active.catalog.dropTempView("lakehouse_probe")
        assert not [c["temporary_view"] for c in made.values() if _exists(c["temporary_view"])]

        if is_connect(ENGINE.active):
            return  # what Connect changes is above: the rows computed once, and their release

        # A rerun: reuse keeps every view as it is, and a reused view is checkpointed as a built
        # one is.
        results = run_dbt(["build"])
        assert all(r.status in ("success", "pass", "reused") for r in results), results
        made = _checkpoints(Path(project.project_root))
        assert {view: c["scans"] for view, c in made.items()} == EXPECTED_CHECKPOINTS

        assert _wide_rows(project) == WIDE_ROWS

        # Rebuilt alone, no view built in the run, so none checkpointed: the same rows.
        run_dbt(["run", "-s", "t_total", "t_wide", "--full-refresh"])
        assert _checkpoints(Path(project.project_root)) == {}
        total = f"{project.database}.{project.test_schema}.t_total"
        row = project.run_sql(f"select n, total from {total}", fetch="one")
        assert tuple(row) == _expected_rows(LEVELS)
        assert _wide_rows(project) == WIDE_ROWS

    def test_a_checkpoint_keeps_its_rows_in_at_most_the_partitions_asked(self, project):
        """A view unioning many scans has a partition per scan; its checkpoint keeps the same
        rows in no more partitions than asked (a shuffle's count, checkpoints/adapter.py)."""
        spark = ENGINE.active
        if is_connect(spark):
            pytest.skip("the partitions of a Connect DataFrame are the server's")
        parts = " union all ".join(f"select {n} as id from range(1)" for n in range(24))
        spark.sql(parts).createOrReplaceTempView("lakehouse_partitions_probe")
        try:
            assert spark.table("lakehouse_partitions_probe").rdd.getNumPartitions() >= 24
            compute_once(spark, "lakehouse_partitions_probe", 4)
            kept = spark.table("lakehouse_partitions_probe")
            assert kept.rdd.getNumPartitions() == 4
            assert sorted(r.id for r in kept.collect()) == list(range(24))
        finally:
            spark.catalog.dropTempView("lakehouse_partitions_probe")
