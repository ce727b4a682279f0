"""Attribution tags: the profile's `query_tags` and LAKEHOUSE_QUERY_TAGS, with dbt's node
identity, on every Spark job of a node (its job description) and on its Iceberg commits
(snapshot summary entry `dbt.query_tags`), so a cluster's Spark UI and event log and the
table's history both say which dbt node, run and team did what.

LAKEHOUSE_QUERY_TAGS is `key=value` pairs separated by commas; a key set there wins over the
profile's (a scheduler sets the variable per job, a profile is shared).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENV_VAR = "LAKEHOUSE_QUERY_TAGS"


def tag_problems(tags: Any) -> list[str]:
    """What is wrong with a profile's `query_tags`, for the profile's validation."""
    if tags is None:
        return []
    if not isinstance(tags, Mapping) or not all(
        isinstance(v, (str, int, float, bool)) for v in tags.values()
    ):
        return [f"query_tags must map names to text, e.g. {{team: finance}}; got {tags!r}."]
    bad = [str(k) for k in tags if not str(k) or any(c in str(k) for c in ",=")]
    if bad:
        return [f"query_tags names cannot be empty or hold ',' or '='; got {bad}."]
    return []


def query_tags(profile_tags: Mapping[str, Any] | None, env: Mapping[str, str]) -> str | None:
    """The tags as one text, `k=v,k2=v2` in name order; None when there are none."""
    tags = {str(k): str(v) for k, v in (profile_tags or {}).items()}
    for pair in (env.get(ENV_VAR) or "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            tags[key.strip()] = value.strip()
    return ",".join(f"{k}={v}" for k, v in sorted(tags.items())) or None


def job_description(node: str, invocation_id: str, tags: str | None) -> str:
    """A Spark job's description: the dbt node, its run, and the tags."""
    text = f"dbt {node} (invocation {invocation_id})"
    return f"{text} [{tags}]" if tags else text
