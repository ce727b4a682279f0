"""format_version: the accepted values, which source wins, and what a requested version means
for an existing table (models/format_version.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.models.format_version import (
    check_write_modes,
    requested_format_version,
    version_change,
)
from dbt.adapters.lakehouse.profile.depot.table_defaults import (
    FormatVersionError,
    parse_format_version,
)


@pytest.mark.parametrize(
    ("value", "parsed"), [(1, 1), (2, 2), (3, 3), ("3", 3), (" 2 ", 2), (None, None), ("", None)]
)
def test_accepted_values(value: object, parsed: int | None) -> None:
    assert parse_format_version(value, "format_version of Model 'm'") == parsed


@pytest.mark.parametrize("value", [0, 4, "4", "v3", "three", True, False, 3.0, [3], {"v": 3}])
def test_anything_else_is_refused_naming_the_value(value: object) -> None:
    with pytest.raises(FormatVersionError) as raised:
        parse_format_version(value, "format_version of Model 'm'")
    message = raised.value.msg
    assert f"format_version of Model 'm' is {value!r}" in message
    assert "Accepted: 1, 2 or 3" in message


def test_config_then_table_properties_then_depot_default() -> None:
    assert requested_format_version(3, {}, 2, "m") == 3
    assert requested_format_version(None, {"format-version": "3"}, 2, "m") == 3
    assert requested_format_version(None, {"format-version": 2}, 3, "m") == 2
    assert requested_format_version(None, {}, 3, "m") == 3
    assert requested_format_version(None, None, None, "m") is None
    # The same version twice is no conflict.
    assert requested_format_version("3", {"format-version": 3}, None, "m") == 3


def test_config_and_table_properties_disagreeing_is_refused() -> None:
    with pytest.raises(FormatVersionError) as raised:
        requested_format_version(3, {"format-version": "2"}, None, "orders")
    message = raised.value.msg
    assert "Model 'orders' sets format_version 3 and table_properties 'format-version' 2" in message
    assert "Nothing was written" in message


def test_a_bad_format_version_in_table_properties_is_refused() -> None:
    with pytest.raises(FormatVersionError) as raised:
        requested_format_version(None, {"format-version": "4"}, None, "orders")
    assert "table_properties 'format-version' of Model 'orders' is '4'" in raised.value.msg


def test_v1_with_merge_on_read_is_refused_before_writing() -> None:
    properties = {"write.merge.mode": "Merge-On-Read", "write.delete.mode": "copy-on-write"}
    with pytest.raises(FormatVersionError) as raised:
        check_write_modes(1, properties, "orders")
    message = raised.value.msg
    assert "format version 1 with write.merge.mode merge-on-read" in message
    assert "write.delete.mode" not in message
    assert "Deletes are supported in V2 and above" in message
    for fine in (2, 3, None):
        check_write_modes(fine, properties, "orders")
    check_write_modes(1, {"write.merge.mode": "copy-on-write"}, "orders")


def test_upgrade_when_asked_higher_none_when_equal_or_unasked() -> None:
    assert version_change(2, 3, "t", "m") is True
    assert version_change(1, 3, "t", "m") is True
    assert version_change(3, 3, "t", "m") is False
    assert version_change(3, None, "t", "m") is False


def test_a_downgrade_is_refused_naming_the_table_and_the_way_out() -> None:
    with pytest.raises(FormatVersionError) as raised:
        version_change(3, 2, "`lakehouse`.`dev`.`orders`", "orders")
    message = raised.value.msg
    assert "Model 'orders' asks for format version 2" in message
    assert "table `lakehouse`.`dev`.`orders` is already format version 3" in message
    assert "cannot be downgraded" in message and "--full-refresh" in message
    assert "Nothing was written" in message
