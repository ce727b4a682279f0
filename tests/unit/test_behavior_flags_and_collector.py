"""behavior_flags.py and garbage_collector.py: flags built without a stack walk; the exit."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from dbt.adapters.base.impl import DEFAULT_BASE_BEHAVIOR_FLAGS
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.lakehouse.impl import LakehouseAdapter


class _Config:
    flags = {"enable_truthy_nulls_equals_macro": True}


def _rendered(adapter_class: type) -> list[tuple[str, bool, str]]:
    adapter: Any = object.__new__(adapter_class)
    adapter.config = _Config()
    adapter.behavior = list(DEFAULT_BASE_BEHAVIOR_FLAGS)
    return [
        (flag.name, flag.no_warn, flag._behavior_change_event.flag_source)
        for flag in adapter.behavior._flags
    ]


def test_flags_are_dbts_own_without_walking_the_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    dbts = _rendered(SparkAdapter)  # dbt-adapters' setter, with its walk of the stack

    def no_walk(*_: Any, **__: Any) -> None:
        raise AssertionError("the call stack was walked")

    monkeypatch.setattr(inspect, "stack", no_walk)
    ours = _rendered(LakehouseAdapter)
    assert ours == dbts
    assert ("enable_truthy_nulls_equals_macro", True, "dbt.adapters.base.impl") in ours


def test_the_adapters_flags_reach_its_behavior() -> None:
    class WithFlag(LakehouseAdapter):
        @property
        def _behavior_flags(self) -> list[Any]:
            return [{"name": "lakehouse_flag", "default": False, "docs_url": "x"}]

    assert ("lakehouse_flag", False, "dbt.adapters.base.impl") in _rendered(WithFlag)


def test_the_exit_collects_young_garbage_and_freezes_the_rest(tmp_path: Any) -> None:
    marker = tmp_path / "finalized"
    script = textwrap.dedent(
        f"""
        import atexit, gc, sys

        # Registered before the adapter's handler, so it runs after it.
        atexit.register(lambda: print("frozen", gc.get_freeze_count() > at_import))

        import dbt.adapters.lakehouse

        at_import = gc.get_freeze_count()

        gc.disable()  # nothing but the exit handler collects what follows

        class Cycle:
            def __del__(self):
                open({str(marker)!r}, "w").write("yes")

        cycle = Cycle()
        cycle.self = cycle
        del cycle  # young garbage, left for the exit
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "frozen True"
    assert marker.read_text() == "yes"


def test_import_freezes_what_exists_and_young_collections_come_less_often() -> None:
    script = textwrap.dedent(
        """
        import gc

        import dbt.adapters.lakehouse

        print(gc.get_threshold()[0], gc.get_freeze_count() > 20_000)
        finalized = []

        class Cycle:
            def __del__(self):
                finalized.append(1)

        cycle = Cycle()
        cycle.self = cycle
        del cycle
        # Allocations alone, with no explicit collect: the collector still frees the cycle.
        kept = [[index] for index in range(120_000)]
        print("collected", finalized == [1])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50000", "True", "collected", "True"]
