"""A depot problem's key names put back as the user or the service wrote them.

Parsing and precedence check one form, our depot entry, and name its keys (`catalog.uri`,
`spec.s3.bucket`). A depot DataOS answered for was written in DataOS's shapes, where the same
settings are `s3.metastoreUrl` or `depot.s3.bucket`; dataos_shapes.py records which of the
document's keys each of ours came from, and this swaps the names in a message, whole dotted
names only, so a user is never told about a key they did not write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping


def as_written(text: str, spelling: Mapping[str, str]) -> str:
    """`text` with each of our key paths in `spelling` replaced by the document's own."""
    if not spelling:
        return text
    # Longest first, so `spec.s3.bucket` is swapped whole before `spec.s3` could match in it.
    names = sorted(spelling, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w]|\.\w)")
    return pattern.sub(lambda match: spelling[match.group(1)], text)
