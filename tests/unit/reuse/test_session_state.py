"""What is kept on the Spark session while no statement changed it (reuse/session_state.py): its
name context and SQL conf values the adapter asks on every node, each a round trip under Spark
Connect."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from dbt.adapters.lakehouse.audit.run import BRANCH_CONF, point_session
from dbt.adapters.lakehouse.reuse import session_state


def test_the_name_context_is_read_once_until_a_statement_changes_it() -> None:
    reads: list[str] = []
    current = {"catalog": "lakehouse", "namespace": "jaffle"}

    class Catalog:
        def currentCatalog(self) -> str:
            reads.append("catalog")
            return current["catalog"]

        def currentDatabase(self) -> str:
            reads.append("namespace")
            return current["namespace"]

    session = SimpleNamespace(catalog=Catalog())
    assert session_state.name_context(session) == ("lakehouse", "jaffle")
    assert session_state.name_context(session) == ("lakehouse", "jaffle")
    assert reads == ["catalog", "namespace"]
    session_state.statement_ran(session, "use other.ns")
    current.update(catalog="other", namespace="ns")
    assert session_state.name_context(session) == ("other", "ns")
    assert session_state.name_context(session) == ("other", "ns")
    assert len(reads) == 6  # read each time once changed


class Conf:
    """A session's SQL conf, counting the requests a Connect server would get."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.requests: list[str] = []

    def get(self, key: str, default: str | None = None) -> str | None:
        self.requests.append(f"get {key}")
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.requests.append(f"set {key}")
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.requests.append(f"unset {key}")
        self.values.pop(key, None)


def test_the_branch_is_read_once_and_pointing_it_keeps_what_was_set() -> None:
    conf = Conf()
    session = SimpleNamespace(conf=conf)
    for _ in range(3):  # every connection's open of a run that is not audited
        point_session(session, None)
        assert session_state.kept_conf(session, BRANCH_CONF) is None
    assert conf.requests == [f"get {BRANCH_CONF}"]
    point_session(session, "audit_1")
    point_session(session, "audit_1")
    assert session_state.kept_conf(session, BRANCH_CONF) == "audit_1"
    assert conf.values == {BRANCH_CONF: "audit_1"}
    point_session(session, None)
    assert session_state.kept_conf(session, BRANCH_CONF) is None and conf.values == {}
    assert conf.requests == [f"get {BRANCH_CONF}", f"set {BRANCH_CONF}", f"unset {BRANCH_CONF}"]
    assert session_state.kept_conf(session, "spark.sql.ansi.enabled") is None  # its own read
    assert conf.requests[-1] == "get spark.sql.ansi.enabled"


def test_a_set_statement_stops_keeping_the_conf() -> None:
    conf = Conf()
    session = SimpleNamespace(conf=conf)
    assert session_state.kept_conf(session, BRANCH_CONF) is None
    session_state.statement_ran(session, f"SET {BRANCH_CONF} = b")
    conf.values[BRANCH_CONF] = "b"  # the statement ran
    assert session_state.kept_conf(session, BRANCH_CONF) == "b"
    assert session_state.kept_conf(session, BRANCH_CONF) == "b"
    assert conf.requests == [f"get {BRANCH_CONF}"] * 3  # read each time once changed
    point_session(session, None)
    assert conf.values == {} and session_state.kept_conf(session, BRANCH_CONF) is None


def test_a_read_racing_a_write_never_keeps_what_it_read_before_it() -> None:
    """Threads asking at once wait for one read; a write waits for that read, so the value kept
    last is the one written."""

    class SlowConf(Conf):
        def get(self, key: str, default: str | None = None) -> str | None:
            value = super().get(key, default)
            time.sleep(0.2)  # the read's round trip, while a writer starts
            return value

    conf = SlowConf()
    session = SimpleNamespace(conf=conf)
    readers = [
        threading.Thread(target=session_state.kept_conf, args=(session, BRANCH_CONF))
        for _ in range(4)
    ]
    for reader in readers:
        reader.start()
    time.sleep(0.05)
    point_session(session, "audit_2")
    for reader in readers:
        reader.join()
    assert conf.requests == [f"get {BRANCH_CONF}", f"set {BRANCH_CONF}"]
    assert session_state.kept_conf(session, BRANCH_CONF) == "audit_2"
