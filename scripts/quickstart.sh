#!/usr/bin/env bash
# README command 1: install the runtime (scripts/install.sh: Java if missing, .venv, the
# embedded lakehouse's jars; nothing for the tests), then build the sample project on the
# embedded lakehouse.
set -euo pipefail
cd "$(dirname "$0")/.."
begin=$SECONDS
bash scripts/install.sh
installed=$SECONDS
VENV=${LAKEHOUSE_VENV:-.venv}
cd examples/jaffle_lakehouse
echo "==> dbt build (examples/jaffle_lakehouse, embedded lakehouse in ./lakehouse_warehouse)"
"../../$VENV/bin/dbt" build --profiles-dir .
echo "==> done in $(( SECONDS - begin )) s: install $(( installed - begin )) s, dbt build $(( SECONDS - installed )) s"
echo "==> a warm Spark engine stays up for 15 idle minutes, so the next dbt command here starts"
echo "    fast (docs/warm-engine.md): \`$VENV/bin/dbt-lakehouse engine status\` shows it, \`... engine stop\` stops it"
