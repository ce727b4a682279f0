"""The engine keeps the last warehouses' catalog holders up: shared locks on their users.lock."""

from __future__ import annotations

import dataclasses
import fcntl
import os
from collections import OrderedDict
from pathlib import Path

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
    from dbt.adapters.lakehouse.engine.embedded_catalog import EmbeddedCatalog

    url = f"jdbc:h2:file:{tmp_path}/_catalog/iceberg;AUTO_SERVER=TRUE"
    catalog = EmbeddedCatalog(name="lakehouse", url=url, h2_jar="h2.jar")
    spec = EngineSpec("local[2]", "dbt-lakehouse", (), (), (), (), "embedded")
    embedded = dataclasses.replace(spec, embedded_catalog=catalog)
    assert catalog_users(embedded) == [str(tmp_path / "_catalog" / "holder" / USERS_FILE)]
    assert catalog_users(spec) == []
