"""A py4j gateway to a JVM that already runs, by PySpark's own attach, the little conf
PySpark's SparkContext reads while it wraps that JVM's context, and the detach that leaves the
JVM holding nothing of the command.

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


def forget_context(spark: Any, gateway: Any) -> None:
    """Drop PySpark's handles on the engine without stopping it (`stop()` would stop the
    engine's SparkContext for every command attached)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context: Any = getattr(spark, "_sc", None) or SparkContext._active_spark_context
    accumulators = getattr(context, "_accumulatorServer", None)
    if accumulators is not None:
        # Its shutdown waits out the server's 0.5 s poll; nothing waits on it at a command's
        # end, so the wait runs in a daemon thread rather than on the way out.
        threading.Thread(target=accumulators.shutdown, daemon=True).start()
        context._accumulatorServer = None
    if gateway is not None:
        try:
            _release_java_objects(gateway)
            gateway.close()
        except Exception:
            pass
    with SparkContext._lock:
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None


def _release_java_objects(gateway: Any) -> None:
    """Tell the engine to let go of every object this command still holds a handle on. py4j
    keeps each object handed to Python in its gateway's bindings until Python's handle is
    collected and the deletion sent, which never happens for the handles alive at a command's
    exit (a cursor's last DataFrame, the command's session), nor for deletions still queued
    for PySpark's finalizer thread, which sends them a second apart: the engine, which
    outlives the command, would keep their plans, a checkpoint's rows, a broadcast's hash table
    (a heap dump showed Datasets of earlier builds held by `py4j.Gateway.bindings` alone)."""
    from py4j.finalizer import ThreadSafeFinalizer
    from py4j.protocol import smart_decode

    client = gateway._gateway_client
    prefix = smart_decode(client.address) + smart_decode(client.port)
    with ThreadSafeFinalizer.lock:
        held = [key for key in ThreadSafeFinalizer.finalizers if key.startswith(prefix)]
        for key in held:
            del ThreadSafeFinalizer.finalizers[key]
    # A pinned-thread client queues deletions for a worker thread, which the gateway's close
    # stops: its own are taken from the queue and every deletion is sent now.
    queue = getattr(client, "finalizer_deque", None)
    queued = [] if queue is None else _taken_from(queue, client)
    # ~1,200 handles after a 200-node build, each deletion one round trip: 20-110 ms in all.
    for target_id in [key[len(prefix) :] for key in held] + queued:
        if queue is not None:
            client.garbage_collect_object(target_id, False)
        else:
            client.garbage_collect_object(target_id)


def _taken_from(queue: Any, client: Any) -> list[str]:
    """The deletions the finalizer thread has not sent yet for `client`, taken from its queue
    (anything else there, the worker's stop signal, is put back)."""
    taken: list[str] = []
    others = []
    while queue:
        try:
            task = queue.pop()
        except IndexError:
            break
        if isinstance(task, tuple) and task[0] is client:
            taken.append(task[1])
        else:  # the worker's stop signal
            others.append(task)
    for task in others:
        queue.appendleft(task)
    return taken
