"""The engine keeps the last warehouses' catalog holders up: shared locks on their users.lock."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import socket
from collections import OrderedDict
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.engine.embedded_catalog.holder import USERS_FILE, try_lock
from dbt.adapters.lakehouse.engine.spec import EngineSpec
from dbt.adapters.lakehouse.engine.warm.client import catalog_users
from dbt.adapters.lakehouse.engine.warm.server import keep_shared_locks


def idle(path: Path) -> bool:
    """What the holder asks: can users.lock be locked exclusively (nobody uses the warehouse)?"""
    fd = os.open(path, os.O_RDWR)
    try:
        return try_lock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


def users_files(tmp_path: Path, count: int) -> list[Path]:
    paths = [tmp_path / f"w{k}" / USERS_FILE for k in range(count)]
    for path in paths:
        path.parent.mkdir()
        path.touch()
    return paths


def test_the_newest_are_kept_and_the_oldest_let_go(tmp_path: Path) -> None:
    a, b, c = users_files(tmp_path, 3)
    kept: OrderedDict[str, int] = OrderedDict()
    keep_shared_locks(kept, [str(a)], limit=2)
    keep_shared_locks(kept, [str(b)], limit=2)
    keep_shared_locks(kept, [str(a)], limit=2)  # used again: now the newest
    keep_shared_locks(kept, [str(c)], limit=2)
    assert list(kept) == [str(a), str(c)]
    assert not idle(a) and not idle(c) and idle(b)
    for fd in kept.values():
        os.close(fd)
    assert idle(a) and idle(c)


def test_a_warehouse_made_anew_at_the_same_path_is_kept_anew(tmp_path: Path) -> None:
    (users,) = users_files(tmp_path, 1)
    kept: OrderedDict[str, int] = OrderedDict()
    keep_shared_locks(kept, [str(users)], limit=2)
    users.unlink()
    users.touch()  # the folder deleted and the project built again: another file
    assert idle(users)
    keep_shared_locks(kept, [str(users)], limit=2)
    assert not idle(users) and list(kept) == [str(users)]
    for fd in kept.values():
        os.close(fd)


def test_a_missing_file_is_not_created_and_a_busy_one_is_skipped(tmp_path: Path) -> None:
    (busy,) = users_files(tmp_path, 1)
    missing = tmp_path / "gone" / USERS_FILE
    holder = os.open(busy, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # the holder deciding that nobody uses the warehouse
    kept: OrderedDict[str, int] = OrderedDict()
    try:
        keep_shared_locks(kept, [str(missing), str(busy)], limit=2)
    finally:
        os.close(holder)
    assert kept == {} and not missing.exists()


def test_a_command_names_its_embedded_catalogs_holder_only(tmp_path: Path) -> None:
    embedded = embedded_spec(tmp_path)
    assert catalog_users(embedded) == [str(tmp_path / "_catalog" / "holder" / USERS_FILE)]
    assert catalog_users(dataclasses.replace(embedded, embedded_catalog=None)) == []


def embedded_spec(tmp_path: Path) -> EngineSpec:
    from dbt.adapters.lakehouse.engine.embedded_catalog import EmbeddedCatalog

    url = f"jdbc:h2:file:{tmp_path}/_catalog/iceberg;AUTO_SERVER=TRUE"
    catalog = EmbeddedCatalog(name="lakehouse", url=url, h2_jar="h2.jar")
    spec = EngineSpec("local[2]", "dbt-lakehouse", (), (), (), (), "embedded")
    return dataclasses.replace(spec, embedded_catalog=catalog)


def test_the_engine_keeps_the_holder_a_command_names_on_its_connection(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.engine.warm.client import Attachment
    from dbt.adapters.lakehouse.engine.warm.server import Supervisor

    spec = embedded_spec(tmp_path)
    (users,) = [Path(path) for path in catalog_users(spec)]
    users.parent.mkdir(parents=True)
    users.touch()
    command, engine = socket.socketpair()
    supervisor = object.__new__(Supervisor)
    supervisor.catalog_users = OrderedDict()
    client: dict[str, object] = {}
    try:
        Attachment(tmp_path, {}, command, None, None, "tag").keep_catalog_holders(spec)  # type: ignore[arg-type]
        sent = engine.recv(4096)
        # A request split across reads, and a line that is no request, are both taken in stride.
        supervisor.attached_requests(client, b"not json\n" + sent[:7])
        assert idle(users)
        supervisor.attached_requests(client, sent[7:])
        assert not idle(users) and list(supervisor.catalog_users) == [str(users)]
    finally:
        command.close()
        engine.close()
        for fd in supervisor.catalog_users.values():
            os.close(fd)


class _Attachment:
    def __init__(self) -> None:
        self.kept: list[EngineSpec] = []
        self.detached = False

    def keep_catalog_holders(self, spec: EngineSpec) -> None:
        self.kept.append(spec)

    def detach(self, catalogs: tuple[str, ...] = ()) -> None:
        self.detached = True


class _Lease:
    def __init__(self, *args: object, **kwargs: object) -> None:
        self.released = False

    def join(self) -> None:
        pass

    def release(self) -> None:
        self.released = True


@pytest.mark.parametrize("opens", [True, False])
def test_a_holder_is_kept_only_once_the_command_opened_its_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opens: bool
) -> None:
    """A holder the command could not use (wedged, its catalog file unreadable) is not kept
    running by the engine: it stops, and the next command starts another."""
    from dbt.adapters.lakehouse.engine import lifecycle

    spec = embedded_spec(tmp_path)
    engine = lifecycle._Engine()
    attachment = _Attachment()

    def attach(spec: EngineSpec, java: str, keep_minutes: float) -> str:
        engine._attachment = attachment  # type: ignore[assignment]
        return "spark"

    def open_catalog(spark: object, lease: object) -> None:
        if not opens:
            raise RuntimeError("the catalog could not be opened")

    monkeypatch.setattr(lifecycle, "java_executable", lambda: "/usr/bin/java")
    monkeypatch.setattr(lifecycle, "java_feature_version", lambda java: None)
    monkeypatch.setattr(lifecycle, "CatalogLease", _Lease)
    monkeypatch.setattr(lifecycle, "open_embedded_catalog", open_catalog)
    monkeypatch.setattr(engine, "_attach", attach)
    if opens:
        assert engine._start(spec) == "spark"
        assert attachment.kept == [spec] and not attachment.detached
    else:
        with pytest.raises(RuntimeError):
            engine._start(spec)
        assert attachment.kept == [] and attachment.detached
