"""dbt-tests-adapter `aliases/` suite: model aliases within and across schemas.

One override, data only: the suite's `string_literal` macro spells a typed string as
Postgres's `'x'::text`, which Spark SQL cannot parse; it dispatches by adapter, so a
`spark__string_literal` gives Spark's spelling of the same string, `cast('x' as string)`
(the dispatch tries lakehouse__, then spark__, then default__).
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.aliases import fixtures
from dbt.tests.adapter.aliases.test_aliases import (
    BaseAliasErrors,
    BaseAliases,
    BaseSameAliasDifferentDatabases,
    BaseSameAliasDifferentSchemas,
)

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")

SPARK_STRING_LITERAL_SQL = """
{% macro spark__string_literal(s) %}
    cast('{{ s }}' as string)
{% endmacro %}
"""


class _SparkStringLiteral:
    @pytest.fixture(scope="class")
    def macros(self):
        return {
            "cast.sql": fixtures.MACROS__CAST_SQL,
            "spark_cast.sql": SPARK_STRING_LITERAL_SQL,
            "expect_value.sql": fixtures.MACROS__EXPECT_VALUE_SQL,
        }


class TestAliases(_SparkStringLiteral, BaseAliases):
    pass


class TestAliasErrors(_SparkStringLiteral, BaseAliasErrors):
    pass


class TestSameAliasDifferentSchemas(_SparkStringLiteral, BaseSameAliasDifferentSchemas):
    pass


class TestSameAliasDifferentDatabases(_SparkStringLiteral, BaseSameAliasDifferentDatabases):
    pass
