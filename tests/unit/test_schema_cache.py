"""dbt's JSON schemas kept between processes (schema_cache.py), on dbt-core's own classes: a
kept schema is the one dbt builds and validates alike, another install or an edited class file
is another key, and what cannot be told apart or read back is left to dbt."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Literal

import pytest
from dbt.artifacts.resources.v1.config import TestConfig
from dbt.contracts.graph.nodes import ModelNode
from dbt.contracts.project import Project
from dbt_common.dataclass_schema import ValidationError, dbtClassMixin

from dbt.adapters.lakehouse import schema_cache
from dbt.adapters.lakehouse.credentials import LakehouseCredentials
from dbt.adapters.lakehouse.schema_cache import SchemaStore

INSTALLS = ("mashumaro:1", "dbt-common:1")
BUILD = dbtClassMixin.__dict__["json_schema"].__func__.__wrapped__  # dbt-common's, uncached
CLASSES = (ModelNode, Project, TestConfig, LakehouseCredentials)


def _refuse(cls: type) -> dict[str, Any]:
    raise AssertionError(f"the schema of {cls.__name__} was built again")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_kept_schema_is_the_one_dbt_builds(tmp_path: Path, cls: type) -> None:
    own = BUILD(cls)
    store = SchemaStore(tmp_path, INSTALLS)
    assert store.schema(cls, BUILD) == own
    assert (store.hits, store.misses) == (0, 1)
    # The next process reads it back: nothing is built.
    again = SchemaStore(tmp_path, INSTALLS)
    assert again.schema(cls, _refuse) == own
    assert (again.hits, again.misses) == (1, 0)


def test_a_kept_schema_refuses_what_dbts_refuses(tmp_path: Path) -> None:
    SchemaStore(tmp_path, INSTALLS).schema(TestConfig, BUILD)
    kept = SchemaStore(tmp_path, INSTALLS).schema(TestConfig, _refuse)
    import jsonschema

    bad = {"severity": "loud"}  # TestConfig's severity is a pattern: warn or error
    assert next(jsonschema.Draft7Validator(BUILD(TestConfig)).iter_errors(bad), None)
    assert next(jsonschema.Draft7Validator(kept).iter_errors(bad), None)
    assert not list(jsonschema.Draft7Validator(kept).iter_errors({"severity": "warn"}))


def test_another_install_or_an_edited_class_file_is_another_key(tmp_path: Path) -> None:
    store = SchemaStore(tmp_path, INSTALLS)
    key = store.key(LakehouseCredentials)
    assert key is not None
    assert SchemaStore(tmp_path, ("mashumaro:2", "dbt-common:1")).key(LakehouseCredentials) != key
    assert store.key(TestConfig) != key

    path = Path(schema_cache.sys.modules[LakehouseCredentials.__module__].__file__ or "")
    stat = path.stat()
    try:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert store.key(LakehouseCredentials) != key
    finally:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert store.key(LakehouseCredentials) == key


def test_a_class_its_name_does_not_find_is_left_to_dbt(tmp_path: Path) -> None:
    """Two classes of one name and module may differ (made in a function, by make_dataclass)."""
    first, second = (
        dataclasses.make_dataclass("Made", [("value", kind)], bases=(dbtClassMixin,))
        for kind in (int, str)
    )
    store = SchemaStore(tmp_path, INSTALLS)
    assert (store.key(first), store.key(second)) == (None, None)
    assert store.schema(first, BUILD) != store.schema(second, BUILD)
    assert (store.hits, store.misses, list(tmp_path.iterdir())) == (0, 0, [])


def test_an_unreadable_entry_is_built_and_kept_again(tmp_path: Path) -> None:
    store = SchemaStore(tmp_path, INSTALLS)
    store.schema(TestConfig, BUILD)
    (entry,) = tmp_path.iterdir()
    entry.write_text("{not json")
    again = SchemaStore(tmp_path, INSTALLS)
    assert again.schema(TestConfig, BUILD) == BUILD(TestConfig)
    assert (again.hits, again.misses) == (0, 1)
    assert json.loads(entry.read_text()) == BUILD(TestConfig)


def test_a_schema_json_would_change_is_not_kept(tmp_path: Path) -> None:
    store = SchemaStore(tmp_path, INSTALLS)
    odd = {"enum": ("a", "b")}  # a tuple reads back as a list
    assert store.schema(TestConfig, lambda cls: odd) is odd
    assert list(tmp_path.iterdir()) == []


@dataclasses.dataclass
class Kind(dbtClassMixin):
    """A class first validated by this test: its schema comes through the installed store."""

    severity: Literal["warn", "error"] = "warn"


def test_the_plugin_serves_dbts_validation_from_its_store() -> None:
    """Loading the plugin installed the store: dbt's own validate goes through it."""
    store = schema_cache._store
    assert store is not None and schema_cache.install({}) is True
    seen = store.hits + store.misses
    with pytest.raises(ValidationError):
        Kind.validate({"severity": "loud"})
    Kind.validate({"severity": "error"})
    assert store.hits + store.misses == seen + 1  # asked once, then dbt-common's own cache


@pytest.mark.parametrize("value", ["off", "0", "false", "sometimes"])
def test_switched_off_or_an_unknown_value_installs_nothing(value: str, monkeypatch: Any) -> None:
    monkeypatch.setattr(schema_cache, "_store", None)
    assert schema_cache.install({schema_cache.ENV: value}) is False


def test_the_commands_set_up_refuses_a_value_that_is_not_a_switch() -> None:
    from types import SimpleNamespace

    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.lakehouse.command_setup import set_up_command

    with pytest.raises(DbtRuntimeError, match="LAKEHOUSE_SCHEMA_CACHE='maybe' is not a switch"):
        set_up_command(SimpleNamespace(credentials=None), {schema_cache.ENV: "maybe"})
