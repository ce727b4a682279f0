"""dbt-tests-adapter `concurrency/` suite: many models in threads on one SparkSession."""

from __future__ import annotations

from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency


class TestConcurrency(BaseConcurrency):
    pass
