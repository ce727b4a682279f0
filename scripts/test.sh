#!/usr/bin/env bash
# README command 2: install what the tests need, lint, then run the unit and functional suites.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
# The default lines (docs/dbt-versions.md, docs/engine-lines.md): Spark 4.1 and dbt-core 1.12.
bash scripts/install.sh
VENV=${LAKEHOUSE_VENV:-.venv}
"$VENV/bin/ruff" check dbt tests
"$VENV/bin/ruff" format --check dbt tests
"$VENV/bin/mypy" dbt
# The docs site builds strictly (docs/tests.md): a broken link or anchor, or a page left out of the
# nav, fails. Not --quiet: it hides the warnings strict mode counts (mkdocs#4126), so nothing fails.
"$VENV/bin/mkdocs" build --strict --site-dir "${TMPDIR:-/tmp}/dbt-lakehouse-site"
if [ "$#" -gt 0 ]; then
  exec "$VENV/bin/pytest" "$@"
fi
"$VENV/bin/pytest" tests/unit -q
# The full functional suite on the default lines, on both storage profiles: the embedded
# lakehouse, then S3 (moto) + the Iceberg REST catalog (tests/functional/infra), each server
# started by the tests on 127.0.0.1.
"$VENV/bin/pytest" tests/functional -q -n 2 --dist loadfile --durations=15 --profile local
"$VENV/bin/pytest" tests/functional -q -n 2 --dist loadfile --durations=15 --profile s3_rest
# The cluster profile, on a subset (docs/tests.md): one process, since each starts a cluster.
# What differs there is where tasks run (executors in other JVMs), not SQL semantics.
# The killed-merge test stays on local, s3_rest and connect: what it checks is the driver's
# commit, the same whatever runs the tasks, and on two one-core executors its 2M-row table is
# the subset's slowest.
"$VENV/bin/pytest" -q --durations=10 --profile cluster tests/functional/lakehouse/test_cluster.py \
  tests/functional/lakehouse/test_incremental_strategies.py \
  tests/functional/lakehouse/test_python_models.py \
  --deselect tests/functional/lakehouse/test_incremental_strategies.py::TestKilledMerge
# The other lines, Spark 3.5 with dbt-core 1.11, in a second virtualenv (docs/tests.md): the
# unit tests, and functional subsets.
OTHER=.venv-spark35
LAKEHOUSE_VENV=$OTHER LAKEHOUSE_SPARK_LINE=3.5 LAKEHOUSE_DBT_LINE=1.11 bash scripts/install.sh
"$OTHER/bin/pytest" tests/unit -q
# Spark Connect, on a subset (docs/tests.md): each test process starts its own Connect server,
# built on Spark 3.5's Connect service. The adapter's own tests of each feature there; dbt's
# basic suite runs on local, s3_rest and Spark 3.5, its python_model suite on local.
"$OTHER/bin/pytest" -q -n 2 --dist loadfile --durations=10 --profile connect \
  tests/functional/lakehouse/test_connect.py tests/functional/lakehouse/test_cancel.py \
  tests/functional/lakehouse/test_docs_stats.py \
  tests/functional/lakehouse/test_metadata_freshness.py \
  tests/functional/lakehouse/test_incremental_strategies.py \
  tests/functional/lakehouse/test_seeds.py tests/functional/lakehouse/test_snapshots.py \
  tests/functional/lakehouse/test_python_models.py tests/functional/adapter/test_dbt_clone.py
# Spark 3.5 and dbt-core 1.11 with the local profile, on a subset: what a line changes is Spark
# SQL (ANSI mode, functions, error texts) and what the adapter reads through py4j. dbt's basic
# adapter suite, every incremental strategy, snapshots, seeds, errors as dbt shows them,
# safe_cast without ANSI mode, and the sample with every feature (audited run, Delta mirror,
# Python model, time travel, upstream changes) warm and cold under --warn-error. The
# killed-merge test stays on the default line: it checks Iceberg's commit under a killed
# process (iceberg-core, the same release on both lines), and is the subset's slowest.
"$OTHER/bin/pytest" -q -n 2 --dist loadfile --durations=10 --profile local \
  tests/functional/adapter/test_basic.py tests/functional/lakehouse/test_incremental_strategies.py \
  tests/functional/lakehouse/test_snapshots.py tests/functional/lakehouse/test_seeds.py \
  tests/functional/lakehouse/test_engine_errors.py tests/functional/lakehouse/test_warm_rows.py \
  tests/functional/adapter/test_utils.py::TestSafeCastToNumbers \
  --deselect tests/functional/lakehouse/test_incremental_strategies.py::TestKilledMerge
