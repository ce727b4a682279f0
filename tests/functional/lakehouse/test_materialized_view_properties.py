"""Which materialized views refresh incrementally, read from Spark's analyzed plan of their
query (mv/incremental.py, mv/aggregate.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.incremental import shape
from functional.lakehouse.tables import table

# Which queries refresh incrementally over appended rows (mv/incremental.py and aggregate.py),
# read from Spark's analyzed plan of each: (SQL over {t}, the kind, or a fragment of the reason
# it is rebuilt instead).
SHAPES = (
    ("select id, upper(k) as k from {t} where v > 1", "append"),
    (
        "select k, sum(v) as s, count(*) as n, count(v) as c, min(v) as lo, max(v) as hi "
        "from {t} where v > 0 group by k",
        "merge",
    ),
    ("select upper(k) as u, sum(v * 2) as s from {t} group by upper(k)", "merge"),
    ("select k from {t} group by k", "merge"),
    ("select k, avg(v) as a from {t} group by k", "average does not combine"),
    ("select k, count(distinct v) as c from {t} group by k", "(DISTINCT ...) does not combine"),
    ("select k, sum(v) filter (where v > 0) as s from {t} group by k", "FILTER does not"),
    ("select k, sum(v) + 1 as s from {t} group by k", "an expression over one"),
    ("select k, sum(cast(v as double)) as s from {t} group by k", "float or double"),
    ("select count(*) as n from {t}", "global aggregate"),
    ("select sum(v) as s from {t} group by k", "key is not among the columns"),
    ("select k, sum(v) as s from {t} group by k having sum(v) > 1", "not filters and proj"),
    ("select k, sum(v) as s from {t} where rand() > 0.5 group by k", "not over filters"),
    ("select k, count(*) as n from {t} group by rollup(k)", "does not combine"),
)


@pytest.mark.only_profile("local")
class TestMaterializedViewHistories:
    def test_1_shapes_from_the_analyzed_plan(self, project):
        name = table(project, "shapes")
        project.run_sql(f"create table {name} (id int, k string, v int) using iceberg")
        upstream = TableName(project.database, project.test_schema, "shapes")
        adapter = project.adapter
        with adapter.connection_named("__test"), adapter._spark_session("shapes") as spark:
            found = {sql: shape(spark, sql.format(t=name), upstream) for sql, _ in SHAPES}
        for sql, expected in SHAPES:
            got = found[sql]
            if expected in ("append", "merge"):
                assert not isinstance(got, str) and got[0] == expected, (sql, got)
            else:
                assert isinstance(got, str) and expected in got, (sql, got)
        kinds = [c.kind for c in found[SHAPES[1][0]][1]]
        assert kinds == ["key", "Sum", "Count", "Count", "Min", "Max"]
