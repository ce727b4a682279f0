"""py4j's answers from the driver's JVM without Nagle's delay.

py4j's Java side writes each answer through an 8 KiB buffer, so an answer longer than that (an
analysed plan's JSON, a table's metadata, a wide schema) leaves its socket in two writes. That
socket keeps Nagle's algorithm on, so the second write waits for the ACK of the first, which the
Python side's kernel delays: 40 ms on Linux, for every such answer. Measured on a data test's
plan JSON (11.6 KiB): 44 ms a call through py4j, 3.4 ms with TCP_NODELAY (bench/py4j_answers.py,
bench/RESULTS.md). py4j has no setting for it and PySpark makes its server, so each connection's
socket is set once, by the first call on it: with pinned threads (PySpark's default, which the
adapter needs for commit lineage) a Python thread's calls are all served by one JVM thread, and
that thread's Runnable is its connection. This side's socket is set too, for calls longer than a
segment.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine.runtime import java_class

logger = AdapterLogger("Lakehouse")

_DONE = "_lakehouse_nodelay"
_LOCK = threading.Lock()


def answer_without_delay(spark: Any) -> None:
    """Set TCP_NODELAY on the JVM's side of each py4j connection of `spark`'s gateway, when the
    connection first carries a call (idempotent per gateway)."""
    gateway: Any = getattr(spark.sparkContext, "_gateway", None)
    client = getattr(gateway, "_gateway_client", None)
    if client is None or not hasattr(client, "get_thread_connection"):
        return  # no py4j (Spark Connect), or unpinned threads: a call's JVM thread is unknown
    with _LOCK:
        if getattr(client, _DONE, False):
            return
        setattr(client, _DONE, True)
        send = client.send_command

        def send_command(command: str, retry: bool = True, binary: bool = False) -> Any:
            answer = send(command, retry, binary)
            if binary:  # the caller owns the connection now: no call of ours may interleave
                return answer
            connection = client.get_thread_connection()
            if connection is not None and not getattr(connection, _DONE, False):
                setattr(connection, _DONE, True)  # before the calls below, which come back here
                _set_nodelay(gateway)
                _set_own_nodelay(connection)
            return answer

        client.send_command = send_command


def _set_nodelay(gateway: Any) -> None:
    """TCP_NODELAY on the socket of the py4j connection serving this Python thread."""
    try:
        thread = java_class(gateway, "java.lang.Thread").currentThread()
        serving_connection(gateway, thread).getSocket().setTcpNoDelay(True)
    except Exception as exc:  # a JVM that hides Thread's fields: answers as before, slower
        logger.debug(f"py4j's connection keeps Nagle's algorithm: {str(exc).splitlines()[0]}")


def _set_own_nodelay(connection: Any) -> None:
    """TCP_NODELAY on this side's socket too: a call longer than a segment (a long statement)
    would wait the same way for the JVM's kernel's ACK."""
    sock = getattr(connection, "socket", None)
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            logger.debug(f"py4j's connection keeps Nagle's algorithm on this side: {exc}")


def serving_connection(gateway: Any, thread: Any) -> Any:
    """The py4j connection a JVM thread serving py4j calls runs (its Runnable): Thread.target up
    to Java 18, Thread.holder.task after (Spark opens java.lang to reflection on its driver)."""
    thread_class = java_class(gateway, "java.lang.Class").forName("java.lang.Thread")
    try:
        field = thread_class.getDeclaredField("target")
    except Exception:
        holder_field = thread_class.getDeclaredField("holder")
        holder_field.setAccessible(True)
        holder = holder_field.get(thread)
        field = holder.getClass().getDeclaredField("task")
        field.setAccessible(True)
        return field.get(holder)
    field.setAccessible(True)
    return field.get(thread)
