"""The embedded catalog's holder protocol and its bounded wait, without Spark or H2.

The retry rules run on a fake clock. The lease tests run the real supervisor (embedded.py as a
script) over a stand-in for `java`: a script that behaves like H2's Shell (prompts and waits for
the end of its input, or fails with one of H2's messages), chosen by the `--jar` file's content.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.engine.embedded_catalog import (
    CONTENTION_MARKERS,
    CatalogLease,
    CatalogUnavailable,
    EmbeddedCatalog,
    contention_reason,
    h2_reason,
    holder_alive,
    read_state,
    retry_while_contended,
)
from dbt.adapters.lakehouse.engine.session_catalogs import catalog_wait_seconds
from dbt.adapters.lakehouse.engine.spec import engine_spec
from dbt.adapters.lakehouse.exceptions import EngineSetupError
from dbt.adapters.lakehouse.profile.depot import embedded_catalog_uri

IN_USE = (
    'Exception in thread "main" org.h2.jdbc.JdbcSQLNonTransientConnectionException: Database '
    'may be already in use: "/wh/_catalog/iceberg.mv.db". Possible solutions: close all other '
    "connection(s); use the server mode [90020-214]\n"
    "\tat org.h2.message.DbException.getJdbcSQLException(DbException.java:678)\n"
    "Caused by: org.h2.mvstore.MVStoreException: The file is locked: /wh/_catalog/iceberg.mv.db "
    "[2.1.214/7]\n"
)
WRONG_PASSWORD = (
    'Exception in thread "main" org.h2.jdbc.JdbcSQLInvalidAuthorizationSpecException: Wrong user '
    "name or password [28000-214]\n"
)

FAKE_SHELL = """\
import sys
mode = open(sys.argv[sys.argv.index("-cp") + 1]).read()
if mode.startswith("fail:"):
    print(mode[5:], flush=True)
    sys.exit(1)
sys.stdout.write("Welcome to H2 Shell (stand-in)\\nsql> ")
sys.stdout.flush()
sys.stdin.read()
print("Aborted")
"""


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def catalog_at(warehouse: Path, jar: str = "h2.jar") -> EmbeddedCatalog:
    return EmbeddedCatalog(name="lakehouse", url=embedded_catalog_uri(warehouse), h2_jar=jar)


def test_paths_come_from_the_url() -> None:
    catalog = catalog_at(Path("/data/wh"))
    assert catalog.database == Path("/data/wh/_catalog/iceberg")
    assert catalog.database_file == Path("/data/wh/_catalog/iceberg.mv.db")
    assert catalog.lock_file == Path("/data/wh/_catalog/iceberg.lock.db")
    assert catalog.folder == Path("/data/wh/_catalog/holder")


@pytest.mark.parametrize("marker", CONTENTION_MARKERS)
def test_contention_is_retried(marker: str) -> None:
    text = f"Failed to connect: jdbc:h2:...\n  caused by: Error opening database: {marker!r}"
    assert contention_reason(text) == marker


@pytest.mark.parametrize(
    "text",
    [
        WRONG_PASSWORD,
        "Unsupported database file version or invalid file header in file iceberg.mv.db",
        "File corrupted while reading record",
        "Table iceberg_tables not found",
    ],
)
def test_other_errors_are_not_retried(text: str) -> None:
    assert contention_reason(text) is None


def test_h2_reason_is_h2s_message() -> None:
    assert h2_reason(IN_USE) == (
        'Database may be already in use: "/wh/_catalog/iceberg.mv.db". Possible solutions: '
        "close all other connection(s); use the server mode"
    )
    assert h2_reason(WRONG_PASSWORD) == "Wrong user name or password"
    assert h2_reason("") == "the H2 process exited without a message"


def test_retries_with_backoff_until_it_opens() -> None:
    clock = FakeClock()
    failures = iter(["Lock file recently modified"] * 3)

    def attempt() -> str:
        reason = next(failures, None)
        if reason:
            raise RuntimeError(f"Error opening database: {reason}")
        return "open"

    opened = retry_while_contended(
        attempt,
        describe=str,
        catalog=catalog_at(Path("/wh")),
        wait=30,
        clock=clock,
        sleep=clock.sleep,
    )
    assert opened == "open"
    assert clock.slept == [0.25, 0.5, 1.0]


def test_gives_up_within_the_bound_with_one_line() -> None:
    clock = FakeClock()
    calls = []

    def attempt() -> None:
        calls.append(clock.now)
        raise RuntimeError('Error opening database: "Lock file recently modified" [8000-214]')

    catalog = catalog_at(Path("/wh"))
    with pytest.raises(CatalogUnavailable) as caught:
        retry_while_contended(
            attempt, describe=str, catalog=catalog, wait=10, clock=clock, sleep=clock.sleep
        )
    assert sum(clock.slept) <= 10
    assert clock.slept == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0, 2.0]
    assert len(calls) == len(clock.slept) + 1
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "The embedded lakehouse catalog /wh/_catalog/iceberg.mv.db stayed locked by another "
        "process for 10s (H2: Lock file recently modified). Fix: "
    )
    assert "delete /wh/_catalog/iceberg.lock.db" in message
    assert "LAKEHOUSE_CATALOG_WAIT" in message


def test_the_bound_counts_from_the_start_given() -> None:
    clock = FakeClock()

    def attempt() -> None:
        raise RuntimeError("Database may be already in use")

    with pytest.raises(CatalogUnavailable, match=r"for 5s \(H2: Database may be already in use\)"):
        retry_while_contended(
            attempt,
            describe=str,
            catalog=catalog_at(Path("/wh")),
            wait=5,
            clock=clock,
            sleep=clock.sleep,
            started=clock.now - 4.9,
        )
    assert clock.slept == []


def test_other_errors_propagate_at_once() -> None:
    clock = FakeClock()

    def attempt() -> None:
        raise ValueError(WRONG_PASSWORD)

    with pytest.raises(ValueError):
        retry_while_contended(
            attempt,
            describe=str,
            catalog=catalog_at(Path("/wh")),
            wait=30,
            clock=clock,
            sleep=clock.sleep,
        )
    assert clock.slept == []


# --- the lease and the holder, with a stand-in for H2's Shell ------------------------------------


@pytest.fixture
def fake_java(tmp_path: Path) -> Path:
    script = tmp_path / "java"
    script.write_text(f"#!{sys.executable}\n{FAKE_SHELL}")
    script.chmod(0o755)
    return script


@pytest.fixture
def leases() -> Iterator[list[CatalogLease]]:
    made: list[CatalogLease] = []
    yield made
    for lease in made:
        lease.release()
    for lease in made:
        stop_holder(lease.catalog)


def stop_holder(catalog: EmbeddedCatalog) -> None:
    deadline = time.monotonic() + 10
    while holder_alive(catalog.folder) and time.monotonic() < deadline:
        time.sleep(0.1)
    pid = read_state(catalog.folder).get("pid")
    if holder_alive(catalog.folder) and isinstance(pid, int):
        os.kill(pid, signal.SIGKILL)


def lease_for(
    tmp_path: Path, fake_java: Path, leases: list[CatalogLease], mode: str, wait: float = 20
) -> CatalogLease:
    jar = tmp_path / "mode"
    jar.write_text(mode)
    lease = CatalogLease(catalog_at(tmp_path / "wh", str(jar)), str(fake_java), wait=wait)
    leases.append(lease)
    return lease


def wait_until(condition, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_holder_serves_while_any_process_holds_a_lease(
    tmp_path: Path, fake_java: Path, leases: list[CatalogLease]
) -> None:
    first = lease_for(tmp_path, fake_java, leases, "ok")
    first.join()
    assert holder_alive(first.folder)
    assert first.open(lambda: "opened", describe=str) == "opened"
    assert read_state(first.folder)["state"] == "ready"
    holder_pid = read_state(first.folder)["pid"]

    # A second process (a lease has its own lock descriptions, as a process would) shares it.
    second = lease_for(tmp_path, fake_java, leases, "ok")
    second.join()
    assert second.open(lambda: "opened too", describe=str) == "opened too"
    assert read_state(first.folder)["pid"] == holder_pid

    first.release()
    time.sleep(3)  # longer than the holder's idle grace
    assert holder_alive(first.folder), "the holder stopped while a process still used it"
    second.release()
    assert wait_until(lambda: not holder_alive(first.folder), 10), "the holder outlived its users"
    assert not (first.folder / "state.json").exists()


def test_holder_that_cannot_open_says_why_at_once(
    tmp_path: Path, fake_java: Path, leases: list[CatalogLease]
) -> None:
    lease = lease_for(tmp_path, fake_java, leases, "fail:" + WRONG_PASSWORD, wait=60)
    began = time.monotonic()
    lease.join()
    with pytest.raises(CatalogUnavailable) as caught:
        lease.open(lambda: None, describe=str)
    assert time.monotonic() - began < 20, "a lasting error must not wait out the bound"
    message = str(caught.value)
    assert "\n" not in message
    assert "could not be opened (H2: Wrong user name or password)" in message
    assert str(lease.folder / "holder.log") in message


def test_holder_kept_out_gives_up_after_the_bound(
    tmp_path: Path, fake_java: Path, leases: list[CatalogLease]
) -> None:
    lease = lease_for(tmp_path, fake_java, leases, "fail:" + IN_USE, wait=2)
    lease.join()
    began = time.monotonic()
    with pytest.raises(CatalogUnavailable) as caught:
        lease.open(lambda: None, describe=str)
    assert time.monotonic() - began < 8
    assert "stayed locked by another process" in str(caught.value)
    assert "(H2: Database may be already in use)" in str(caught.value)


def test_mutex_held_elsewhere_is_waited_for_then_named(
    tmp_path: Path, fake_java: Path, leases: list[CatalogLease]
) -> None:
    import fcntl

    lease = lease_for(tmp_path, fake_java, leases, "ok", wait=0.5)
    lease.folder.mkdir(parents=True)
    with (lease.folder / "mutex.lock").open("a") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        with pytest.raises(CatalogUnavailable) as caught:
            lease.join()
    assert "was not free within 0s" in str(caught.value) or "was not free within 1s" in str(
        caught.value
    )
    assert str(lease.folder / "mutex.lock") in str(caught.value)


# --- the session's part --------------------------------------------------------------------------


def test_catalog_wait_from_the_environment() -> None:
    assert catalog_wait_seconds({}) == 120
    assert catalog_wait_seconds({"LAKEHOUSE_CATALOG_WAIT": " 300 "}) == 300
    for bad in ("0", "-5", "soon", "inf", "nan"):
        with pytest.raises(EngineSetupError, match="LAKEHOUSE_CATALOG_WAIT must be a number"):
            catalog_wait_seconds({"LAKEHOUSE_CATALOG_WAIT": bad})


def test_embedded_spec_names_its_catalog(tmp_path: Path, jar_env: dict[str, str]) -> None:
    env = jar_env
    creds = LakehouseCredentials(schema="analytics", warehouse=str(tmp_path / "wh"))
    spec = engine_spec(creds, env=env)
    assert spec.embedded_catalog == EmbeddedCatalog(
        name="lakehouse", url=embedded_catalog_uri(tmp_path / "wh"), h2_jar=env["LAKEHOUSE_H2_JAR"]
    )
    assert dict(spec.conf)["spark.sql.catalog.lakehouse.uri"] == spec.embedded_catalog.url
