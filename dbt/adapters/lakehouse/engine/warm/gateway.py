"""A py4j gateway to a JVM that already runs, by PySpark's own attach, and the little conf
PySpark's SparkContext reads while it wraps that JVM's context.

PySpark attaches when it finds the JVM's port and secret in `os.environ`. Writing them there
would race with other threads: dbt walks `os.environ` to scrub secrets from every error it
raises, and a variable removed during that walk fails it with a `KeyError`. Child processes
would also inherit the secret. So PySpark's attach is shown an environment of its own.
"""

from __future__ import annotations

import os
import threading
import types
from collections import ChainMap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from py4j.java_gateway import JavaGateway

# One attach at a time: the environment is shown through PySpark's module, shared by threads.
_ATTACH_LOCK = threading.Lock()


class _OsWithEnviron(types.ModuleType):
    """The `os` module, but with the given environment."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        super().__init__("os")
        self.environ = environ

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def attach_gateway(port: int, secret: str) -> JavaGateway:
    """PySpark's gateway to the JVM listening on `port`, with the classes PySpark imports."""
    from pyspark import java_gateway

    # Layered over the live environment rather than a copy of it: copying walks os.environ,
    # the very walk another thread's removal of a variable would break.
    gateway_variables = {"PYSPARK_GATEWAY_PORT": str(port), "PYSPARK_GATEWAY_SECRET": str(secret)}
    environ = ChainMap(gateway_variables, os.environ)
    with _ATTACH_LOCK:
        real_os = java_gateway.os
        java_gateway.os = _OsWithEnviron(environ)  # type: ignore[assignment]
        try:
            return java_gateway.launch_gateway()
        finally:
            java_gateway.os = real_os


# What PySpark's SparkContext reads from the conf it is given before it wraps a running context
# (its master, name, home and the executors' environment); it then reads the context's own conf.
_CONTEXT_KEYS = ("spark.master", "spark.app.name", "spark.home")
_EXECUTOR_ENV = "spark.executorEnv."


def context_conf(jvm: Any, jsc: Any) -> Any:
    """A SparkConf for `SparkContext(gateway=..., jsc=jsc, conf=...)` holding just what PySpark
    reads from it, taken from the running context's conf.

    Given no conf, PySpark builds one that loads every `spark.*` system property of the JVM
    (spark-submit put the whole launch conf there) and reads it back pair by pair: two py4j
    round trips a setting, ~90 for a local engine, on a thread that shares the GIL with dbt's
    parse. This one costs a few.
    """
    from pyspark import SparkConf

    running = jsc.sc().conf()
    conf = SparkConf(loadDefaults=False, _jvm=jvm)
    for key in _CONTEXT_KEYS:
        value = running.get(key, None)  # one round trip; None where the key is unset
        if value is not None:
            conf.set(key, value)
    for pair in running.getAllWithPrefix(_EXECUTOR_ENV):
        conf.set(_EXECUTOR_ENV + pair._1(), pair._2())
    return conf
