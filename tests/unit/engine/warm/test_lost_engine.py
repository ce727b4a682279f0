"""Whether a warm engine whose connection dropped is still running (engine/warm/client.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from dbt.adapters.lakehouse.engine.warm.client import _still_running


def test_a_process_that_exits_within_the_grace_counts_as_stopped():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    # Reaped in the background as a parent would: then it is gone, not a zombie.
    threading.Thread(target=child.wait, daemon=True).start()
    assert not _still_running(child.pid, grace_seconds=5.0)


def test_a_process_that_keeps_running_counts_as_running():
    assert _still_running(os.getpid(), grace_seconds=0.1)
