"""dbt-tests-adapter `concurrency/` suite: many models in threads on one SparkSession."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency

# Threads on one session: the same whatever the storage and catalog.
pytestmark = pytest.mark.only_profile("local")


class TestConcurrency(BaseConcurrency):
    pass
