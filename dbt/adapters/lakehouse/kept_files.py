"""Files the adapter keeps between dbt processes for what dbt would otherwise compute again in
each one (template_code.py, schema_cache.py): each written whole or not at all, the folder
kept small."""

from __future__ import annotations

import os
import threading
from pathlib import Path


class KeptStore:
    """A folder of entries kept between processes, with this process's hits and misses; at most
    about `KEEP` entries, which each kind of store sets (a write past it removes the oldest
    half, once a process)."""

    KEEP: int

    def __init__(self, folder: Path, installs: tuple[str, ...]) -> None:
        self.folder = folder
        self.installs = installs
        self.hits = 0
        self.misses = 0
        self._pruned = False

    def _keep(self, path: Path, data: bytes) -> None:
        if keep(path, data) and not self._pruned:
            self._pruned = True
            prune(self.folder, self.KEEP)


def keep(path: Path, data: bytes) -> bool:
    """`data` as the file at `path`, which a concurrent reader finds whole or not at all; False
    when it cannot be written (a read-only or full home: computed again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
        partial.write_bytes(data)
        os.replace(partial, path)
        return True
    except OSError:
        return False


def prune(folder: Path, keep: int) -> int:
    """Remove the oldest half of the folder's entries when it holds more than `keep`."""
    try:
        entries = [(entry.stat().st_mtime, entry.path) for entry in os.scandir(folder)]
    except OSError:
        return 0
    if len(entries) <= keep:
        return 0
    entries.sort()
    removed = 0
    for _, path in entries[: len(entries) // 2]:
        try:
            os.remove(path)
            removed += 1
        except OSError:
            continue
    return removed


def file_stamp(path: str) -> str:
    """A file as Python tells its source changed (path, size, modification time): an upgrade
    or a reinstall of what holds it is a new stamp."""
    stat = os.stat(path)
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
