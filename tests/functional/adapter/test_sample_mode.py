"""dbt-tests-adapter `sample_mode/` suite: `dbt run --sample` filters refs on `event_time`."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestSampleMode(BaseSampleModeTest):
    pass
