"""What a Spark Connect reuse decision reads from an `EXPLAIN EXTENDED` text of its probe
(reuse/connect_inputs.py): the texts below are Spark 4.1.4's, trimmed to the parts read."""

from __future__ import annotations

from dbt.adapters.lakehouse.iceberg.table_name import TableName
from dbt.adapters.lakehouse.reuse.connect_inputs import inputs_of, probe, sql_text

QUERY = "select b.id, v.s from lakehouse.exp.b b join lakehouse.exp.vb v on b.id = v.id"
ANALYSED = """== Parsed Logical Plan ==
'WithCTE
== Analyzed Logical Plan ==
id: bigint, s: string, lakehouse_marker: int
WithCTE
:- CTERelationDef 0, false
:  +- SubqueryAlias lakehouse_probe
:     +- Project [id#1056L, s#1059, 1 AS lakehouse_marker#1051]
:        +- SubqueryAlias q
:           +- Project [id#1056L, s#1059]
:              +- Filter id#1056L IN (list#1050 [])
:                 :  +- Project [cast(id#1068 as bigint) AS id#1069L]
:                 :     +- SubqueryAlias tv
:                 :        +- View (`tv`, [id#1068])
:                 :           +- LocalRelation [id#1067]
:                 +- Join Inner, (id#1056L = id#1058L)
:                    :- SubqueryAlias lakehouse.exp.b
:                    :  +- RelationV2[id#1056L, s#1057] lakehouse.exp.b
:                    +- SubqueryAlias lakehouse.exp.vb
:                       +- Project [cast(id#1060L as bigint) AS id#1058L, s#1061 AS s#1059]
:                          +- Filter (id#1060L > cast(1 as bigint))
:                             +- RelationV2[id#1060L, s#1061] other.exp.c
+- Union false, false
   :- Project [id#1056L, s#1059, lakehouse_marker#1051]
   :  +- CTERelationRef 0, true, [id#1056L, s#1059, lakehouse_marker#1051], false, false
   +- Project [id#1075L, s#1076, lakehouse_marker#1077]
      +- CTERelationRef 0, true, [id#1075L, s#1076, lakehouse_marker#1077], false, false

== Optimized Logical Plan ==
{optimized}
== Physical Plan ==
AdaptiveSparkPlan isFinalPlan=false
"""
INLINED = """Union false, false
:- Project [id#1056L, s#1059, 1 AS lakehouse_marker#1051]
:  +- RelationV2[id#1056L, s#1057] lakehouse.exp.b
+- Project [id#1075L, s#1076, 1 AS lakehouse_marker#1077]
   +- RelationV2[id#1075L, s#1076] lakehouse.exp.b
"""
KEPT = """Union false, false
:- RepartitionByExpression
:  +- Project [id#1056L, rand(1) AS r#1059, 1 AS lakehouse_marker#1051]
:     +- RelationV2[id#1056L] lakehouse.exp.b
+- RepartitionByExpression
   +- Project [id#1056L, rand(1) AS r#1059, 1 AS lakehouse_marker#1051]
"""


def test_tables_of_mounted_catalogs_are_inputs_and_the_rest_says_why() -> None:
    found = inputs_of(ANALYSED.format(optimized=INLINED), QUERY, ["lakehouse"])
    assert found.tables == (TableName("lakehouse", "exp", "b"),)
    assert found.untracked == (
        "reads the temporary view tv",
        "reads rows a view holds in its text (VALUES)",
        "reads other.exp.c, which is not an Iceberg table of a mounted catalog",
    )
    assert found.varying == ()


def test_a_kept_cte_is_a_query_that_varies_and_per_run_functions_are_named() -> None:
    text = ANALYSED.format(optimized=KEPT)
    assert inputs_of(text, QUERY, ["lakehouse"]).varying == ("a non-deterministic expression",)
    timed = text.replace("1 AS lakehouse_marker#1051]", "current_timestamp() AS t#3]", 1)
    assert "current_timestamp" in inputs_of(timed, QUERY, ["lakehouse"]).varying


def test_the_digest_ignores_ids_and_follows_the_plan_and_the_sql() -> None:
    text = ANALYSED.format(optimized=INLINED)
    digest = inputs_of(text, QUERY, ["lakehouse"]).digest
    renumbered = text.replace("#1056L", "#7L").replace("CTERelationDef 0", "CTERelationDef 4")
    assert inputs_of(renumbered, QUERY, ["lakehouse"]).digest == digest
    # a view's new definition: the query's text is the same, its plan is not
    redefined = text.replace("> cast(1 as bigint)", "> cast(2 as bigint)")
    assert inputs_of(redefined, QUERY, ["lakehouse"]).digest != digest
    assert inputs_of(text, QUERY + " where b.id > 0", ["lakehouse"]).digest != digest
    # a comment or layout edit of the model is no change (its plan is the same)
    relaid = QUERY.replace(" join ", "\n  -- the views' rows\n  join ") + " /* edited */"
    assert inputs_of(text, relaid, ["lakehouse"]).digest == digest


def test_the_sql_keeps_literals_quoted_names_and_hints_and_drops_comments() -> None:
    assert sql_text("select 1--a comment\nfrom t  /* x */ ;") == "select 1 from t ;"
    kept = "select '-- text', 'a  /* b */', `we--ird` from t where x = 'a\n  b'"
    assert sql_text(kept) == kept
    hinted = "select /*+ REPARTITION(3) */ *\n\tfrom t"
    assert sql_text(hinted) == "select /*+ REPARTITION(3) */ * from t"
    # sqlparse's parser refuses over 10,000 tokens; its lexer reads on
    wide = "select " + ", ".join(f"c{i} -- {i}\n" for i in range(4000)) + " from t"
    assert sql_text(wide).endswith("c3999 from t") and "--" not in sql_text(wide)


def test_branches_cut_texts_and_unreadable_plans_are_not_trusted() -> None:
    text = ANALYSED.format(optimized=INLINED)
    branch = text.replace("] lakehouse.exp.b\n", "] lakehouse.exp.b.branch_audit\n", 1)
    assert (
        "reads lakehouse.exp.b.branch_audit, a branch or tag"
        in inputs_of(branch, QUERY, ["lakehouse"]).untracked
    )
    cut = text.replace("s#1059]\n", "s#1059, ... 30 more fields]\n", 1)
    assert inputs_of(cut, QUERY, ["lakehouse"]).untracked[0].startswith("its plan's text is cut")
    failed = inputs_of("[TABLE_OR_VIEW_NOT_FOUND] t cannot be found", QUERY, ["lakehouse"])
    assert failed.untracked == (
        "its plan could not be read ([TABLE_OR_VIEW_NOT_FOUND] t cannot be found)",
    )
    assert probe("select 1").startswith("with lakehouse_probe as (select *, 1 as lakehouse_marker")


VIEWS = """== Analyzed Logical Plan ==
id: int, lakehouse_marker: int
WithCTE
:- CTERelationDef 0, false
:  +- SubqueryAlias lakehouse_probe
:     +- Project [id#1, 1 AS lakehouse_marker#2]
:        +- SubqueryAlias q
:           +- Union false, false
:              :- SubqueryAlias v
:              :  +- LocalRelation [id#3]
:              +- SubqueryAlias lakehouse.exp.vv
:                 +- Project [cast(col1#4 as int) AS id#5]
:                    +- LocalRelation [col1#4]
+- Union false, false
   :- CTERelationRef 0, true, [id#1, lakehouse_marker#2], false, false
   +- CTERelationRef 0, true, [id#6, lakehouse_marker#7], false, false

== Optimized Logical Plan ==
LocalRelation [id#1, lakehouse_marker#2]
== Physical Plan ==
"""


def test_a_views_values_are_not_trusted_the_querys_own_are() -> None:
    # The query's own VALUES are in its SQL (the digest's); a view's are in neither the SQL nor
    # EXPLAIN's text (a LocalRelation prints no rows).
    found = inputs_of(VIEWS, "select * from values (1) v(id) union all select * from vv", ["c"])
    assert found.untracked == ("reads rows a view holds in its text (VALUES)",)
    own = VIEWS.replace("SubqueryAlias lakehouse.exp.vv", "SubqueryAlias w")
    assert inputs_of(own, "select 1", ["c"]).untracked == ()
    global_view = own.replace(
        ":              :  +- LocalRelation [id#3]",
        ":              :  +- View (`global_temp`.`g`, [id#3])\n"
        ":              :     +- Range (0, 1, step=1)",
    )
    assert inputs_of(global_view, "select 1", ["c"]).untracked == (
        "reads the temporary view global_temp.g",
    )


SCAN = (
    "+- BatchScan {table}[id#1056L] IcebergScan(table={table}, schemaId={schema}, "
    "snapshotId={snapshot}, branch={branch}, filters=, runtimeFilters=, groupedBy=) "
    "RuntimeFilters: []\n"
)


def _explained(*scans: tuple[str, str, str, str]) -> str:
    physical = "".join(
        SCAN.format(table=t, schema=schema, snapshot=snapshot, branch=branch)
        for t, schema, snapshot, branch in scans
    )
    return ANALYSED.format(optimized=INLINED) + physical


def test_the_scans_give_each_inputs_snapshot_and_current_schema() -> None:
    b = "lakehouse.exp.b"
    told = inputs_of(
        _explained((b, "3", "42", "null"), (b, "3", "42", "null")), QUERY, ["lakehouse"]
    )
    assert told.scanned == {b: (42, "3")}
    assert inputs_of(_explained((b, "0", "null", "null")), QUERY, ["lakehouse"]).scanned == {
        b: (None, "0")  # a table with no snapshot yet
    }
    for unsure in (
        ((b, "3", "42", "null"), (b, "3", "41", "null")),  # at two snapshots: its metadata says
        ((b, "3", "42", "audit_1"),),  # a branch's scan is not main's
        (("other.exp.c", "1", "7", "null"),),  # not an input of a mounted catalog
        (),  # pruned by the optimizer: not scanned
    ):
        assert inputs_of(_explained(*unsure), QUERY, ["lakehouse"]).scanned == {}


def test_own_table_read_beside_the_explain_and_unscanned_inputs_after() -> None:
    import threading

    from dbt.adapters.lakehouse.mv.metadata import SqlReader
    from dbt.adapters.lakehouse.reuse.connect_inputs import inputs_and_metadata

    threads: dict[str, str] = {}
    explained = {"text": ""}

    def head_and_log(sql: str) -> list[tuple]:
        return [(str(i), kind, "9", "1", "100", *[None] * 4)
                for i in range(sql.count("'main'")) for kind in ("main", "log")]  # fmt: skip

    class Frame:
        def __init__(self, sql: str) -> None:
            self.sql = sql

        def collect(self) -> list[tuple]:
            threads[self.sql.split(" ", 1)[0]] = threading.current_thread().name
            if self.sql.startswith("explain"):
                return [(explained["text"],)]
            return head_and_log(self.sql)

    class Spark:
        def sql(self, sql: str) -> Frame:
            return Frame(sql)

    own = [TableName("lakehouse", "exp", "own")]
    after: list[str] = []
    read = SqlReader(None, lambda sql: after.append(sql) or head_and_log(sql))
    explained["text"] = _explained()  # b not scanned: its metadata is read after the EXPLAIN
    found = inputs_and_metadata(Spark(), QUERY, ["lakehouse"], read, own)
    assert found.tables == (TableName("lakehouse", "exp", "b"),) and found.scanned == {}
    assert threads["explain"] != threads["select"]  # its own table read on a thread beside it
    assert len(after) == 1 and "`b`.refs" in after[0] and "`own`" not in after[0]
    assert read(TableName("lakehouse", "exp", "b")).main == 9 and "main" in vars(read(own[0]))

    after.clear()
    explained["text"] = _explained(("lakehouse.exp.b", "2", "42", "null"))
    read = SqlReader(None, lambda sql: after.append(sql) or head_and_log(sql))
    found = inputs_and_metadata(Spark(), QUERY, ["lakehouse"], read, [])
    assert found.scanned == {"lakehouse.exp.b": (42, "2")} and after == []  # nothing read
