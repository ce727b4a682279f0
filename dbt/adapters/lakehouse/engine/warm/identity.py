"""Which warm engine a spec may use, and what of the spec is the engine's and what the session's.

An engine is one driver JVM that many dbt commands attach to, each with its own Spark session.
What a session cannot change once the JVM runs makes up the engine's identity, so two specs
differing in it never share an engine: the launch settings (jars, driver memory and options),
the rest of SparkConf, the master, the `java` and `python` behind it, and what is JVM-wide
rather than per session: the Hadoop configuration's secrets, the glue catalog's system
properties and the environment the JVM reads credentials from (AWS's default chain). Secrets
take part through a salted digest only. The catalogs (`spark.sql.catalog.*`) and the default
catalog are set on each command's own session instead: left in the engine's SparkConf, one
profile's catalogs would be every later session's defaults.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from dbt.adapters.lakehouse.engine.jars.lines import pyspark_version
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.exceptions import EngineSetupError

# How long an engine with no command attached stays up, when the profile does not say.
DEFAULT_KEEP_WARM_MINUTES = 15.0
DEFAULT_WARM_UP_SECONDS = 60.0
WARM_UP_ENV = "LAKEHOUSE_ENGINE_WARM_UP_SECONDS"
ENGINE_ENV = "LAKEHOUSE_ENGINE"
ENGINE_MODES = ("warm", "cold")

SESSION_KEY_PREFIXES = ("spark.sql.catalog.",)
SESSION_KEYS = frozenset({"spark.sql.defaultCatalog"})

# The environment the driver JVM and its libraries read: credentials (AWS SDK default chain,
# Azure and Google SDKs), Hadoop's and Spark's own settings, the JVM's options. A command whose
# environment differs in one of them gets an engine started from its own.
ENGINE_ENV_PREFIXES = (
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "GCS_",
    "HADOOP_",
    "SPARK_",
    "JAVA_",
    "JDK_",
    "_JAVA_",
    "PYSPARK_",
    "TZ",
)
# Per connection, never part of an engine's identity; and what PySpark itself writes into the
# process's environment once a session starts (pyspark/core/context.py), which would otherwise
# send the process's next spec (catalogs.yml's catalogs, another profile) to a new engine.
_IGNORED_ENV = frozenset(
    {
        "PYSPARK_GATEWAY_PORT",
        "PYSPARK_GATEWAY_SECRET",
        "SPARK_AUTH_SOCKET_TIMEOUT",
        "SPARK_BUFFER_SIZE",
    }
)
# The JVM exits on an OutOfMemoryError instead of serving later commands in a broken state;
# its engine then stops and the next command starts a fresh one.
ENGINE_JAVA_OPTIONS = ("-XX:+ExitOnOutOfMemoryError",)


def keep_warm_minutes(
    master: str, configured: float | None, env: Mapping[str, str] | None = None
) -> float:
    """Minutes an idle engine stays up for this profile; 0 means every command starts its own
    JVM (cold). On by default for local masters; a cluster master's kept application would hold
    the cluster's executors, so it is kept warm only when asked."""
    env = os.environ if env is None else env
    mode = env.get(ENGINE_ENV, "").strip().lower()
    if mode and mode not in ENGINE_MODES:
        raise EngineSetupError(
            f"{ENGINE_ENV} must be one of {', '.join(ENGINE_MODES)}; got {env[ENGINE_ENV]!r}. "
            "`cold` starts a JVM for every dbt command; `warm` (or unset) keeps one running "
            "between commands."
        )
    if master.strip().lower().startswith("sc://") or mode == "cold":
        return 0.0
    if configured is not None:
        return float(configured)
    if mode == "warm" or master.startswith("local"):
        return DEFAULT_KEEP_WARM_MINUTES
    return 0.0


def warm_up_seconds(
    master: str, configured: float | None, env: Mapping[str, str] | None = None
) -> float:
    """Seconds of warm-up statements a new engine runs while idle (warm_up.py): the
    environment's WARM_UP_ENV, else the profile's, else DEFAULT_WARM_UP_SECONDS on a local
    master and none on a cluster one, whose executors the statements would occupy."""
    env = os.environ if env is None else env
    raw = env.get(WARM_UP_ENV, "").strip()
    if raw:
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not seconds >= 0:
            raise EngineSetupError(
                f"{WARM_UP_ENV} must be a number of seconds, 0 or more (0: no warm-up); "
                f"got {raw!r}."
            )
        return seconds
    if configured is not None:
        return float(configured)
    return DEFAULT_WARM_UP_SECONDS if master.startswith("local") else 0.0


def is_session_key(key: str) -> bool:
    return key in SESSION_KEYS or key.startswith(SESSION_KEY_PREFIXES)


def engine_conf(spec: EngineSpec) -> tuple[tuple[str, str], ...]:
    """The SparkConf the engine's JVM is launched with: the spec's, without its catalogs."""
    conf = dict(spec.conf)
    options = [conf.get("spark.driver.extraJavaOptions", ""), *ENGINE_JAVA_OPTIONS]
    conf["spark.driver.extraJavaOptions"] = " ".join(o for o in options if o).strip()
    return tuple(sorted((k, v) for k, v in conf.items() if not is_session_key(k)))


def session_conf(spec: EngineSpec) -> tuple[tuple[str, str], ...]:
    """What each attached session sets itself (besides the catalogs' secrets)."""
    return tuple((k, v) for k, v in spec.conf if is_session_key(k))


def engine_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v for k, v in env.items() if k.startswith(ENGINE_ENV_PREFIXES) and k not in _IGNORED_ENV
    }


def engine_key(
    spec: EngineSpec, java: str, env: Mapping[str, str] | None = None, salt: bytes = b""
) -> str:
    """The name of the engine `spec` may attach to (hex, printable: secrets only salted and
    hashed). `salt` is the user's engine-home secret, so a digest reveals nothing guessable."""
    env = os.environ if env is None else env
    secret_part = hashlib.sha256(
        salt
        + json.dumps(
            [
                spec.secret_hadoop_conf,
                spec.secret_system_properties,
                [(k, v) for k, v in spec.secret_catalog_conf if _reaches_hadoop(k)],
                sorted(engine_env(env).items()),
            ]
        ).encode()
    ).hexdigest()
    payload = json.dumps(
        [
            spec.master,
            engine_conf(spec),
            [(k, v) for k, v in session_conf(spec) if _reaches_hadoop(k)],
            spec.app_name,
            java,
            sys.executable,
            pyspark_version(),
            secret_part,
        ]
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _reaches_hadoop(key: str) -> bool:
    """A catalog's Hadoop setting (`spark.sql.catalog.<c>.hadoop.*`, an s3a endpoint or key):
    Hadoop caches FileSystems JVM-wide by bucket, not by setting, so a session could be handed
    one built from another's; these settings choose the engine instead."""
    return ".hadoop." in key


def engines_home(env: Mapping[str, str] | None = None) -> Path:
    """Where this user's engines keep their state (LAKEHOUSE_ENGINE_HOME, else the cache)."""
    from dbt.adapters.lakehouse.engine.jars import cache_dir

    env = os.environ if env is None else env
    configured = env.get("LAKEHOUSE_ENGINE_HOME", "").strip()
    home = Path(configured).expanduser() if configured else cache_dir(env) / "engines"
    # Absolute: the supervisor is started in the engine's folder with that folder's path as its
    # argument, which, relative, would point nowhere from there.
    return home.absolute()
