"""A depot's table defaults (tableFormats, formatVersion) and a file depot's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.exceptions import DepotConfigError
from unit.profile.depots import (
    error_of,
    resolve,
    s3_entry,
)

# --- spec.tableFormats: the depot's default table_formats ----------------------------------------


def test_table_formats_default_of_a_depot(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["tableFormats"] = ["iceberg", "delta"]
    assert resolve(entry, cwd).table_formats == ("iceberg", "delta")
    assert resolve(s3_entry(), cwd).table_formats is None


def test_bad_table_formats_of_a_depot_is_a_depot_error(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["tableFormats"] = ["delta"]
    assert "spec.tableFormats lacks iceberg" in error_of(entry, cwd)


# --- spec.formatVersion: the depot's default format_version --------------------------------------


def test_format_version_default_of_a_depot(cwd: Path) -> None:
    entry = s3_entry()
    entry["spec"]["formatVersion"] = 3
    assert resolve(entry, cwd).format_version == 3
    entry["spec"]["formatVersion"] = "2"
    assert resolve(entry, cwd).format_version == 2
    assert resolve(s3_entry(), cwd).format_version is None


@pytest.mark.parametrize("value", [4, "v3", True, 2.5])
def test_bad_format_version_of_a_depot_is_a_depot_error(cwd: Path, value: object) -> None:
    entry = s3_entry()
    entry["spec"]["formatVersion"] = value
    message = error_of(entry, cwd)
    assert "spec.formatVersion is" in message and "Accepted: 1, 2 or 3" in message


# ---- a file depot's folder -------------------------------------------------------------------


def test_a_file_depots_missing_folder_is_created(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.storage.file import prepare_folder

    folder = tmp_path / "new" / "warehouse"
    prepare_folder(folder, "'lake' (inline)")
    assert folder.is_dir()
    prepare_folder(folder, "'lake' (inline)")  # existing: left as it is
    assert folder.is_dir()


def test_a_read_only_depots_missing_folder_is_named_not_created(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.storage.file import prepare_folder

    folder = tmp_path / "raw"
    with pytest.raises(DepotConfigError) as raised:
        prepare_folder(folder, "'rawlake' (inline)", read_only=True)
    assert str(folder) in raised.value.msg
    assert "read_only" in raised.value.msg and "not created" in raised.value.msg
    assert not folder.exists()


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    from dbt.adapters.lakehouse.profile.depot.storage.file import prepare_folder

    path = tmp_path / "wh"
    path.write_text("not a folder")
    with pytest.raises(DepotConfigError) as raised:
        prepare_folder(path, "'lake' (inline)")
    assert "is a file, not a folder" in raised.value.msg
