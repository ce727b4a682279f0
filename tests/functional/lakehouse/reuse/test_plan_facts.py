"""reuse/plan_facts.py: the driver's one-call answer about an analysed plan gives a reuse
decision the same inputs, refusals, per-run expressions and digest as asking leaf by leaf
through py4j, every class the plan's JSON names, and each Iceberg input's metadata as the
analysis loaded it; on both paths the
digest leaves out the columns the result does not read (reuse/inputs.py pruned_plan)."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.engine.lifecycle import ENGINE
from dbt.adapters.lakehouse.mv.metadata import parse_metadata_json
from dbt.adapters.lakehouse.reuse import inputs, plan_facts

# The driver's classes are the engine's, whatever the storage; Connect has no driver here.
pytestmark = pytest.mark.only_profile("local")


def test_one_call_answers_as_py4j_leaf_by_leaf(project, tmp_path, monkeypatch):
    schema = f"`{project.database}`.`{project.test_schema}`"
    project.run_sql(f"create table {schema}.facts_a (id int, x string) using iceberg")
    project.run_sql(f"insert into {schema}.facts_a values (1, 'a'), (2, 'b')")
    project.run_sql(f"create table {schema}.facts_b (id int) using iceberg")
    project.run_sql(f"create table {schema}.facts_c (id int, x string) using iceberg")
    spark = ENGINE.active
    spark.range(3).write.parquet(str(tmp_path / "files"))
    queries = {
        "subquery": f"select * from {schema}.facts_a where id in (select id from {schema}.facts_b)",
        "values": f"select * from values (3, 'c') as v(id, x) union all "
        f"select id, x from {schema}.facts_a",
        "twice": f"select a.id from {schema}.facts_a a join {schema}.facts_a b on a.id = b.id",
        "random": f"select rand() as r, id from {schema}.facts_a",
        # A per-run expression is found wherever it sits: a subquery, a CTE, a lambda's body.
        "now_subquery": f"select id from {schema}.facts_a where id < (select count(*) "
        f"from {schema}.facts_b where current_timestamp() > '2020-01-01')",
        "date_cte": f"with d as (select current_date() as d, id from {schema}.facts_a) "
        "select id from d",
        "uuid_exists": f"select id from {schema}.facts_a "
        f"where exists (select uuid() from {schema}.facts_b)",
        "lambda_user": "select transform(array(id), v -> concat(v, current_user())) "
        f"from {schema}.facts_a",
        "files": f"select a.id from {schema}.facts_a a, parquet.`{tmp_path / 'files'}` f",
        # A column the result does not read (through a CTE too) is no part of the digest.
        **{
            f"{use}_{case}": f"with v as (select id, {case}(x) as y from {schema}.facts_a) "
            f"select {use} from v"
            for use in ("id", "y")
            for case in ("upper", "lower")
        },
        # Inlined, the two CTEs read alike but for their tables: which is joined first is told
        # by the pruned plan's own leaves.
        **{
            f"{first}_first": f"with a as (select * from {schema}.facts_a), "
            f"c as (select * from {schema}.facts_c) select * from {first} join {second} using (id)"
            for first, second in (("a", "c"), ("c", "a"))
        },
    }
    described = {name: inputs.plan_inputs(spark, sql) for name, sql in queries.items()}
    for name, sql in queries.items():
        # The classes the driver names (the plan's JSON is not made where it prunes the plan)
        # are every one that JSON names, subqueries' and lambdas' included.
        analyzed = spark.sql(sql)._jdf.queryExecution().analyzed()
        named = plan_facts.describe(spark, analyzed)
        json_names = set(inputs._classes_of(analyzed.toJSON()))
        assert named is not None and json_names <= named.classes, (name, json_names)
    facts = plan_facts.describe(
        spark, spark.sql(queries["values"])._jdf.queryExecution().analyzed()
    )
    assert facts is not None, "the describer did not compile"
    assert [f["kind"] for f in facts.leaves[0]] == ["LocalRelation", "DataSourceV2Relation"]

    monkeypatch.setattr(plan_facts, "describe", lambda spark, analyzed: None)
    for name, sql in queries.items():
        asked = inputs.plan_inputs(spark, sql)
        found = described[name]
        said = (found.tables, found.untracked, found.varying)
        assert said == (asked.tables, asked.untracked, asked.varying), name
        # rand() and uuid() take a new seed at each analysis: their plans, never reused,
        # digest apart.
        assert (found.digest == asked.digest) is (name not in ("random", "uuid_exists")), name
        assert asked.metadata == {}
        assert sorted(found.metadata) == sorted(str(t) for t in found.tables), name

    assert described["id_upper"].digest == described["id_lower"].digest
    assert described["y_upper"].digest != described["y_lower"].digest
    assert described["id_upper"].digest != described["y_upper"].digest
    assert described["a_first"].digest != described["c_first"].digest
    assert described["random"].varying == ("Rand",)
    assert described["now_subquery"].varying == ("CurrentTimestamp",)
    assert described["date_cte"].varying == ("CurrentDate",)
    assert described["uuid_exists"].varying == ("Uuid",)
    assert described["lambda_user"].varying == ("CurrentUser",)
    assert described["files"].untracked == ("reads files by path, or a file-based table",)
    assert [str(t).rsplit(".", 1)[1] for t in described["subquery"].tables] == [
        "facts_a",
        "facts_b",
    ]
    # The metadata is the table's own: its `main` is the insert's snapshot.
    table_a = next(t for t in described["twice"].tables if str(t).endswith("facts_a"))
    main = parse_metadata_json(described["twice"].metadata[str(table_a)]).main
    snapshot = project.run_sql(
        f"select snapshot_id from {schema}.facts_a.snapshots order by committed_at desc limit 1",
        fetch="one",
    )[0]
    assert main == snapshot
