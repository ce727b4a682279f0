#!/usr/bin/env bash
# README command 1: install everything, then build the sample project on the embedded lakehouse.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
VENV=${LAKEHOUSE_VENV:-.venv}
cd examples/jaffle_lakehouse
echo "==> dbt build (examples/jaffle_lakehouse, embedded lakehouse in ./lakehouse_warehouse)"
start=$(date +%s)
"../../$VENV/bin/dbt" build --profiles-dir .
echo "==> dbt build finished in $(( $(date +%s) - start ))s"
echo "==> a warm Spark engine stays up for 15 idle minutes, so the next dbt command here starts"
echo "    fast (docs/warm-engine.md): \`$VENV/bin/dbt-lakehouse engine status\` shows it, \`... engine stop\` stops it"
