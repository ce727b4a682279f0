"""Cluster masters: what a master URL connects to first, whether it answers, and how long the
adapter waits for it. A `spark://` or `k8s://` master names its address; a `yarn` master's
ResourceManager is in Hadoop's conf (yarn-site.xml). Each check fails in bounded time with an
error naming the master, instead of Spark's own retries, which outlast any user.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dbt.adapters.lakehouse.engine.launch import spark_log_path
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.exceptions import EngineSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The host:port pairs a master URL names (spark://a:7077,b:7077 lists HA masters;
    k8s://https://host:port the API server); none for `yarn`, whose ResourceManager is in
    Hadoop's conf (`yarn_resourcemanager_addresses`)."""
    if master.startswith("spark://"):
        rest = master[len("spark://") :]
        default_port = 7077
    elif master.startswith("k8s://"):
        rest = master[len("k8s://") :]
        default_port = 443 if not rest.startswith("http://") else 80
        rest = rest.split("://", 1)[-1]
    else:
        return []
    addresses: list[tuple[str, int]] = []
    for part in rest.split("/", 1)[0].split(","):
        host, _, port = part.rpartition(":") if ":" in part else (part, "", "")
        if host and port.isdigit():
            addresses.append((host, int(port)))
        elif part:
            addresses.append((part, default_port))
    return addresses


_RM_PORT = 8032  # yarn.resourcemanager.address's default port


def yarn_conf_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders Spark puts on the classpath for Hadoop's conf, in its order."""
    env = os.environ if env is None else env
    return [Path(env[name]) for name in ("YARN_CONF_DIR", "HADOOP_CONF_DIR") if env.get(name)]


def _read_hadoop_xml(path: Path) -> dict[str, str]:
    """A Hadoop *-site.xml's properties; empty when it is missing or unreadable (Spark's own
    start then reports it)."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return {}
    found: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and value is not None:
            found[name.strip()] = value.strip()
    return found


def yarn_resourcemanager_addresses(
    conf: Mapping[str, str], env: Mapping[str, str] | None = None
) -> list[tuple[str, int]]:
    """The ResourceManager address(es) a `yarn` master connects to: yarn-site.xml from
    YARN_CONF_DIR / HADOOP_CONF_DIR, overridden by `spark.hadoop.yarn.*` in the Spark conf;
    each rm-id's address with ResourceManager HA."""
    settings: dict[str, str] = {}
    for folder in reversed(yarn_conf_dirs(env)):  # the first folder on the classpath wins
        settings.update(_read_hadoop_xml(folder / "yarn-site.xml"))
    prefix = "spark.hadoop."
    settings.update({k[len(prefix) :]: v for k, v in conf.items() if k.startswith(prefix)})

    def expand(value: str) -> str:
        for _ in range(5):  # Hadoop's ${name} substitution, as far as yarn-site.xml uses it
            start = value.find("${")
            end = value.find("}", start)
            if start < 0 or end < 0:
                break
            value = value[:start] + settings.get(value[start + 2 : end], "") + value[end + 1 :]
        return value

    def address(suffix: str) -> tuple[str, int] | None:
        given = expand(settings.get(f"yarn.resourcemanager.address{suffix}", ""))
        if not given:
            host = expand(settings.get(f"yarn.resourcemanager.hostname{suffix}", ""))
            given = f"{host or '0.0.0.0'}:{_RM_PORT}"
        host, _, port = given.rpartition(":")
        if not host:
            return (port, _RM_PORT) if port else None
        return (host, int(port)) if port.isdigit() else (host, _RM_PORT)

    if settings.get("yarn.resourcemanager.ha.enabled", "").lower() == "true":
        ids = [i.strip() for i in settings.get("yarn.resourcemanager.ha.rm-ids", "").split(",")]
        found = [address(f".{rm_id}") for rm_id in ids if rm_id]
        return [a for a in found if a is not None]
    single = address("")
    return [single] if single is not None else []


def master_addresses_of(
    spec: EngineSpec, env: Mapping[str, str] | None = None
) -> list[tuple[str, int]]:
    """What the spec's master connects to first: its URL's addresses, a `yarn` master's
    ResourceManager(s)."""
    if spec.master.startswith("yarn"):
        if not yarn_conf_dirs(env):
            raise EngineSetupError(
                f"The Spark master {spec.master} needs Hadoop's conf to find the YARN "
                "ResourceManager, and neither YARN_CONF_DIR nor HADOOP_CONF_DIR is set. Fix: "
                "set one of them to the folder with the cluster's yarn-site.xml."
            )
        return yarn_resourcemanager_addresses(dict(spec.conf), env)
    return master_addresses(spec.master)


def _describe_addresses(master: str, addresses: list[tuple[str, int]]) -> str:
    listed = ", ".join(f"{host}:{port}" for host, port in addresses)
    if master.startswith("yarn"):
        return f"the ResourceManager at {listed}" if listed else "the ResourceManager"
    if master.startswith("k8s://"):
        return f"the Kubernetes API server at {listed}" if listed else "the API server"
    return listed


def check_master_reachable(
    master: str, timeout: float = 5.0, addresses: list[tuple[str, int]] | None = None
) -> None:
    """Fail at once when no address of the master answers: a standalone SparkContext would
    otherwise block for a minute of registration retries and then die with an unrelated
    "LiveListenerBus is stopped", a YARN client retry for 15 minutes."""
    addresses = master_addresses(master) if addresses is None else addresses
    if not addresses:
        return
    problems = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            problems.append(f"{host}:{port}: {exc.strerror or exc}")
    if master.startswith("yarn"):
        fix = (
            "Fix: start the ResourceManager, or correct yarn.resourcemanager.address in the "
            f"yarn-site.xml of {' or '.join(map(str, yarn_conf_dirs()))}."
        )
    else:
        fix = (
            "Fix: start the master, or correct spark.master in the profile (spark://host:7077 "
            "for a standalone master, k8s://https://host:port for a Kubernetes API server)."
        )
    detail = "; ".join(problems)
    if master.startswith("yarn"):
        detail = f"ResourceManager {detail}"
    elif master.startswith("k8s://"):
        detail = f"Kubernetes API server {detail}"
    raise EngineSetupError(
        f"The Spark master {master} is unreachable from this machine ({detail}). {fix}"
    )


def start_timeout_message(spec: EngineSpec) -> str:
    """Why a cluster master's SparkContext did not come up in time, naming what it waits on."""
    try:
        addresses = master_addresses_of(spec)
    except EngineSetupError:
        addresses = []
    waited_on = _describe_addresses(spec.master, addresses)
    via = f" ({waited_on})" if waited_on and waited_on != spec.master else ""
    return (
        f"The Spark master {spec.master}{via} did not accept this application within "
        f"{spec.executor_timeout_seconds}s: Spark's start was still waiting on it, so it was "
        "stopped. The address answers connections but not Spark's requests: it is not that "
        "cluster manager, or it is overloaded or stuck, or a proxy/firewall holds the traffic. "
        "Raise spark.executor_timeout_seconds for a cluster that admits applications slowly "
        f"(a busy YARN queue). Spark's log: {spark_log_path()}"
    )


def local_storage_warning(spec: EngineSpec) -> str:
    return (
        f"Spark master {spec.master} with depot {spec.depot_label}, whose tables "
        "are in a folder on this machine: executors on other hosts cannot read or write "
        "them (nor reach an embedded catalog). Use an S3 depot with a cluster."
    )


def await_executors(spark: SparkSession, spec: EngineSpec) -> None:
    """A cluster master must give the application an executor within the profile's
    `executor_timeout_seconds`. Spark itself only logs "Initial job has not accepted any
    resources" and waits for ever; an unreachable standalone master is given up after about a
    minute, in a log line alone. Either way dbt's first statement would hang."""
    context = spark.sparkContext._jsc.sc()  # type: ignore[union-attr]
    deadline = time.monotonic() + spec.executor_timeout_seconds
    while time.monotonic() < deadline:
        if context.isStopped():
            break
        # The driver counts as one entry of the block managers.
        if context.getExecutorMemoryStatus().size() > 1:
            return
        time.sleep(0.5)
    raise EngineSetupError(
        f"The Spark master {spec.master} gave this application no executor within "
        f"{spec.executor_timeout_seconds}s: the master is unreachable from this machine, or it "
        "has no live worker with the free cores and memory asked for (spark.executor.cores, "
        "spark.executor.memory in the profile's spark.conf), or its workers cannot reach the "
        f"driver at {spark.conf.get('spark.driver.host', '?')} (set spark.driver_host to an "
        "address they can reach). Raise spark.executor_timeout_seconds for a cluster that "
        f"scales up slowly. Spark's log: {spark_log_path()}"
    )
