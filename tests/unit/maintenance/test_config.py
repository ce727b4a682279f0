"""The `maintenance` config and lakehouse_maintain's arguments checked (maintenance/config.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.lakehouse.maintenance.config import (
    ORDER,
    MaintenanceConfigError,
    parse_config,
    parse_operations,
    parse_overrides,
    sort_order,
    with_overrides,
)


def test_no_config_runs_nothing_and_has_the_defaults():
    plan = parse_config(None, "model 'x'")
    assert plan.operations == ()
    assert plan.options["snapshot_expiry"] == {"retain_days": 7, "retain_last": 1}
    assert plan.options["orphan_cleanup"] == {"older_than_days": 3, "dry_run": False}
    assert plan.options["compaction"]["target_file_size_mb"] == 128
    assert plan.options["compaction"]["min_input_files"] == 5
    assert plan.options["metadata_cleanup"] == {"previous_versions_max": 100}


def test_after_run_is_put_in_the_safe_order_and_options_merge_with_defaults():
    plan = parse_config(
        {
            "after_run": ["metadata_cleanup", "snapshot_expiry", "compaction"],
            "compaction": {"target_file_size_mb": 64},
        },
        "model 'x'",
    )
    assert plan.operations == ("compaction", "snapshot_expiry", "metadata_cleanup")
    assert plan.options["compaction"] == {
        "target_file_size_mb": 64,
        "min_input_files": 5,
        "strategy": "binpack",
        "scope": "table",
    }


def test_full_maintenance_is_all_of_them_in_order():
    assert parse_config({"after_run": ["full_maintenance"]}, "x").operations == ORDER
    assert ORDER == (
        "compaction",
        "snapshot_expiry",
        "orphan_cleanup",
        "metadata_cleanup",
        "delta_checkpoint",
    )
    assert parse_operations(["orphan_cleanup", "full_maintenance"]) == ORDER


def test_every_problem_is_reported_at_once_with_what_is_accepted():
    with pytest.raises(MaintenanceConfigError) as raised:
        parse_config(
            {
                "after_run": ["compact", "snapshot_expiry"],
                "snapshot_expiry": {"retain_last": 0, "keep": 3},
                "orphan_cleanup": {"older_than_days": 0},
                "compaction": {"strategy": "shuffle", "min_input_files": -1},
                "schedule": "daily",
            },
            "model 'orders'",
        )
    text = raised.value.msg
    assert text.startswith("Invalid maintenance config for model 'orders':")
    assert (
        "unknown key(s) 'schedule'; accepted: after_run, compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup" in text
    )
    assert (
        "after_run has unknown operation(s) 'compact'; accepted: compaction, snapshot_expiry, "
        "orphan_cleanup, metadata_cleanup, delta_checkpoint, full_maintenance" in text
    )
    assert (
        "snapshot_expiry has unknown option(s) 'keep'; accepted: retain_days, retain_last" in text
    )
    assert "snapshot_expiry.retain_last is 0" in text
    assert "orphan_cleanup.older_than_days is 0: a write in flight" in text
    assert "compaction.strategy must be one of binpack, sort, zorder, got 'shuffle'" in text
    assert "compaction.min_input_files must be a whole number of at least 1, got -1" in text
    assert text.endswith("Nothing was written.")


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("compaction", "expected a mapping"),
        ({"after_run": 3}, "after_run must be a list of operation names, got 3"),
        ({"snapshot_expiry": {"retain_days": True}}, "retain_days must be a whole number"),
        ({"orphan_cleanup": {"dry_run": "yes"}}, "dry_run must be true or false, got 'yes'"),
        ({"metadata_cleanup": {"previous_versions_max": 0}}, "previous_versions_max must be"),
    ],
)
def test_bad_values(config: Any, fragment: str):
    with pytest.raises(MaintenanceConfigError, match=fragment):
        parse_config(config, "x")


def test_run_operation_needs_known_operations():
    with pytest.raises(MaintenanceConfigError, match="operations is required; accepted: "):
        parse_operations(None)
    with pytest.raises(MaintenanceConfigError, match="unknown operation\\(s\\) 'vacuum'"):
        parse_operations(["vacuum"])
    assert parse_operations("compaction") == ("compaction",)


def test_sort_order_comes_from_write_order_by():
    assert sort_order("binpack", None, "x") is None
    assert sort_order("sort", ["a desc", "b"], "x") == "a desc, b"
    assert sort_order("zorder", ["a desc nulls last", "b"], "x") == "zorder(a, b)"
    with pytest.raises(MaintenanceConfigError, match="has no `write_order_by` config"):
        sort_order("sort", None, "model 'x'")


def test_scope_is_table_or_run():
    assert parse_config(None, "x").options["compaction"]["scope"] == "table"
    plan = parse_config({"compaction": {"scope": "run"}}, "x")
    assert plan.options["compaction"]["scope"] == "run"
    with pytest.raises(MaintenanceConfigError) as raised:
        parse_config({"compaction": {"scope": "partition"}}, "model 'x'")
    assert "compaction.scope must be one of table, run, got 'partition'" in raised.value.msg
    with pytest.raises(MaintenanceConfigError, match="accepted: target_file_size_mb, "):
        parse_config({"compaction": {"scopes": "run"}}, "x")


def test_a_calls_options_lay_over_each_tables_own_config():
    overrides = parse_overrides(
        {"snapshot_expiry": {"retain_last": 2}, "compaction": None},
        parse_operations(["snapshot_expiry"]),
    )
    assert overrides == {"snapshot_expiry": {"retain_last": 2}}
    own = {"after_run": ["snapshot_expiry"], "snapshot_expiry": {"retain_days": 3}}
    plan = parse_config(with_overrides(own, overrides), "x")
    assert plan.options["snapshot_expiry"] == {"retain_days": 3, "retain_last": 2}
    assert own["snapshot_expiry"] == {"retain_days": 3}  # the model's config is not changed
    assert parse_config(with_overrides(None, overrides), "x").options["snapshot_expiry"] == {
        "retain_days": 7,
        "retain_last": 2,
    }
    assert with_overrides("not a mapping", overrides) == "not a mapping"


def test_a_calls_options_are_checked_as_a_config_and_must_name_an_operation_it_runs():
    with pytest.raises(MaintenanceConfigError) as raised:
        parse_overrides(
            {
                "snapshot_expiry": {"retain_last": 0, "keep": 1},
                "compaction": {"target_file_size_mb": 64},
            },
            ("snapshot_expiry",),
        )
    message = raised.value.msg
    assert message.startswith("lakehouse_maintain: ") and "Nothing was changed" in message
    assert "snapshot_expiry has unknown option(s) 'keep'" in message
    assert "snapshot_expiry.retain_last is 0" in message
    assert "compaction options were given, but compaction is not among the operations" in message
    assert parse_overrides({"compaction": {"strategy": "sort"}}, ORDER) == {
        "compaction": {"strategy": "sort"}
    }
