"""Each node's reuse verdict in this invocation, kept from the plan (reuse/adapter.py) until the
node's response is made (connections.py), as report/work.py keeps its commits."""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
_VERDICTS: dict[tuple[str, str], dict[str, Any]] = {}


def record_verdict(invocation_id: str, node: str, reused: bool, reason: str) -> None:
    with _LOCK:
        _VERDICTS[(invocation_id, node)] = {"reused": reused, "reuse_reason": reason}


def take_verdict(invocation_id: str, node: str) -> dict[str, Any]:
    """The node's `reused` and `reuse_reason` fields (empty: reuse was off and silent)."""
    with _LOCK:
        return _VERDICTS.pop((invocation_id, node), {})
