"""Materialized views under random upstream histories: after every refresh each view holds
exactly its query's rows, and the refresh was the kind docs/materialized-views.md promises.
First, which queries those kinds apply to, read from Spark's analyzed plan.

Each seed of SEEDS drives one upstream table (a lane) through a fixed random sequence of steps;
a step is one or two operations (insert, update, delete, overwrite, a column added, or nothing)
and then one `dbt run` that refreshes every lane's views at once, so the whole test costs one
project and STEPS + 1 dbt invocations. Per lane, two views: filters and projections
(incremental `INSERT` after appends only) and a GROUP BY of sum / count / min / max (incremental
`MERGE` after appends only: by a MERGE statement in one lane, by a rewrite of the view in the
others); the first lane has three more: a GROUP BY with avg (never incremental: `REFRESH`),
an inner join with the second lane's table (`INSERT` when one side only appended and the other
did nothing), and a GROUP BY over that join (`MERGE` then). The kind observed is the node's
adapter_response code; the rows are compared with EXCEPT ALL both ways against the model's
compiled SQL run directly (a rebuild from scratch: first run, rerun and --full-refresh must all
agree with it)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.mv.incremental import shape
from functional.lakehouse.shared.tables import table

# Chosen (offline, once) so that between them the lanes do every operation, append twice in
# one step, and the first lane (the one with the avg view) appends, changes and does nothing.
SEEDS = (1, 2, 8)
STEPS = 5
OPERATIONS = ("insert", "insert", "insert", "update", "delete", "overwrite", "add_column", "none")

ROWS_SQL = """
{{{{ config(materialized='materialized_view') }}}}
select id, upper(k) as k, v * 2 as v2
from {{{{ source('raw', 'up_{seed}') }}}}
where v is null or v > 2
"""

AGGREGATE_SQL = """
{{{{ config(materialized='materialized_view', mv_regroup_max_bytes={regroup}) }}}}
select k, sum(v) as total, count(*) as n, count(v) as n_v, min(v) as lo, max(v) as hi
from {{{{ source('raw', 'up_{seed}') }}}}
where id % 5 <> 0
group by k
"""

AVERAGE_SQL = """
{{{{ config(materialized='materialized_view') }}}}
select k, avg(v) as mean from {{{{ source('raw', 'up_{seed}') }}}} group by k
"""

# An inner join of the first lane's upstream with the second's: both move at random, so the
# view sees one side append while the other stands still, and both move.
JOIN_SQL = """
{{{{ config(materialized='materialized_view') }}}}
select s.id, s.v, o.id as other_id, o.v as other_v
from {{{{ source('raw', 'up_{seed}') }}}} s
join {{{{ source('raw', 'up_{other}') }}}} o on s.k = o.k
where s.v is null or s.v > 0
"""

# How each lane's GROUP BY view folds appended groups in (mv/aggregate.py): the second lane's
# always by MERGE, the others' (small views) by rewriting the view regrouped.
REGROUP_MAX_BYTES = {1: "none", 2: "0", 8: "none"}

# A GROUP BY over the same join, keyed by the other lane's column.
AGGJOIN_SQL = """
{{{{ config(materialized='materialized_view') }}}}
select o.k, sum(s.v) as total, count(*) as n, min(o.v) as lo, max(s.v) as hi
from {{{{ source('raw', 'up_{seed}') }}}} s
join {{{{ source('raw', 'up_{other}') }}}} o on s.k = o.k
where s.id % 3 <> 0
group by o.k
"""

# The refresh each view's shape gets after appends only (docs/materialized-views.md).
AFTER_APPENDS = {
    "rows": "INSERT",
    "agg": "MERGE",
    "avg": "REFRESH",
    "join": "INSERT",
    "aggjoin": "MERGE",
}
# The shapes over two lanes: the first's and the second's.
TWO_LANES = ("join", "aggjoin")


def sources_yml() -> str:
    tables = "".join(f"      - name: up_{seed}\n" for seed in SEEDS)
    schema = '"{{ target.schema }}"'
    return f"sources:\n  - name: raw\n    schema: {schema}\n    tables:\n{tables}"


class Lane:
    """One upstream table and the random history a seed gives it."""

    def __init__(self, project, seed: int) -> None:
        self.project, self.seed = project, seed
        self.random = random.Random(seed)
        self.name = table(project, f"up_{seed}")
        self.next_id = 0
        self.columns = 0

    def values(self) -> str:
        keys = ("a", "b", "c", None)
        found = []
        for _ in range(self.random.randint(1, 3)):
            self.next_id += 1
            k = self.random.choice(keys)
            v = self.random.choice((None, *range(-2, 9)))
            # Spark 3.5 wants a value for every column named, the ones added since too.
            added = ", null" * self.columns
            found.append(
                f"({self.next_id}, {'null' if k is None else repr(k)}, "
                f"{'null' if v is None else v}{added})"
            )
        return ", ".join(found)

    def insert(self) -> None:
        added = "".join(f", c{n}" for n in range(1, self.columns + 1))
        self.project.run_sql(f"insert into {self.name} (id, k, v{added}) values {self.values()}")

    def head(self) -> int | None:
        self.project.run_sql(f"refresh table {self.name}")
        found = self.project.run_sql(
            f"select snapshot_id from {self.name}.refs where name = 'main'", fetch="one"
        )
        return None if found is None else int(found[0])

    def create(self) -> None:
        self.project.run_sql(f"create table {self.name} (id int, k string, v int) using iceberg")
        self.insert()

    def step(self) -> tuple[list[str], str]:
        """Apply one or two random operations: (their names, what the upstream did:
        `nothing`, `appended` (commits, every one an append) or `changed`)."""
        done: list[str] = []
        moved, other = False, False
        for _ in range(self.random.randint(1, 2)):
            operation = self.random.choice(OPERATIONS)
            done.append(operation)
            rewrites = operation in ("update", "delete", "overwrite")
            before = self.head() if rewrites else None
            r = self.random.randint(0, 3)
            if operation == "insert":
                self.insert()
            elif operation == "update":
                self.project.run_sql(f"update {self.name} set v = v + 1 where id % 4 = {r}")
            elif operation == "delete":
                self.project.run_sql(f"delete from {self.name} where id % 4 = {r}")
            elif operation == "overwrite":
                self.project.run_sql(
                    f"insert overwrite {self.name} select * from {self.name} where id % 3 <> {r}"
                )
            elif operation == "add_column":
                self.columns += 1
                self.project.run_sql(f"alter table {self.name} add column c{self.columns} int")
                other = True  # no commit, yet the schema changed
            if rewrites and self.head() != before:
                other = True  # a commit that is not an append (none when nothing matched)
            moved = moved or operation == "insert"
        if other:
            return done, "changed"
        return done, "appended" if moved else "nothing"


def view_names() -> list[str]:
    """Every lane's views: rows_<seed>, agg_<seed>; avg_<seed>, and join_<seed> and
    aggjoin_<seed> (with the second lane) on the first lane only."""
    first = [f"{kind}_{SEEDS[0]}" for kind in ("avg", *TWO_LANES)]
    return [f"{kind}_{seed}" for seed in SEEDS for kind in ("rows", "agg")] + first


def expected_code(shape: str, upstreams: list[str]) -> str:
    """What a view over `upstreams` (what each did in the step) refreshes with: incremental
    only when one appended and every other did nothing."""
    moved = [u for u in upstreams if u != "nothing"]
    if not moved:
        return "NO CHANGE"
    return AFTER_APPENDS[shape] if moved == ["appended"] else "REFRESH"


def mismatches(project, models: list[str]) -> dict[str, int]:
    """Per view, the rows in it and not in its query plus the reverse (EXCEPT ALL both
    ways), all in one statement."""
    compiled = Path(project.project_root, "target", "compiled")
    parts = []
    for model in models:
        query = next(compiled.rglob(f"{model}.sql")).read_text()
        view = table(project, model)
        project.run_sql(f"refresh table {view}")
        parts.append(
            f"select '{model}' as model, count(*) as n from ("
            f"(select * from {view} except all select * from ({query}) q) union all "
            f"(select * from ({query}) q except all select * from {view}))"
        )
    found = project.run_sql(" union all ".join(parts), fetch="all")
    return {str(r[0]): int(r[1]) for r in found}


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
    ("select k, sum(v) as s from {t} group by k having sum(v) > 1", "is not filters, proj"),
    # Inner joins with an upstream that did not move ({d}) are linear in {t}; other joins not.
    ("select s.id, d.label from {t} s join {d} d on s.k = d.k where s.v > 1", "append"),
    ("select s.id, d.label from {t} s left join {d} d on s.k = d.k", "is not filters, proj"),
    ("select a.id from {t} a join {t} b on a.id = b.id", "reading"),
    # A GROUP BY over such joins combines too; not over other joins.
    ("select d.label, sum(s.v) as n from {t} s join {d} d on s.k = d.k group by d.label", "merge"),
    (
        "select d.label, count(*) as n from {t} s left join {d} d on s.k = d.k group by d.label",
        "not over filters, projections and inner joins",
    ),
    ("select k, sum(v) as s from {t} where rand() > 0.5 group by k", "not over filters"),
    ("select k, count(*) as n from {t} group by rollup(k)", "does not combine"),
)


# On `local` only: which refresh a history calls for and the rows it leaves are the same on any
# catalog. What the REST catalog changes (each kind of refresh committing its record there) is
# test_materialized_views_rest.py's TestMaterializedViewOnRestCatalog, on `s3_rest`.
@pytest.mark.only_profile("local")
class TestMaterializedViewHistories:
    @pytest.fixture(scope="class")
    def models(self):
        shapes = {
            "rows": ROWS_SQL,
            "agg": AGGREGATE_SQL,
            "avg": AVERAGE_SQL,
            "join": JOIN_SQL,
            "aggjoin": AGGJOIN_SQL,
        }
        found = {"sources.yml": sources_yml()}
        for model in view_names():
            kind, seed = model.split("_")
            found[f"{model}.sql"] = shapes[kind].format(
                seed=seed, other=SEEDS[1], regroup=REGROUP_MAX_BYTES[int(seed)]
            )
        return found

    def test_1_shapes_from_the_analyzed_plan(self, project):
        name = table(project, "shapes")
        project.run_sql(f"create table {name} (id int, k string, v int) using iceberg")
        dims = table(project, "shape_dims")
        project.run_sql(f"create table {dims} (k string, label string) using iceberg")
        upstream = TableName(project.database, project.test_schema, "shapes")
        unchanged = {str(TableName(project.database, project.test_schema, "shape_dims"))}
        adapter = project.adapter
        with adapter.connection_named("__test"), adapter._spark_session("shapes") as spark:
            found = {
                sql: shape(spark, sql.format(t=name, d=dims), upstream, unchanged)
                for sql, _ in SHAPES
            }
        for sql, expected in SHAPES:
            got = found[sql]
            if expected in ("append", "merge"):
                assert not isinstance(got, str) and got[0] == expected, (sql, got)
            else:
                assert isinstance(got, str) and expected in got, (sql, got)
        kinds = [c.kind for c in found[SHAPES[1][0]][1]]
        assert kinds == ["key", "Sum", "Count", "Count", "Min", "Max"]

    def test_2_random_histories(self, project):
        lanes = [Lane(project, seed) for seed in SEEDS]
        for lane in lanes:
            lane.create()
        models = view_names()
        results = run_dbt(["run", "--threads", "4"])
        assert {r.adapter_response["code"] for r in results.results} == {"CREATE"}
        assert mismatches(project, models) == dict.fromkeys(models, 0)
        seen: set[str] = set()
        merged: set[str] = set()
        joined: list[str] = []
        grouped: list[str] = []
        for step in range(STEPS):
            history: dict[int, list[str]] = {}
            did: dict[int, str] = {}
            for lane in lanes:
                history[lane.seed], did[lane.seed] = lane.step()
            expected: dict[str, str] = {}
            for model in models:
                kind, seed = model.split("_")
                read = [int(seed), SEEDS[1]] if kind in TWO_LANES else [int(seed)]
                expected[model] = expected_code(kind, [did[lane] for lane in read])
            results = run_dbt(["run", "--threads", "4"])
            codes = {r.node.name: r.adapter_response["code"] for r in results.results}
            where = f"step {step}, operations per seed {history}"
            assert codes == expected, where
            assert mismatches(project, models) == dict.fromkeys(models, 0), where
            seen.update(codes.values())
            merged.update(name for name, code in codes.items() if code == "MERGE")
            joined.append(codes[f"join_{SEEDS[0]}"])
            grouped.append(codes[f"aggjoin_{SEEDS[0]}"])
        # The seeds are chosen so that every kind of refresh happens at least once, and the
        # join and the GROUP BY over it are refreshed both incrementally (one side appended)
        # and whole.
        assert seen == {"NO CHANGE", "INSERT", "MERGE", "REFRESH"}, seen
        assert {"INSERT", "REFRESH"} <= set(joined), joined
        assert {"MERGE", "REFRESH"} <= set(grouped), grouped
        # Both ways of folding groups in ran: a MERGE statement and a rewrite regrouped.
        by_merge = {f"agg_{seed}" for seed, limit in REGROUP_MAX_BYTES.items() if limit == "0"}
        assert by_merge & merged and merged - by_merge, merged
