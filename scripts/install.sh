#!/usr/bin/env bash
# Installs everything dbt-lakehouse needs on a fresh machine, idempotently:
#   Java (Debian/Ubuntu, when missing), a virtualenv in .venv with the package and its test
#   tools, and the registry-sourced jars (checksummed, cached under ~/.cache/dbt-lakehouse).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${LAKEHOUSE_VENV:-.venv}

if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "==> installing Java 17 (Spark runs on the JVM)"
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  else
    echo "Java 17 is required: install a JDK/JRE 17 and re-run." >&2
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
