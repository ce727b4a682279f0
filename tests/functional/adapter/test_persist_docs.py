"""dbt-tests-adapter `persist_docs/` suite."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
    BasePersistDocsQuotedColumnCaseSensitive,
    BasePersistDocsQuotedDescriptionNotAppliedOnMismatch,
)

from functional.rebuilds import BuildsEveryRun

# Comments and column docs reach a table through the same ALTER statements on every catalog:
# the embedded lakehouse only (CI time; docs/tests.md).
pytestmark = pytest.mark.only_profile("local")
# The classes building every run rerun unchanged models to see the warnings a build gives.


class TestPersistDocs(BasePersistDocs):
    pass


class TestPersistDocsColumnMissing(BuildsEveryRun, BasePersistDocsColumnMissing):
    pass


class TestPersistDocsAllColumnsMissing(BuildsEveryRun, BasePersistDocsAllColumnsMissing):
    pass


class TestPersistDocsQuotedColumnCaseSensitive(
    BuildsEveryRun, BasePersistDocsQuotedColumnCaseSensitive
):
    pass


class TestPersistDocsQuotedDescriptionNotAppliedOnMismatch(
    BuildsEveryRun, BasePersistDocsQuotedDescriptionNotAppliedOnMismatch
):
    pass


class TestPersistDocsCommentOnQuotedColumn(BasePersistDocsCommentOnQuotedColumn):
    pass
