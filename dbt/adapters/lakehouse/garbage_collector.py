"""Python's garbage collector tuned for a dbt process: fractions of a second that a warm
engine's 3-second `dbt run -s` or `dbt show` feels. Imported for its effect, first thing when
the adapter loads (dbt loads it with the profile, before it parses).

- Collecting: dbt allocates in bursts (reading the saved manifest, rendering macros) on top
  of ~200k objects its imports made and never free, and Python's cyclic collector, at its
  default of one young collection per 700 net allocations, promoted enough of that burst to
  walk every live object 3-4 times in a `dbt show`, ~0.15-0.25 s. When the adapter is
  imported, what exists is frozen out of the collector's reach, and a young collection waits
  for 50,000 allocations: the bursts' short-lived objects mostly die before one, and what
  survives is scanned by fewer middle collections (a warm `dbt show`: 1 collection, ~20-30 ms,
  where 10,000 allocations gave 10, 60-85 ms, and 700 gave 3-4 full ones). The collector still
  runs, so a long `dbt build` frees its cyclic garbage as before, a few MB later (the sample's
  build: 155 MB peak, 153 MB at 10,000).
- Leaving: at interpreter exit Python runs its cyclic garbage collector several times over all
  that dbt loaded (its manifest, the parsed macros: ~180k objects for a 20-node project),
  ~0.3 s. The process is ending and its memory goes back to the system either way, so once the
  other exit handlers have run, the young generations are collected (what the command's end
  left as garbage gets its finalizers) and the rest is frozen out of the collector's reach.
  Python promises no finalizer for objects alive at exit (open files are flushed by whoever
  closes them: dbt, logging's own exit handler, Python for stdout and stderr).
"""

from __future__ import annotations

import atexit
import gc


def _freeze_at_exit() -> None:
    gc.collect(1)
    gc.freeze()


# A young collection every this many net allocations (Python's default: 700).
YOUNG_COLLECTION_THRESHOLD = 50_000


def _collect_less_often() -> None:
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, older, oldest)


_collect_less_often()

# Registered on import, before the adapter's other modules load: exit handlers run
# last-registered first, so the ones registered later (the Spark session's stop, the warm
# engine's detach) run before this one.
atexit.register(_freeze_at_exit)
