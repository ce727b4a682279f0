"""dbt-tests-adapter `empty/` suite (`--empty` runs)."""

from __future__ import annotations

import pytest
from dbt.cli.main import cli
from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
    MetadataWithEmptyFlag,
)

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")

_SEED_HAS_EMPTY = any(param.name == "empty" for param in cli.commands["seed"].params)


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


@pytest.mark.skipif(
    not _SEED_HAS_EMPTY,
    reason="`dbt seed --empty` (and seeds emptied by `build --empty`) arrive after the installed "
    "dbt-core: its seed command has no --empty option.",
)
class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    pass


class TestMetadataWithEmptyFlag(MetadataWithEmptyFlag):
    pass
