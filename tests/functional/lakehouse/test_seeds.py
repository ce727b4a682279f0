"""Seeds travel as one DataFrame: values that break hand-built INSERTs arrive intact."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from dbt.tests.util import run_dbt

TRICKY_CSV = """id,name,note,amount,joined
1,O'Brien,"says ""hi"", then leaves",10.50,2024-01-02
2,Percent,100% off; {{ not jinja }} \\n,,2024-02-29
3,,,-0.01,
"""


class TestSeedValuesArriveIntact:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"tricky.csv": TRICKY_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+column_types": {"amount": "decimal(10,2)", "id": "int"}}}

    def test_quotes_percent_nulls_and_column_types(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        relation = f"`{project.database}`.`{project.test_schema}`.`tricky`"
        rows = project.run_sql(f"select * from {relation} order by id", fetch="all")
        assert [tuple(row) for row in rows] == [
            (1, "O'Brien", 'says "hi", then leaves', decimal.Decimal("10.50"), dt.date(2024, 1, 2)),
            (2, "Percent", "100% off; {{ not jinja }} \\n", None, dt.date(2024, 2, 29)),
            (3, None, None, decimal.Decimal("-0.01"), None),
        ]
        types = {
            row[0]: row[1]
            for row in project.run_sql(f"describe table {relation}", fetch="all")
            if row[0] and not row[0].startswith("#")
        }
        assert types["id"] == "int"
        assert types["amount"] == "decimal(10,2)"
        assert types["joined"] == "date"

    def test_reseed_replaces_in_one_commit_with_history(self, project):
        run_dbt(["seed"])
        run_dbt(["seed"])
        relation = f"`{project.database}`.`{project.test_schema}`.`tricky`"
        count = project.run_sql(f"select count(*) from {relation}", fetch="one")[0]
        snapshots = project.run_sql(f"select count(*) from {relation}.snapshots", fetch="one")[0]
        assert count == 3
        assert snapshots >= 2
