"""dbt-tests-adapter `concurrency/` suite: many models in threads on one SparkSession."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency

from functional.rebuilds import BuildsEveryRun

# Threads on one session: the same whatever the storage and catalog.
pytestmark = pytest.mark.only_profile("local")


# Its rerun counts five unchanged models as `success`: built every run.
class TestConcurrency(BuildsEveryRun, BaseConcurrency):
    pass
