#!/usr/bin/env bash
# Installs the dbt-lakehouse runtime, idempotently (README command 1 runs it):
#   Java, only when none of the engine line's is found (Debian/Ubuntu: apt-get, which needs
#   root: said before it asks); a virtualenv in .venv with dbt-lakehouse and its dependencies;
#   the jars the embedded lakehouse loads (the Iceberg Spark runtime and SQLite's driver, ~60 MB,
#   from Maven Central, sha256-checked) into ~/.cache/dbt-lakehouse (LAKEHOUSE_CACHE_DIR moves it).
# Nothing for the tests: scripts/install-tests.sh adds the test tools, servers and emulators.
# A depot's other jars (S3, ADLS, GCS, PostgreSQL) and Comet's are fetched when a session first
# needs them, or all ahead by `dbt-lakehouse install`.
# LAKEHOUSE_SPARK_LINE picks the engine line (docs/engine-lines.md): 4.1, the default (PySpark
# 4.1, Scala 2.13, Java 17+), or 3.5; its jars follow the installed PySpark.
# LAKEHOUSE_DBT_LINE picks dbt-core (docs/dbt-versions.md): 1.12, the default, 1.13 or 1.11.
# LAKEHOUSE_EXTRAS adds the package's extras to the virtualenv (install-tests.sh: dev).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${LAKEHOUSE_VENV:-.venv}
EXTRAS=${LAKEHOUSE_EXTRAS:-}
SPARK_LINE=${LAKEHOUSE_SPARK_LINE:-4.1}
case "$SPARK_LINE" in
  3.5) JAVA_MIN=11 ;;
  4.1) JAVA_MIN=17 ;;
  *) echo "LAKEHOUSE_SPARK_LINE=$SPARK_LINE: the engine lines are 4.1 (the default) and 3.5" >&2; exit 2 ;;
esac
DBT_LINE=${LAKEHOUSE_DBT_LINE:-1.12}
# The newest dbt-core 1.12 and 1.13 that install from the package registries alone (below);
# 1.13 is in beta: 1.13.0b1 was its newest release on PyPI on 2026-12-02.
DBT_CORE_112=1.12.6
DBT_CORE_113=1.13.0b1
# The installer of the virtualenv's packages (below), from PyPI.
UV_VERSION=0.9.30
case "$DBT_LINE" in
  1.11) DBT_CORE=1.11 ;;
  1.12) DBT_CORE=$DBT_CORE_112 ;;
  1.13) DBT_CORE=$DBT_CORE_113 ;;
  *) echo "LAKEHOUSE_DBT_LINE=$DBT_LINE: the dbt lines are 1.12 (the default), 1.13 and 1.11" >&2; exit 2 ;;
esac
step_start=$SECONDS
step_done() { echo "    ($(( SECONDS - step_start )) s)"; step_start=$SECONDS; }

# Spark runs on the JVM: the java that pyspark starts (JAVA_HOME's, else the PATH's).
java_major() {
  local java=java
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; fi
  command -v "$java" >/dev/null 2>&1 || { echo 0; return; }
  # `openjdk version "17.0.15"`, or "1.8.0_392" for Java 8.
  "$java" -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]) + 0; exit }'
}
if [ "$(java_major)" -lt "$JAVA_MIN" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
      SUDO="sudo"
      echo "==> Java $JAVA_MIN+ is missing (Spark $SPARK_LINE runs on it): installing openjdk-17-jre-headless"
      echo "    with apt-get needs root, so sudo may now ask for your password"
      echo "    (or install a JDK $JAVA_MIN+ yourself, set JAVA_HOME, and re-run)."
    else
      echo "==> Java $JAVA_MIN+ is missing (Spark $SPARK_LINE runs on it): installing openjdk-17-jre-headless (apt-get)"
    fi
    $SUDO apt-get update -qq
    log=$(mktemp)
    if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless \
      >"$log" 2>&1; then
      cat "$log" >&2
      exit 1
    fi
    # apt's own lines say what it fetched and what it takes on disk.
    grep -E "^(Need to get|After this operation)" "$log" | sed 's/^/    /' || true
    rm -f "$log"
    step_done
  else
    echo "Java $JAVA_MIN or newer is required (Spark $SPARK_LINE runs on it): install one and re-run." >&2
    exit 1
  fi
fi

# A second run installs nothing: the stamp names what this virtualenv was installed for (the
# lines, the extras, pyproject.toml's dependencies). The install is editable, so a change to the
# code needs none; a change to the dependencies changes the stamp. Deleting the stamp file
# forces a reinstall.
# 1.13's stamp names its pinned release, so moving the pin (the beta, then 1.13.0 and on)
# reinstalls; 1.11 and 1.12 keep the stamp their virtualenvs already have.
stamp_key() {
  local dbt=$DBT_LINE
  [ "$DBT_LINE" = 1.13 ] && dbt="$DBT_LINE($DBT_CORE)"
  echo "spark=$SPARK_LINE dbt=$dbt extras=$1 $(sha256sum pyproject.toml | cut -c1-16)"
}
STAMP="$VENV/.dbt-lakehouse-installed"
installed_for() { [ -f "$STAMP" ] && grep -qxF "$(stamp_key "$1")" "$STAMP"; }
if installed_for "$EXTRAS" || { [ -z "$EXTRAS" ] && installed_for dev; }; then
  echo "==> $VENV is installed (Spark $SPARK_LINE, dbt-core $DBT_LINE${EXTRAS:+, extras $EXTRAS}): nothing to do"
else
  if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  TARGET="."
  [ -n "$EXTRAS" ] && TARGET=".[$EXTRAS]"
  echo "==> installing dbt-lakehouse${EXTRAS:+[$EXTRAS]} into $VENV (Spark $SPARK_LINE, dbt-core $DBT_LINE) from PyPI:"
  if [ -z "$EXTRAS" ]; then
    echo "    ~80 packages, ~1.2 GB installed, PySpark (its jars) the most; uv's cache serves what it has"
  else
    echo "    with the $EXTRAS extras: ~2 GB installed, PySpark (its jars) the most; uv's cache serves what it has"
  fi
  # uv, one pinned wheel installed by the virtualenv's own pip, installs the rest: the same
  # packages pip resolves, downloaded and unpacked in parallel into its cache (~/.cache/uv),
  # PySpark's sdist built once there; byte-compiled as pip does. A third of pip's time or less
  # (docs/install.md).
  # It trusts the system's CA store, as pip does with the system's bundle, and takes pip's index
  # and find-links settings from the environment (pip's config files it does not read).
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
  [ -n "${PIP_INDEX_URL:-}" ] && export UV_DEFAULT_INDEX="${UV_DEFAULT_INDEX:-$PIP_INDEX_URL}"
  [ -n "${PIP_FIND_LINKS:-}" ] && export UV_FIND_LINKS="${UV_FIND_LINKS:-$PIP_FIND_LINKS}"
  PIP=("$VENV/bin/uv" pip install -q --native-tls --compile-bytecode --python "$VENV/bin/python")
  if [ "$DBT_LINE" = 1.11 ]; then
    "${PIP[@]}" -e "$TARGET" "pyspark==$SPARK_LINE.*" "dbt-core==1.11.*"
  else
    # dbt-core 1.12.1 and later (1.13 too) require dbt-core-experimental-parser>=2.0.0b1, whose
    # releases are sdists that download a binary from outside the package registries when
    # built. 1.12.0 takes 2.0.0a4, which PyPI has as wheels: everything resolves with it (the
    # requirements the newer release added among it: 1.12.x's metricflow and
    # opentelemetry-api, 1.13's dbt-state, all wheels on PyPI), then dbt-core alone moves to
    # the line's newest release (--no-deps). dbt runs that parser only behind --use-v2-parser
    # (off by default), so `pip check` names it and nothing else does.
    ADDED=("metricflow>=0.213.0,<1.0" "opentelemetry-api>=1.26,<2.0")
    # dbt-state: the plugin of dbt's paid state service, loaded only with --manage-state.
    [ "$DBT_LINE" = 1.13 ] && ADDED+=("dbt-state>=2.18,<3.0")
    "${PIP[@]}" -e "$TARGET" "pyspark==$SPARK_LINE.*" \
      "dbt-core==1.12.0" "dbt-core-experimental-parser==2.0.0a4" "${ADDED[@]}"
    "${PIP[@]}" --no-deps "dbt-core==$DBT_CORE"
  fi
  # dbt-core before 1.13 loads every installed plugin (a dbt_* module) with no opt-in, so a
  # dbt-state left by the 1.13 line would run under 1.11 or 1.12, and on this adapter, which it
  # does not know, its warning fails every command under --warn-error (docs/dbt-versions.md).
  if [ "$DBT_LINE" != 1.13 ] && "$VENV/bin/python" -c \
    'import importlib.util, sys; sys.exit(importlib.util.find_spec("dbt_state") is None)'; then
    "$VENV/bin/uv" pip uninstall -q --python "$VENV/bin/python" dbt-state
  fi
  # PySpark's sdist and the wheel built from it (~1.7 GB in uv's cache) are dropped once
  # installed. An index or proxy that answers uv's revalidation with a modified response (seen
  # here) makes uv download and build them again at every install, under a new revision, and
  # keep every one: 64 GB in a day of installs filled a disk. Elsewhere dropping them costs a
  # second virtualenv of the same line one download and build (~20 s).
  "$VENV/bin/uv" cache clean -q pyspark
  # Byte-compiled now, as pip does for a wheel: an editable install otherwise compiles on first
  # import, and with PYTHONDONTWRITEBYTECODE set it would do so in every dbt command (~0.3 s each).
  "$VENV/bin/python" -m compileall -q dbt >/dev/null
  # Earlier lines of the stamp stay only where they name the same lines and dependencies (the
  # same packages with other extras): a virtualenv moved to another dbt line (CI's second one
  # did, from 1.11 to 1.13) no longer counts as installed for the line it had.
  key=$(stamp_key "$EXTRAS")
  { [ -f "$STAMP" ] && awk -v key="$key" 'BEGIN { split(key, k, " ") }
      $1 == k[1] && $2 == k[2] && $4 == k[4]' "$STAMP"; echo "$key"; } | sort -u >"$STAMP.new"
  mv "$STAMP.new" "$STAMP"
  echo "    $VENV: $(du -sh "$VENV" | cut -f1)"
  step_done
fi

echo "==> the embedded lakehouse's jars (dbt-lakehouse install --embedded):"
# Both from Maven Central (SQLite's driver has no Debian fallback: docs/embedded.md); a
# failure names the jar and the fix.
"$VENV/bin/dbt-lakehouse" install --embedded
step_done
