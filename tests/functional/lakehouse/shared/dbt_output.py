"""Reading what dbt printed, for tests that assert on its messages."""

from __future__ import annotations

import json


def output_text(stdout: str) -> str:
    """dbt's captured log lines are JSON in tests: their messages, one per line."""
    lines = []
    for line in stdout.splitlines():
        try:
            lines.append(json.loads(line)["info"]["msg"])
        except (ValueError, KeyError, TypeError):
            lines.append(line)
    return "\n".join(lines)
