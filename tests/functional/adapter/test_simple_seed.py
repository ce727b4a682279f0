"""dbt-tests-adapter `simple_seed/` suite: seeds with full-refresh configs, custom schemas,
delimiters, a BOM, odd file names and formats, empty seeds and column type overrides.

The suite's expected table is created by Postgres SQL. It runs here unchanged in meaning,
respelled for Spark SQL (data only): `spark_sql` from test_snapshot.py (TEXT becomes STRING,
TIMESTAMP WITHOUT TIME ZONE becomes TIMESTAMP, timestamp strings become TIMESTAMP literals, which
Spark's ANSI store assignment requires), and Postgres's double-quoted column names become
Spark's backquoted ones (in Spark SQL "x" is a string literal).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed import fixtures, seeds
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import copy_file, get_connection

from functional.adapter.test_snapshot import spark_sql

# SQL semantics, the same on every catalog and store: `local` only (docs/tests.md).
pytestmark = pytest.mark.only_profile("local")

_QUOTED_NAME = re.compile(r'"(\w+)"')

# The suite's `seed_expected` table (seeds.seeds__expected_sql) in Spark SQL: same columns,
# same 500 rows.
SEEDS_EXPECTED_SQL = _QUOTED_NAME.sub(r"`\1`", spark_sql(seeds.seeds__expected_sql))


class _SparkSeedExpected:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(SEEDS_EXPECTED_SQL)


# Postgres drops the downstream view with the seed table (`drop table ... cascade`), and the
# suite asserts it is gone after a full refresh. Spark SQL has no cascading drop: dropping a
# table leaves the views that select from it, which read the re-created seed again.
_NO_CASCADE = (
    "asserts a full-refresh seed also drops the view built on it (Postgres's `drop table ... "
    "cascade`); Spark SQL drops no dependent views, so `models__downstream_from_seed_actual` "
    "stays and reads the re-created seed"
)


class TestBasicSeedTests(_SparkSeedExpected, BaseBasicSeedTests):
    @pytest.mark.skip(reason=_NO_CASCADE)
    def test_simple_seed_full_refresh_flag(self, project):
        pass


@pytest.mark.skip(reason=_NO_CASCADE)
class TestSeedConfigFullRefreshOn(_SparkSeedExpected, BaseSeedConfigFullRefreshOn):
    pass


class TestSeedConfigFullRefreshOff(_SparkSeedExpected, BaseSeedConfigFullRefreshOff):
    pass


class TestSeedCustomSchema(_SparkSeedExpected, BaseSeedCustomSchema):
    pass


class TestSeedWithUniqueDelimiter(_SparkSeedExpected, BaseSeedWithUniqueDelimiter):
    pass


class TestSeedWithWrongDelimiter(_SparkSeedExpected, BaseSeedWithWrongDelimiter):
    pass


class TestSeedWithEmptyDelimiter(_SparkSeedExpected, BaseSeedWithEmptyDelimiter):
    pass


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    @pytest.fixture(scope="function")
    def clear_test_schema(self, project):
        yield
        # The suite runs `drop schema if exists ... cascade`: Iceberg's Spark catalog refuses
        # to drop a namespace that holds tables even with CASCADE (NamespaceNotEmptyException),
        # so the schema is dropped the adapter's way, its relations first.
        relation = project.adapter.Relation.create(
            database=project.database, schema=project.test_schema
        )
        with get_connection(project.adapter):
            project.adapter.drop_schema(relation)


class TestSeedParsing(_SparkSeedExpected, BaseSeedParsing):
    pass


class TestSimpleSeedWithBOM(BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(SEEDS_EXPECTED_SQL)
        # The suite copies seed_bom.csv from the test module's folder; it ships beside the suite.
        copy_file(
            str(Path(seeds.__file__).parent),
            "seed_bom.csv",
            project.project_root / Path("seeds") / "seed_bom.csv",
            "",
        )


# Seeds named with dots (seed.with.dots.csv) included: the temporary view's name is plain.
class TestSeedSpecificFormats(BaseSeedSpecificFormats):
    pass


class TestEmptySeed(BaseTestEmptySeed):
    pass


# The suite's column types are Postgres's (text, integer, timestamp without time zone); here
# Spark's names for the same types: string, bigint (the type seeds infer for whole numbers),
# timestamp.
_COLUMN_TYPES_YML = (
    fixtures.properties__schema_yml.replace("type: text", "type: string")
    .replace("type: integer", "type: bigint")
    .replace("type: timestamp without time zone", "type: timestamp")
)


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    @pytest.fixture(scope="class")
    def models(self):
        return {"schema.yml": _COLUMN_TYPES_YML}

    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {
            "seed_id_str": "string",
            "looks_like_a_bool": "string",
            "looks_like_a_date": "string",
        }
