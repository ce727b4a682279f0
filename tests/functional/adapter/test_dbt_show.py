"""dbt-tests-adapter `dbt_show/` suite."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtRuntimeError

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # Spark's parser words the same syntax error this way.
    DATABASE_ERROR_MESSAGE = "Syntax error at or near 'limit'"

    def test_double_limit_throws_syntax_error(self, project) -> None:
        # The suite searches str(ExceptionInfo), a repr cut to ~240 characters; Spark's message
        # echoes the statement first, so the words sit past the cut. Same check, whole message.
        with pytest.raises(DbtRuntimeError) as error:
            run_dbt(["show", "--limit", "1", "--inline", "select 1 limit 1"])
        assert self.DATABASE_ERROR_MESSAGE in str(error.value)
