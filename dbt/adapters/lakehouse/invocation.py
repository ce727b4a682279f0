"""Which dbt command this process runs, as dbt-core's flags say (None outside its CLI).

Read by the command's setup (command_setup.py: the early engine start, an audited run, the run
summary) and by features that behave differently for a command that renders nodes without
running them (time_travel/as_of.py); so it sits in the lowest layer, below both.
"""

from __future__ import annotations


def invoked_command() -> str | None:
    try:
        from dbt.flags import get_flags

        return getattr(get_flags(), "WHICH", None)
    except Exception:  # dbt-core's flags are not set up outside its CLI
        return None
