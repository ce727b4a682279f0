"""on_configuration_change as dbt documents it (mv/adapter.py): apply rebuilds with the new
settings, continue refreshes keeping the old ones, fail writes nothing."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.mv.adapter import _configuration_change
from dbt.adapters.lakehouse.mv.reading import _split
from dbt.adapters.lakehouse.mv.state import RefreshPlan

NOOP = RefreshPlan("noop", (), True)
REBUILD = RefreshPlan("rebuild", ("lakehouse.raw.orders moved from snapshot 1 to 2",), True)


def test_apply_rebuilds_even_when_nothing_moved() -> None:
    assert _configuration_change(NOOP, "apply", "c.s.v").action == "rebuild"
    assert _configuration_change(REBUILD, "apply", "c.s.v") == REBUILD


def test_continue_keeps_the_old_settings() -> None:
    assert _configuration_change(NOOP, "continue", "c.s.v") == NOOP
    # A refresh that must read the query again overwrites the rows in the table as it is.
    assert _configuration_change(REBUILD, "continue", "c.s.v").action == "overwrite"


def test_fail_names_dbt_s_wording_and_the_fix() -> None:
    with pytest.raises(DbtRuntimeError) as raised:
        _configuration_change(NOOP, "fail", "c.s.v")
    assert "`on_configuration_change` was set to `fail` for `c.s.v`" in str(raised.value)
    assert "--full-refresh" in str(raised.value)


def test_recorded_names_split_back_into_parts() -> None:
    assert _split("lakehouse.raw.orders") == ("lakehouse", "raw", "orders")
    assert _split("lakehouse.a.b.orders") == ("lakehouse", "a.b", "orders")
