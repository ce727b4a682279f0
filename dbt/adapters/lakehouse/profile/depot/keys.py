"""Unknown keys: the one check every mapping a user writes goes through (a depot's sections, the
profile target, its `depots:` entries, catalogs.yml's properties), so a typo is refused with the
nearest accepted key, in the same words everywhere. Here, in the depot layer, because the depot
schema is its lowest user (parse.py) and nothing it imports may sit above it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def unknown_key_problems(given: Iterable[Any], accepted: Iterable[str], where: str) -> list[str]:
    """One problem per key not in `accepted`, naming the nearest accepted key when one is close."""
    accepted = sorted(accepted)
    problems = []
    for key in sorted(str(k) for k in given if k not in accepted):
        nearest = difflib.get_close_matches(key, accepted, n=1, cutoff=0.6)
        hint = f" Did you mean '{nearest[0]}'?" if nearest else ""
        problems.append(f"Unknown {where} key '{key}'.{hint} Accepted: {', '.join(accepted)}.")
    return problems
