#!/usr/bin/env bash
# README command 2: install what the tests need, lint, then run the unit and functional suites.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
# The default lines (docs/dbt-versions.md, docs/engine-lines.md): Spark 4.1 and dbt-core 1.12.
bash scripts/install-tests.sh
VENV=${LAKEHOUSE_VENV:-.venv}
OTHER=.venv-spark35
if [ "$#" -eq 0 ]; then
  # The other line's virtualenv (its tests are at the end) installs in the background from here:
  # lint, mypy, the docs and the unit tests keep one core busy and the install (the package
  # cache's files, one short JVM for its class-data archive) takes the other, about two minutes.
  # Only after this line's install, so that the two never run apt-get at once. Its own process
  # group, stopped if the run ends first; its output is shown, and its failure fails the run,
  # before the line's tests.
  OTHER_LOG=$(mktemp)
  setsid env LAKEHOUSE_VENV=$OTHER LAKEHOUSE_SPARK_LINE=3.5 LAKEHOUSE_DBT_LINE=1.13 \
    bash scripts/install-tests.sh >"$OTHER_LOG" 2>&1 &
  OTHER_INSTALL=$!
  trap 'kill -- -"$OTHER_INSTALL" 2>/dev/null || true; rm -f "$OTHER_LOG"' EXIT
fi
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
# The whole functional suite on the default lines (docs/tests.md), profile by profile. Files go
# to the two workers in the order tests/conftest.py sorts them (slowest first), not by their
# number of tests (xdist's default). The
# embedded lakehouse: every feature, the community packages' own projects, catalogs.yml.
"$VENV/bin/pytest" tests/functional -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 --file-durations=15 --profile local
# S3 (moto) + the Iceberg REST catalog (tests/functional/infra), each server started by the tests
# on 127.0.0.1: what the storage and the catalog change (modules marked only_profile("local")
# do not run here).
"$VENV/bin/pytest" tests/functional -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 --file-durations=15 --profile s3_rest
# The rest goes side by side, since the cluster's run keeps only about 1.3 of the 2 cores busy
# (its driver, master, workers and executors mostly wait on one another): the cluster's subset
# in the foreground, and beside it Spark Connect's subset, then the other lines' tests. Measured
# on 2026-12-03: 7:56 for all three, against 9:45 one after the other. What ran beside is shown
# after the cluster's output; any of them failing fails the run.
install_failed=0
wait "$OTHER_INSTALL" || install_failed=1
cat "$OTHER_LOG"
if [ "$install_failed" -ne 0 ]; then
  echo "installing the Spark 3.5 line into $OTHER failed: its output is above" >&2
  exit 1
fi
beside_the_cluster() {
  # Spark Connect (docs/tests.md): each test process starts its own Connect server. The
  # adapter's own Connect tests (a seed, table, view and merge model built, rebuilt and
  # documented), cancelling, and one CDC merge, whose rows Connect computes once in another way
  # (runtime.compute_once), as are stacked views' checkpoints; every strategy's rows run on
  # local, the killed merge on local and s3_rest (under Connect the server may finish a
  # statement after its dbt process is killed).
  "$VENV/bin/pytest" -q -n 2 --dist loadfile --no-loadscope-reorder --durations=10 \
    --profile connect tests/functional/lakehouse/engine/test_connect.py \
    tests/functional/lakehouse/engine/test_connect_reads.py \
    tests/functional/lakehouse/engine/test_connect_conf.py \
    tests/functional/lakehouse/engine/test_cancel.py \
    tests/functional/lakehouse/models/test_incremental_strategies.py::TestCdcMerge \
    tests/functional/lakehouse/checkpoints/test_view_checkpoints.py
  # The other lines, Spark 3.5 with dbt-core 1.13 (the next dbt line, in beta;
  # docs/dbt-versions.md), in a second virtualenv (docs/engine-lines.md): a named subset of what
  # differs by line. Spark Connect 3.5 (another server and another way of computing rows once: a
  # merge's, stacked views' checkpoints; one test process, one server, about one core busy) runs
  # beside the rest of the line: the unit tests, first run, rerun and full refresh leaving the
  # same rows (the refusals before writing are the adapter's own checks, run on the default
  # line), S3 through Hadoop 3.3's s3a on the AWS SDK v1 (its landing and its error texts), and
  # the feature project under --warn-error (dbt 1.13's warnings). One after the other, they ran
  # 5:53 past the cluster's run (docs/tests.md), the Connect run alone keeping about one core
  # busy. Connect 3.5 reads rows the one way 3.5 has, so test_connect_reads.py (the
  # one-round-trip read against it) runs on 4.1 only.
  local connect connect_failed=0 rest_failed=0
  "$OTHER/bin/pytest" -q --durations=10 --profile connect \
    tests/functional/lakehouse/engine/test_connect.py \
    tests/functional/lakehouse/engine/test_connect_conf.py \
    tests/functional/lakehouse/checkpoints/test_view_checkpoints.py >"$CONNECT35_LOG" 2>&1 &
  connect=$!
  { "$OTHER/bin/pytest" tests/unit -q &&
    "$OTHER/bin/pytest" -q -n 2 --dist loadfile --no-loadscope-reorder --durations=10 \
      --profile s3_rest \
      tests/functional/lakehouse/models/test_first_build.py::TestFirstRunRerunFullRefreshAgree \
      tests/functional/lakehouse/profile/test_s3_rest_landing.py \
      tests/functional/lakehouse/profile/test_s3_faults.py &&
    "$OTHER/bin/pytest" -q --profile local \
      tests/functional/lakehouse/engine/test_warm_rows.py::test_the_feature_project_builds_under_warn_error_on_this_dbt_line
  } || rest_failed=1
  wait "$connect" || connect_failed=1
  echo "--- the Spark 3.5 line's Spark Connect run, beside its other tests"
  cat "$CONNECT35_LOG"
  [ "$rest_failed" -eq 0 ] && [ "$connect_failed" -eq 0 ]
}
BESIDE_LOG=$(mktemp)
CONNECT35_LOG=$(mktemp)
export VENV OTHER CONNECT35_LOG
# Its own process group, stopped if the run ends first (the cluster's tests failing).
setsid -w bash -c "set -euo pipefail; $(declare -f beside_the_cluster); beside_the_cluster" \
  >"$BESIDE_LOG" 2>&1 &
BESIDE=$!
trap 'kill -- -"$OTHER_INSTALL" -"$BESIDE" 2>/dev/null || true
  rm -f "$OTHER_LOG" "$BESIDE_LOG" "$CONNECT35_LOG"' EXIT
# The cluster: one process, since each starts a cluster. What differs there is where tasks run
# (executors in other JVMs), not SQL semantics: the cluster's own tests (Comet's plugin on the
# executors too), Python models, and one merge whose shuffle and commit span the executors
# (every strategy's rows run on local).
"$VENV/bin/pytest" -q --durations=10 --profile cluster \
  tests/functional/lakehouse/engine/test_cluster.py \
  tests/functional/lakehouse/models/test_incremental_strategies.py::TestCdcMerge \
  tests/functional/lakehouse/models/test_python_models.py
beside_failed=0
wait "$BESIDE" || beside_failed=1
echo "--- run beside the cluster's: Spark Connect, then the Spark 3.5 line"
cat "$BESIDE_LOG"
if [ "$beside_failed" -ne 0 ]; then
  echo "a run beside the cluster's failed (Spark Connect or the Spark 3.5 line): above" >&2
  exit 1
fi
