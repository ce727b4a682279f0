#!/usr/bin/env bash
# Installs everything dbt-lakehouse needs on a fresh machine, idempotently:
#   a JDK 17 (Debian/Ubuntu, when missing), a virtualenv in .venv with the package and its test
#   tools, and the jars from Maven Central (Iceberg runtime and AWS bundle, hadoop-aws + the AWS
#   SDK v1 bundle, H2; ~400 MB; each set falls back to PyPI or Debian where Maven Central cannot
#   be reached), sha256-checked, cached under ~/.cache/dbt-lakehouse; the tests' S3Proxy server
#   jar (Maven Central, 40 MB), checksummed, into the same cache.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${LAKEHOUSE_VENV:-.venv}

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

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
echo "==> installing dbt-lakehouse and its test tools into $VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[dev]"

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

echo "==> fetching the test servers' jars (S3Proxy, from Maven Central) into the cache"
VENV_PYTHON="$(cd "$VENV" && pwd)/bin/python"
(cd tests && "$VENV_PYTHON" -m functional.infra.servers)
