"""Refusals next to an open audit branch: compaction and `rewrite_manifests` commit a snapshot
to `main`, and on a table holding an open audit branch (`audit_<8 chars>`) that commit makes
`main` no longer an ancestor of the branch, so the branch could not be published. Both are
skipped there, saying why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from dbt.adapters.lakehouse.iceberg.metadata import Ref

_AUDIT_BRANCH = re.compile(r"^audit_[0-9a-f]{8}$")


def open_audit_branches(refs: Iterable[Ref]) -> list[str]:
    return sorted(
        r.name for r in refs if r.kind.upper() == "BRANCH" and _AUDIT_BRANCH.match(r.name)
    )


def audit_block(refs: Sequence[Ref], operation: str) -> str | None:
    branches = open_audit_branches(refs)
    if not branches:
        return None
    return (
        f"the table holds open audit branch(es) {', '.join(branches)}; {operation} commits to "
        "main, after which the branch could no longer be published. Publish or discard the "
        "branch first (lakehouse_publish / lakehouse_discard), then run it again"
    )
