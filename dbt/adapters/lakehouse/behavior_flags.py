"""dbt's behavior flags for this adapter, built without dbt-common's call-stack walk.

dbt-common names each behavior flag's source by walking the whole call stack with
`inspect.stack()` (even for a flag that states its source: the walk is the default argument of
a `get`), and the walk maps every loaded module to its file, ~0.1 s under dbt's deep click
stack, a cost a warm engine's 3-second `dbt run -s` or `dbt show` feels. The adapter's flags
name the module the walk finds for the flags dbt-adapters sets, without the walk.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import impl as base_impl
from dbt_common.behavior_flags import Behavior, BehaviorFlagRendered


class _FlagOfBaseAdapter(BehaviorFlagRendered):
    @staticmethod
    def _default_source() -> str:
        return base_impl.__name__


class _Behavior(Behavior):
    def __init__(self, flags: list[Any], user_overrides: dict[str, Any]) -> None:
        self._flags = [_FlagOfBaseAdapter(flag, user_overrides) for flag in flags]


def behavior_of(flags: list[Any], user_overrides: dict[str, Any]) -> Behavior:
    """dbt-common's `Behavior(flags, user_overrides)`, each flag's source as dbt-adapters'."""
    return _Behavior(flags, user_overrides)
