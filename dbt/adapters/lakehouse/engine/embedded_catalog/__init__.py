"""The embedded lakehouse's catalog holder: one owner of a warehouse's H2 catalog at a time.

The embedded catalog is an H2 database file opened with AUTO_SERVER: the first process to open
it owns it and serves it on loopback TCP, and the others find that server in H2's lock file and
connect to it. With dbt processes as the owners this breaks in two ways. Processes that open the
file before any server is recorded all run H2's lock-file protocol at once; each one rewrites
the lock file, and the others give up ("Lock file recently modified"). And when the owner exits,
H2 closes the database under every process connected to it ("Connection is broken").

So no dbt process owns it. A dbt process's lease (lease.py) starts a holder for the warehouse:
H2's own Shell, connected to the file and kept open on a pipe, watched by holder.py run as a
script (standard library only, so it does not load dbt). The holder owns the database while any
dbt process uses the warehouse; dbt processes find its server in the lock file and never write
the lock file. It stops a moment after the last of them is gone.

Processes coordinate with flock(2) on files in `<warehouse>/_catalog/holder/`; the kernel
releases a process's locks when it dies, however it dies:
- `mutex.lock`: exclusive while a dbt process starts the holder or opens the catalog for the
  first time (so two processes never create or migrate the catalog's tables at once), and while
  the holder decides whether to stop;
- `users.lock`: shared by every dbt process using the warehouse, for as long as it runs;
- `holder.lock`: exclusive by the live holder;
- `state.json`: the holder's pid and state (starting, ready, failed with H2's reason);
  `holder.log`: its output.
"""

from dbt.adapters.lakehouse.engine.embedded_catalog.holder import (
    CONTENTION_MARKERS,
    DEFAULT_WAIT_SECONDS,
    HOLDER_DIR,
    EmbeddedCatalog,
    contention_reason,
    h2_reason,
)
from dbt.adapters.lakehouse.engine.embedded_catalog.lease import (
    CatalogLease,
    CatalogUnavailable,
    holder_alive,
    read_state,
    retry_while_contended,
)

__all__ = [
    "CONTENTION_MARKERS",
    "DEFAULT_WAIT_SECONDS",
    "HOLDER_DIR",
    "CatalogLease",
    "CatalogUnavailable",
    "EmbeddedCatalog",
    "contention_reason",
    "h2_reason",
    "holder_alive",
    "read_state",
    "retry_while_contended",
]
