"""dbt-tests-adapter `utils/data_types/` suite: dbt's type macros on Spark.

type_float() renders DOUBLE here (dbt's float is double precision elsewhere), matching what
seeds infer for decimals.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


class TestTypeFloat(BaseTypeFloat):
    pass


class TestTypeInt(BaseTypeInt):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        # Seeds infer BIGINT for whole numbers on Spark; the expected column is a 4-byte int,
        # as type_int() renders.
        return {"seeds": {"+column_types": {"int_col": "int"}}}


class TestTypeNumeric(BaseTypeNumeric):
    pass


class TestTypeString(BaseTypeString):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    pass
