"""What a reuse decision asks of an analysed plan, answered by the driver in one py4j call.

A decision needs, for the plan and each of its subqueries, whether Spark calls it deterministic
and what each leaf is (its class; a VALUES leaf's rows; a DSv2 leaf's catalog, namespace, name,
table class and branch), and each Iceberg input's metadata. Asked leaf by leaf through py4j that
was about fifteen round trips a table, and the metadata a second load of each table from its
catalog: 20-25 ms of a data test's 80 ms decision on the sample (bench/RESULTS.md). The class
below, compiled once per SparkContext with Janino (Spark's own compiler: the runtime has no
javac), answers all of it as one JSON text, the metadata taken from the very tables the
analysis loaded.

Where it cannot be compiled (another Spark or Iceberg whose classes differ), `describe` says
None and the caller asks through py4j as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.lakehouse.engine import runtime
from dbt.adapters.lakehouse.engine.runtime import PerContext

logger = AdapterLogger("Lakehouse")

_CLASS = "lakehouse.reuse.PlanFacts"
# The digest's plan is pruned only for plans of at most this many leaves (a stack of views
# doubling at each level has thousands: their pruning would cost what Spark's planning does),
# in at most this many rounds of the rules; the same on the py4j path (reuse/inputs.py).
MAX_PRUNED_LEAVES = 64
MAX_PRUNING_ROUNDS = 20
# Janino compiles Java 1.x-era source: no generics, no lambdas, no varargs calls.
_SOURCE = r"""
package lakehouse.reuse;

import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

public class PlanFacts {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
        new com.fasterxml.jackson.databind.ObjectMapper();

    public String describe(LogicalPlan analyzed) throws Exception {
        java.util.List plans = new java.util.ArrayList();
        plans.add(analyzed);
        scala.collection.Seq subqueries = analyzed.subqueriesAll();
        for (int i = 0; i < subqueries.size(); i++) {
            plans.add(subqueries.apply(i));
        }
        // A leaf read twice (a view over views) is described once: its text without ids.
        java.util.Map seen = new java.util.HashMap();
        java.util.List described = new java.util.ArrayList();
        int analyzedLeaves = 0;
        for (int p = 0; p < plans.size(); p++) {
            LogicalPlan plan = (LogicalPlan) plans.get(p);
            scala.collection.Seq leaves = plan.collectLeaves();
            if (p == 0) {
                analyzedLeaves = leaves.size();
            }
            java.util.List facts = new java.util.ArrayList();
            for (int i = 0; i < leaves.size(); i++) {
                LogicalPlan leaf = (LogicalPlan) leaves.apply(i);
                if (leaf instanceof LocalRelation) {
                    facts.add(leafFacts(leaf));
                    continue;
                }
                String key = leaf.toString().replaceAll("#\\d+L?", "#");
                Object known = seen.get(key);
                if (known == null) {
                    known = leafFacts(leaf);
                    seen.put(key, known);
                }
                facts.add(known);
            }
            java.util.Map one = new java.util.HashMap();
            one.put("deterministic", Boolean.valueOf(plan.deterministic()));
            one.put("leaves", facts);
            java.util.Map objects = new java.util.LinkedHashMap();
            int[] views = new int[1];
            resolved(plan, objects, views);
            one.put("objects", new java.util.ArrayList(objects.values()));
            one.put("views", Integer.valueOf(views[0]));
            java.util.Set classes = new java.util.TreeSet();
            classNames(plan, classes);
            one.put("classes", new java.util.ArrayList(classes));
            described.add(one);
        }
        // The plan the digest is taken from (reuse/inputs.py's `pruned_plan`): its leaves' texts
        // and its JSON, each on a line of its own after the facts'.
        String pruned = "";
        if (analyzedLeaves <= MAX_PRUNED_LEAVES) {
            try {
                LogicalPlan plan = prune(analyzed);
                pruned = JSON.writeValueAsString(leafTexts(plan)) + "\n" + plan.toJSON();
            } catch (Exception e) {
                pruned = "";
            }
        }
        return JSON.writeValueAsString(described) + "\n" + pruned;
    }

    // The catalog objects the analyzer resolved in a plan, tables and views alike, each under
    // the alias of its qualified name (catalog, namespace..., name); and how many View nodes it
    // holds (a temporary view, a session catalog's view), which name no catalog object here.
    private static void resolved(LogicalPlan plan, java.util.Map objects, int[] views) {
        if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias) {
            org.apache.spark.sql.catalyst.AliasIdentifier id =
                ((org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias) plan).identifier();
            scala.collection.Seq qualifier = id.qualifier();
            if (qualifier.size() > 0) {
                java.util.List parts = new java.util.ArrayList();
                for (int i = 0; i < qualifier.size(); i++) {
                    parts.add(qualifier.apply(i));
                }
                parts.add(id.name());
                objects.put(parts.toString(), parts);
            }
        }
        if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.View) {
            views[0]++;
        }
        scala.collection.Seq children = plan.children();
        for (int i = 0; i < children.size(); i++) {
            resolved((LogicalPlan) children.apply(i), objects, views);
        }
    }

    // The simple class names of the plan's nodes and of every expression in them, as its JSON
    // names them (`"class"` of each tree node): a subquery's plan is its own plan above.
    private static void classNames(LogicalPlan plan, java.util.Set names) {
        java.util.ArrayDeque todo = new java.util.ArrayDeque();
        todo.add(plan);
        while (!todo.isEmpty()) {
            org.apache.spark.sql.catalyst.trees.TreeNode node =
                (org.apache.spark.sql.catalyst.trees.TreeNode) todo.poll();
            names.add(node.getClass().getSimpleName());
            scala.collection.Seq children = node.children();
            for (int i = 0; i < children.size(); i++) {
                todo.add(children.apply(i));
            }
            if (node instanceof org.apache.spark.sql.catalyst.plans.QueryPlan) {
                scala.collection.Seq expressions =
                    ((org.apache.spark.sql.catalyst.plans.QueryPlan) node).expressions();
                for (int i = 0; i < expressions.size(); i++) {
                    todo.add(expressions.apply(i));
                }
            }
        }
    }

    // Each leaf of the plan and its subqueries, in plan order, as its text without expression
    // ids (a table's names it and its branch), a VALUES leaf's with its rows.
    private static java.util.List leafTexts(LogicalPlan plan) {
        java.util.List plans = new java.util.ArrayList();
        plans.add(plan);
        scala.collection.Seq subqueries = plan.subqueriesAll();
        for (int i = 0; i < subqueries.size(); i++) {
            plans.add(subqueries.apply(i));
        }
        java.util.List texts = new java.util.ArrayList();
        for (int p = 0; p < plans.size(); p++) {
            scala.collection.Seq leaves = ((LogicalPlan) plans.get(p)).collectLeaves();
            for (int i = 0; i < leaves.size(); i++) {
                LogicalPlan leaf = (LogicalPlan) leaves.apply(i);
                String text = leaf.toString().replaceAll("#\\d+L?", "#");
                if (leaf instanceof LocalRelation) {
                    text = text + "\n" + ((LocalRelation) leaf).data().mkString("\n");
                }
                texts.add(text);
            }
        }
        return texts;
    }

    public static final int MAX_PRUNED_LEAVES = %(max_leaves)d;

    public static LogicalPlan prune(LogicalPlan analyzed) throws Exception {
        // InlineCTE(alwaysInline[, keepDanglingRelations]): its arguments differ by release.
        java.lang.reflect.Constructor inline = Class.forName(
            "org.apache.spark.sql.catalyst.optimizer.InlineCTE").getConstructors()[0];
        Object[] flags = new Object[inline.getParameterTypes().length];
        for (int i = 0; i < flags.length; i++) {
            flags[i] = Boolean.valueOf(i == 0);
        }
        LogicalPlan plan = (LogicalPlan) ((org.apache.spark.sql.catalyst.rules.Rule)
            inline.newInstance(flags)).apply(analyzed);
        plan = (LogicalPlan) org.apache.spark.sql.catalyst.analysis.EliminateView$
            .MODULE$.apply(plan);
        plan = (LogicalPlan) org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases$
            .MODULE$.apply(plan);
        for (int i = 0; i < %(max_rounds)d; i++) {
            LogicalPlan next = (LogicalPlan) org.apache.spark.sql.catalyst.optimizer
                .RemoveNoopOperators$.MODULE$.apply(
                    (LogicalPlan) org.apache.spark.sql.catalyst.optimizer.ColumnPruning$
                        .MODULE$.apply(plan));
            if (next.fastEquals(plan)) {
                return next;
            }
            plan = next;
        }
        return plan;
    }

    private static java.util.Map leafFacts(LogicalPlan leaf) {
        java.util.Map facts = new java.util.HashMap();
        facts.put("kind", leaf.getClass().getSimpleName());
        if (leaf instanceof LocalRelation) {
            facts.put("data", ((LocalRelation) leaf).data().mkString("\n"));
        }
        if (!(leaf instanceof DataSourceV2Relation)) {
            return facts;
        }
        DataSourceV2Relation relation = (DataSourceV2Relation) leaf;
        Table table = relation.table();
        facts.put("table", table.name());
        facts.put("table_class", table.getClass().getName());
        if (relation.identifier().isEmpty() || relation.catalog().isEmpty()) {
            return facts;
        }
        Identifier ident = (Identifier) relation.identifier().get();
        String[] parts = ident.namespace();
        StringBuilder namespace = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                namespace.append('.');
            }
            namespace.append(parts[i]);
        }
        facts.put("catalog", ((CatalogPlugin) relation.catalog().get()).name());
        facts.put("namespace", namespace.toString());
        facts.put("name", ident.name());
        if (table instanceof SparkTable) {
            SparkTable iceberg = (SparkTable) table;
            facts.put("branch", iceberg.branch());
            org.apache.iceberg.Table loaded = iceberg.table();
            if (loaded instanceof HasTableOperations) {
                facts.put("metadata", TableMetadataParser.toJson(
                    ((HasTableOperations) loaded).operations().current()));
            }
        }
        return facts;
    }
}
"""


@dataclass(frozen=True)
class PlanFacts:
    """Each plan's (the query's, then its subqueries') deterministic flag and leaves' facts;
    the query's plan as its digest takes it (reuse/inputs.py's `pruned_plan`): its leaves'
    texts and its JSON, or None where the digest takes the analysed plan."""

    deterministic: tuple[bool, ...]
    leaves: tuple[tuple[dict[str, Any], ...], ...]
    pruned: tuple[list[str], str] | None = None
    # The catalog objects every plan resolved, by qualified name (catalog, namespace..., name),
    # and the View nodes they hold (reuse/memo.py remembers a decision only without any).
    objects: tuple[tuple[str, ...], ...] = ()
    views: int = 0
    # The simple class names of every plan's nodes and expressions (what the plan's JSON names)
    classes: frozenset[str] = frozenset()


_DESCRIBERS: PerContext[Any] = PerContext()


def describe(spark: Any, analyzed: Any) -> PlanFacts | None:
    """The facts of an analysed plan (a py4j LogicalPlan), or None where the describer cannot
    be compiled here."""
    describer = _DESCRIBERS.get(spark.sparkContext, lambda: _compile(spark))
    if describer is None:
        return None
    described, _, pruned = str(describer.describe(analyzed)).partition("\n")
    plans = json.loads(described)
    leaf_texts, _, document = pruned.partition("\n")
    objects = {tuple(map(str, parts)): None for p in plans for parts in p["objects"]}
    return PlanFacts(
        tuple(bool(p["deterministic"]) for p in plans),
        tuple(tuple(p["leaves"]) for p in plans),
        (json.loads(leaf_texts), document) if document else None,
        tuple(objects),
        sum(int(p["views"]) for p in plans),
        frozenset(str(name) for p in plans for name in p["classes"]),
    )


def _compile(spark: Any) -> Any:
    jvm = runtime.driver_jvm(spark, "reuse decisions", "")
    try:
        source = _SOURCE % {"max_leaves": MAX_PRUNED_LEAVES, "max_rounds": MAX_PRUNING_ROUNDS}
        return runtime.compile_java(jvm, source, _CLASS)
    except Exception as exc:  # another Spark or Iceberg: leaf by leaf through py4j instead
        logger.debug(f"plan facts are asked leaf by leaf: the describer did not compile: {exc}")
        return None
